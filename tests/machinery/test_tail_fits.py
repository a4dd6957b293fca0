"""The tail-fitted failure chances (rec11_tools.tails) on values drawn here: the method does not
underestimate known lognormal, normal and half-normal tails, a claim far from its threshold gets
a small chance and one near it a large one, claims in decades are found in a page's code, and
the book's bound is below its point estimate. (The method validated on claims of this book
whose failure rate can be simulated: tests/unit/test_tails.py.)
"""

import numpy as np
import pytest

from rec11_tools import tails


def test_a_normal_claim_far_from_its_threshold_gets_a_small_chance_and_near_it_a_large_one():
    rng = np.random.default_rng(0)
    values = rng.normal(10.0, 1.0, 30)
    far, _, _ = tails.fail_chance(values, 3.0, ">")
    near, _, _ = tails.fail_chance(values, 9.0, ">")
    assert far < 1e-4 < 0.05 < near < 0.5


@pytest.mark.parametrize("draw, threshold, op", [
    (lambda k, rng: np.exp(rng.normal(-6.0, 1.0, k)), 0.05, "<"),  # a long right tail
    (lambda k, rng: rng.normal(10.0, 1.0, k), 7.0, ">"),  # a normal, 3 sd away
    (lambda k, rng: np.abs(rng.normal(0.0, 0.01, k)), 0.035, "<"),  # near zero
], ids=["lognormal", "normal", "halfnormal"])
def test_the_method_does_not_underestimate_known_tails(draw, threshold, op):
    found = tails.validate(draw, threshold, op, decades=False, subsets=60, draws=500_000)
    assert found["median"] >= found["truth"] > 0, found


def test_claims_in_decades_are_found_in_the_page_code():
    text = ("```{code-cell} ipython3\n"
            "claim(math.log10(x), '>', -2, \"p.md: 'in decades'\")\n"
            "claim(y, '<', 0.1, \"p.md: 'plain'\")\n```\n")
    assert tails.decade_claims(text) == {"p.md: 'in decades'"}


def test_the_book_bound_is_below_its_point_estimate_and_both_are_chances():
    rng = np.random.default_rng(2)
    claims = [(rng.normal(5, 1, 30), 1.0, ">", False), (np.exp(rng.normal(-5, 1, 30)), 0.01, "<", False)]
    out = tails.book_pass(claims)
    assert 0 < out["lower"] <= out["point"] <= 1
