"""Claims whose failure rate over fresh seeds can be computed, not estimated.

A claim whose value comes from random draws alone, with no trained model, fails a fresh seed
with a chance that millions of draws measure directly. For those, ROBUSTNESS.md uses that rate
(its 95 % upper bound) in place of a tail fitted to 30 values: the fit, which must allow for
any tail, put three-details.md's softmax-axis claim at about 1 in 100, where two million draws
show about 3 in 100,000.

Each entry names the page lines its simulation models. If the page's code changes, the
report stops and says which entry to update (``check``); tests/unit/test_tails.py checks the
fitted method against the same simulations, and tests/unit/test_simulable.py checks each
simulation against the page's own code.

    from rec11_tools import simulable
    simulable.rate("book/three-details.md", message, root)   # (failures, draws, upper bound)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

T, D_K = 6, 8  # three-details.md's sizes
DRAWS = 2_000_000
BATCH = 250_000


def torch_generator(rng: np.random.Generator):
    """A torch generator seeded from ``rng``: the simulations draw with torch, as the pages do."""
    import torch

    return torch.Generator().manual_seed(int(rng.integers(2**31)))


def rows_off(k: int, rng: np.random.Generator) -> np.ndarray:
    """three-details.md 'rows that do not sum to 1': log10 of the largest |row sum - 1| of a
    softmax over the queries (dim=0) of random (T, d_k) queries and keys."""
    import torch

    g, out = torch_generator(rng), []
    for start in range(0, k, BATCH):
        m = min(BATCH, k - start)
        Q, K = (torch.randn(m, T, D_K, generator=g, dtype=torch.float64) for _ in range(2))
        A = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(D_K), dim=1)  # (m, T, T): over queries
        out.append((A.sum(-1) - 1).abs().amax(-1))  # (m,): the row furthest from 1
    return torch.log10(torch.cat(out)).numpy()


@dataclass(frozen=True)
class Simulable:
    simulate: object  # simulate(k, rng) -> k values of the claim, as the page computes it
    threshold: float
    op: str
    code: tuple[str, ...]  # the page's lines the simulation models, verbatim


CLAIMS = {
    ("book/three-details.md", "three-details.md: 'rows that do not sum to 1' (softmax-axis)"): Simulable(
        rows_off, math.log10(0.05), ">",
        ("T, d_k = 6, 8",
         "Q, K = torch.randn(T, d_k), torch.randn(T, d_k)",
         "scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)   # (T, T)",
         "A_wrong = torch.softmax(scores, dim=0)   # across queries: runs just as well",
         "sums_wrong = A_wrong.sum(dim=-1)",
         "off = (sums_wrong - 1).abs().max().item()  # the row furthest from 1",
         "claim(math.log10(off), \">\", math.log10(0.05),  # in decades: a skewed size")),
}


def check(page: str, root: Path) -> None:
    """Stop if a simulated claim's page no longer has the code its simulation models."""
    for (where, message), entry in CLAIMS.items():
        if where != page:
            continue
        lines = {line.strip() for line in (root / page).read_text().splitlines()}
        gone = [line for line in entry.code if line not in lines]
        if gone:
            raise SystemExit(f"rec11_tools.simulable: {page} no longer has the code the simulation of "
                             f"{message!r} models: {gone[0]!r}. Fix: update that entry of CLAIMS in "
                             f"src/rec11_tools/simulable.py to the page's code, or remove it")


@functools.cache
def _failures(page: str, message: str, draws: int) -> int:
    entry = CLAIMS[(page, message)]
    x = entry.simulate(draws, np.random.default_rng(0))
    return int(np.sum(x <= entry.threshold) if entry.op in (">", ">=") else np.sum(x >= entry.threshold))


def upper_bound(failures: int, draws: int) -> float:
    """The one-sided 95 % Clopper-Pearson upper bound of a rate seen as failures in draws."""
    from scipy.stats import beta

    return 1.0 if failures >= draws else float(beta.ppf(0.95, failures + 1, draws - failures))


def rate(page: str, message: str, root: Path, draws: int = DRAWS) -> tuple[int, int, float] | None:
    """(failures, draws, 95 % upper bound of the failure rate) for a simulated claim, else None."""
    if (page, message) not in CLAIMS:
        return None
    check(page, root)
    failures = _failures(page, message, draws)
    return failures, draws, upper_bound(failures, draws)
