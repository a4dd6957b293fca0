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


def test_a_normal_claims_chance_is_students_t_predictive():
    from scipy import stats

    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 1.0, 30)
    c = x.mean() + 2.5 * x.std(ddof=1)
    found = tails.fit("normal", x, c, "<", np.random.default_rng(0))
    exact = stats.t.sf((c - x.mean()) / (x.std(ddof=1) * np.sqrt(1 + 1 / 30)), 29)
    plug_in = stats.norm.sf((c - x.mean()) / x.std())
    assert abs(found.fail - exact) < 0.25 * exact, (found.fail, exact)
    assert found.fail > plug_in * 1.2, "the parameters' spread must widen the tail beyond the plug-in fit's"


@pytest.mark.parametrize("draw", [
    lambda k, rng: np.exp(rng.normal(-3.0, 1.0, k)),
    lambda k, rng: rng.normal(10.0, 1.0, k),
    lambda k, rng: rng.gamma(2.0, 1.0, k),
], ids=["lognormal", "normal", "gamma"])
def test_at_the_edge_of_the_data_the_method_foresees_nearly_what_exchangeability_gives(draw):
    """The chance that one more value lies beyond the largest of n is 1/(n + 1) for any
    distribution; the method, given the n values, should not say much less (the plain
    bootstrap said 0.66 of it for lognormal values)."""
    rng = np.random.default_rng(5)
    chances = []
    for s in range(80):
        x = draw(27, rng)
        chances.append(tails.fail_chance(x, x.max(), "<", seed=s)[0])
    assert np.mean(chances) > 0.8 / 28, np.mean(chances)


def test_the_edge_check_counts_what_exchangeable_values_give_and_its_factor_lifts_the_chances():
    rng = np.random.default_rng(6)
    claims = [(np.exp(rng.normal(-3.0, 1.0, 20)), "<", False) for _ in range(6)]
    claims += [(rng.normal(5.0, 1.0, 20), ">", False), (np.ones(20), ">", False), (rng.normal(0, 1, 5), "<", False)]
    edge = tails.edge_check(claims)
    assert edge["upper"]["claims"] == 6 and edge["lower"]["claims"] == 1  # too few values, or none that vary: left out
    assert edge["upper"]["exchangeable"] == pytest.approx(6.0) and edge["lower"]["exchangeable"] == pytest.approx(1.0)
    assert edge["upper"]["factor"] >= 1 and edge["lower"]["factor"] >= 1
    values, threshold = claims[0][0], 0.5
    plain = tails.book_pass([(values, threshold, "<", False)])
    lifted = tails.book_pass([(values, threshold, "<", False)], calibration={"upper": {"factor": 2.0}})
    assert lifted["per_claim"][0][0] == pytest.approx(min(1.0, 2 * plain["per_claim"][0][0]))
    assert lifted["point"] <= plain["point"]
