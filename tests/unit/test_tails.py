"""The tail-fitted failure chances do not underestimate where the truth can be simulated.

Two claims of three-details.md needed no training: their values came from random queries,
keys and values alone, so their failure rate over fresh seeds can be computed from two
million draws (half a million here, to keep the test quick). One is on the page today; the
other ("position 0 depends on a later token", held above 10**-3 while the page printed it
to three decimals) became an exact check when the page began printing two significant
figures, and stays here as a known tail to validate against. The method, given 30 values at
a time as a page's claims are, must not underestimate them: its median estimate over 60 such
sets is at least the truth. (The method on tails drawn from known distributions, and its other
parts: tests/machinery/test_tail_fits.py.)
"""

import math

import pytest
import torch

from rec11_tools import tails
from rec11_tools.simulable import rows_off, torch_generator

T, D_K = 6, 8  # three-details.md's sizes


def moved(k, rng):
    """three-details.md 'with dim=0, position 0 depends on a later token', as the claim stood
    until 2026-12-05: log10 of how far position 0's output moves when the last query is
    aimed at key 0 (held above -3)."""
    g, out = torch_generator(rng), []
    mask = torch.tril(torch.ones(T, T))
    for start in range(0, k, 250_000):
        m = min(250_000, k - start)
        Q, K, V = (torch.randn(m, T, D_K, generator=g) for _ in range(3))

        def first(q):  # called in this iteration, so K and V are this batch's
            scores = (q @ K.transpose(-2, -1) / math.sqrt(D_K)).masked_fill(mask == 0, -math.inf)  # noqa: B023
            return (torch.softmax(scores, dim=1) @ V)[:, 0]  # noqa: B023 - (m, d_k) position 0's output
        changed = Q.clone()
        changed[:, -1] = 2 * K[:, 0]
        out.append((first(changed) - first(Q)).abs().amax(-1))
    return torch.log10(torch.cat(out).double()).numpy()


@pytest.mark.parametrize("simulate, threshold", [(rows_off, math.log10(0.05)), (moved, -3.0)],
                         ids=["rows-off", "moved"])
def test_the_method_does_not_underestimate_a_claim_it_can_be_checked_on(simulate, threshold):
    found = tails.validate(simulate, threshold, ">", decades=True, subsets=60, draws=500_000)
    assert found["truth"] > 0, "half a million draws show the failure"
    assert found["median"] >= found["truth"], found
