"""Each claim's chance to fail a fresh retraining, from its values in n retrainings, by a
fitted tail; and the whole book's pass chance with a lower bound.

A claim has held ``value op threshold`` in every retraining so far. What matters is how
often it would fail in the next one, and 30 values say that only through a model of their
tail. The old estimate took every claim's values as normal; values of small positive
quantities have long tails, so it was too hopeful. Here, per claim:

- **The natural scale.** A claim stated in decades (``claim(math.log10(x), ...)``) is read
  back to x = 10**value, so that "normal" means normal in x (and "lognormal" in x is the
  old normal in decades).
- **A family chosen per claim** by AIC on that scale, among those the values allow:
  normal; and, for positive quantities, lognormal, Weibull (a power-law tail towards 0)
  and half-normal (a quantity near zero).
- **No single family trusted.** Two readings, and the larger is taken: the families'
  failure chances averaged with their Akaike weights, exp(-(AIC - best AIC) / 2)
  normalised (a family that fits worse but has a heavier tail still counts, in proportion
  to how plausible it is); and the largest chance among the families within 2 of the best
  AIC. Either alone underestimated one of the tails the tests simulate; together none.
- **The uncertainty of n samples.** A family's failure chance is its predictive one: the
  mean chance over draws of its parameters given the values (``posterior``: exact for the
  normal, lognormal and half-normal, a reflected parametric bootstrap for the Weibull). With
  30 values the spread of the parameters widens the tail, as Student's t widens a normal's.
  (Plain bootstrap refits, used before 2026-12-05, sat around the fit and kept its bias: at
  the edge of the data they foresaw about 85 % of the values a held-out retraining put there.)

The book's pass chance is the product of each claim's chance to hold (claims taken as
independent; claims that measure the same quantity, one value in every retraining, count
once). Its 95 % lower bound is the 5th percentile of that product over the same parameter
draws. ``validate`` checks the method against claims whose failure rate can be
simulated exactly (tests/unit/test_tails.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

REFITS = 400  # draws of the parameters per family and claim
AIC_SLACK = 2.0  # families this close to the best AIC count as fitting as well


def natural(values, threshold: float, decades: bool):
    """(values, threshold) on the quantity's own scale."""
    v = np.asarray(values, dtype=float)
    return (10.0 ** v, 10.0 ** threshold) if decades else (v, float(threshold))


def _phi(z):
    return 0.5 * special.erfc(-np.asarray(z) / math.sqrt(2))  # the normal CDF


# --- the families: fit (vectorised over rows of samples), log-likelihood, draw, chance below c

def _fit(family: str, x: np.ndarray) -> tuple:
    """Maximum-likelihood parameters for each row of ``x`` (shape (B, n))."""
    if family == "normal":
        return x.mean(1), x.std(1)
    if family == "lognormal":
        y = np.log(x)
        return y.mean(1), y.std(1)
    if family == "halfnormal":
        return (np.sqrt((x ** 2).mean(1)),)
    return _weibull_fit(x)


def _weibull_fit(x: np.ndarray, steps: int = 30) -> tuple:
    """(shape k, scale lam) per row, by Newton's method on the profile equation for k."""
    y = np.log(x)
    k = 1.2 / np.maximum(y.std(1), 1e-12)  # the moment estimate's order of magnitude
    for _ in range(steps):
        w = np.exp(k[:, None] * (y - y.max(1, keepdims=True)))  # x^k, rescaled: no overflow
        s0, s1, s2 = w.sum(1), (w * y).sum(1), (w * y * y).sum(1)
        g = 1 / k + y.mean(1) - s1 / s0
        dg = -1 / k ** 2 - (s2 / s0 - (s1 / s0) ** 2)
        k = np.clip(k - g / dg, 1e-3, 1e4)
    lam = np.exp(y.max(1) + np.log((np.exp(k[:, None] * (y - y.max(1, keepdims=True)))).mean(1)) / k)
    return k, lam


def _loglik(family: str, x: np.ndarray, params: tuple) -> float:
    x = x[None, :]
    if family == "normal":
        mu, sd = (p[:, None] for p in params)
        z = (x - mu) / sd
        out = -0.5 * z ** 2 - np.log(sd) - 0.5 * math.log(2 * math.pi)
    elif family == "lognormal":
        mu, sd = (p[:, None] for p in params)
        y = np.log(x)
        z = (y - mu) / sd
        out = -0.5 * z ** 2 - np.log(sd) - 0.5 * math.log(2 * math.pi) - y
    elif family == "halfnormal":
        sd = params[0][:, None]
        out = -0.5 * (x / sd) ** 2 - np.log(sd) + 0.5 * math.log(2 / math.pi)
    else:
        k, lam = (p[:, None] for p in params)
        out = np.log(k / lam) + (k - 1) * np.log(x / lam) - (x / lam) ** k
    return float(out.sum())


def _draw(family: str, params: tuple, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    if family == "normal":
        return rng.normal(params[0], params[1], shape)
    if family == "lognormal":
        return np.exp(rng.normal(params[0], params[1], shape))
    if family == "halfnormal":
        return np.abs(rng.normal(0.0, params[0], shape))
    k, lam = params
    return lam * rng.weibull(k, shape)


def _below(family: str, params: tuple, c: float) -> np.ndarray:
    """The chance each fitted curve puts below ``c``."""
    if family == "normal":
        mu, sd = params
        return _phi((c - mu) / np.maximum(sd, 1e-300))
    if family == "lognormal":
        mu, sd = params
        return _phi((math.log(c) - mu) / np.maximum(sd, 1e-300))
    if family == "halfnormal":
        return 2 * _phi(c / np.maximum(params[0], 1e-300)) - 1
    k, lam = params
    return -np.expm1(-np.exp(np.minimum(k * np.log(c / lam), 700.0)))  # (c/lam)^k, no overflow


def allowed(x: np.ndarray, c: float) -> list[str]:
    """The families these values can come from."""
    out = ["normal"] if x.std() > 0 else []
    if np.all(x > 0) and c > 0 and np.log(x).std() > 0:
        out += ["lognormal", "weibull", "halfnormal"]
    return out


@dataclass
class Fit:
    family: str
    aic: float
    fail: float  # predictive chance that one more value fails the claim
    refits: np.ndarray  # (REFITS,) the failure chance under each draw of the family's parameters


def posterior(family: str, x: np.ndarray, rng: np.random.Generator) -> tuple:
    """REFITS draws of the family's parameters given the values ``x``: what the parameters
    could be, so that the mean chance over them is the predictive one.

    Exact for the families that allow it, under the usual non-informative (Jeffreys) prior:
    a normal's variance is (n - 1) s^2 / chi^2(n - 1) and its mean x-bar + N(0, variance / n),
    whose predictive is Student's t; the lognormal the same on log x; a half-normal's
    variance sum(x^2) / chi^2(n). For the Weibull, which has no such form, the parametric
    bootstrap reflected about the fit (each refit's log-parameter mirrored through the fit's):
    refits alone sit around the fit, biased as the fit is, and gave a chance too small.
    """
    n = len(x)
    if family in ("normal", "lognormal"):
        y = x if family == "normal" else np.log(x)
        var = (n - 1) * y.var(ddof=1) / rng.chisquare(n - 1, REFITS)
        return y.mean() + np.sqrt(var / n) * rng.standard_normal(REFITS), np.sqrt(var)
    if family == "halfnormal":
        return (np.sqrt((x ** 2).sum() / rng.chisquare(n, REFITS)),)
    k, lam = (p[0] for p in _fit(family, x[None, :]))
    k_star, lam_star = _fit(family, _draw(family, (k, lam), (REFITS, n), rng))
    return np.exp(2 * np.log(k) - np.log(k_star)), np.exp(2 * np.log(lam) - np.log(lam_star))


def fit(family: str, x: np.ndarray, c: float, op: str, rng: np.random.Generator) -> Fit:
    params = tuple(np.atleast_1d(p) for p in _fit(family, x[None, :]))
    aic = 2 * len(params) - 2 * _loglik(family, x, params)
    below = _below(family, posterior(family, x, rng), c)
    refits = below if op in (">", ">=") else 1 - below  # a ">" claim fails below its threshold
    refits = np.nan_to_num(refits, nan=1.0)
    return Fit(family, aic, float(refits.mean()), refits)


def fail_chance(values, threshold: float, op: str, decades: bool = False,
                seed: int = 0) -> tuple[float, str, np.ndarray | None]:
    """(chance that one fresh retraining fails the claim, the family that says so, or
    "averaged", and the chances under each parameter draw behind it, for the book's lower bound)."""
    x, c = natural(values, threshold, decades)
    families = allowed(x, c)
    if not families:  # every value the same: it never moved
        holds = bool(np.all(x > c) if op in (">", ">=") else np.all(x < c))
        return (0.0 if holds else 1.0), "constant", None
    rng = np.random.default_rng(seed)
    found = [fit(f, x, c, op, rng) for f in families]
    best = min(f.aic for f in found)
    weights = np.array([math.exp(-(f.aic - best) / 2) for f in found])
    weights /= weights.sum()  # Akaike weights: each family's plausibility given the values
    averaged = sum(w * f.refits for w, f in zip(weights, found))
    heaviest = max((f for f in found if f.aic <= best + AIC_SLACK), key=lambda f: f.fail)
    if heaviest.fail >= float(averaged.mean()):
        return heaviest.fail, heaviest.family, heaviest.refits
    return float(averaged.mean()), "averaged", averaged


def failures(values, threshold: float, op: str) -> int:
    """How many of the recorded values are on the wrong side of the threshold."""
    x = np.asarray(values, dtype=float)
    held = {"<": x < threshold, "<=": x <= threshold, ">": x > threshold, ">=": x >= threshold}[op]
    return int((~held).sum())


def observed(failed: int, runs: int, seed: int = 0) -> tuple[float, str, np.ndarray]:
    """A claim that has failed: its chance from the counts alone, ``failed / runs``, with the
    spread of Beta(failed + 1, runs - failed + 1) (a uniform prior) for the bound. A tail fitted
    to values an observed failure contradicts is not evidence (one failure in 41 retrainings sat
    at 4.9 standard deviations, where a fitted tail gave 6e-8)."""
    rng = np.random.default_rng(seed)
    return failed / runs, "observed", rng.beta(failed + 1, runs - failed + 1, REFITS)


EDGE_LEAST = 12  # values a claim needs to take part in the edge check
EDGE_HELD = 40  # values held out per claim, at most (each in turn)


def side(op: str) -> str:
    """Which tail a claim fails in: "lower" for a ">" claim, "upper" for a "<" one."""
    return "lower" if op in (">", ">=") else "upper"


def edge_check(claims: list[tuple], seed: int = 0) -> dict:
    """The method checked where the data can check it: at their edge, held out.

    ``claims``: (values, op, decades) per measured claim. For each claim with at least
    ``EDGE_LEAST`` values that vary, each of up to ``EDGE_HELD`` of its values is held out in
    turn, and the method, given the others, gives the chance that a new value lies beyond the
    worst of them (``fail_chance`` with that worst value as the threshold). If retrainings are
    exchangeable, the held-out value is the most extreme of all n with chance 1/n, whatever
    their distribution. Per side of the claims: the chances summed ("predicted"), the 1/n
    summed ("exchangeable"), the held-out values that were beyond ("observed"), and
    ``factor`` = max(1, exchangeable / predicted), what the method's chances are multiplied by
    so that at the edge they are not too small.
    """
    rng = np.random.default_rng(seed)
    out = {name: {"predicted": 0.0, "exchangeable": 0.0, "observed": 0, "claims": 0} for name in ("lower", "upper")}
    for i, (values, op, decades) in enumerate(claims):
        v = np.asarray(values, dtype=float)
        if len(v) < EDGE_LEAST or np.ptp(v) == 0:
            continue
        tally = out[side(op)]
        tally["claims"] += 1
        for j in rng.permutation(len(v))[:EDGE_HELD]:
            rest = np.delete(v, j)
            worst = rest.min() if side(op) == "lower" else rest.max()
            tally["predicted"] += fail_chance(rest, worst, op, decades, seed=i)[0]
            tally["exchangeable"] += 1 / len(v)
            tally["observed"] += int(v[j] < worst if side(op) == "lower" else v[j] > worst)
    for tally in out.values():
        tally["factor"] = max(1.0, tally["exchangeable"] / tally["predicted"]) if tally["predicted"] else 1.0
    return out


def book_pass(claims: list[tuple], same: list[int] | None = None, counted: list[tuple[int, int]] = (),
              calibration: dict | None = None) -> dict:
    """The chance that a fresh retraining passes every claim, with a 95 % lower bound.

    ``claims``: (values, threshold, op, decades) per measured claim, or (values, threshold,
    op, decades, known), where ``known`` is a failure rate computed by simulation (an upper
    bound, ``rec11_tools.simulable``) that replaces the fit. A claim whose values include a
    failure gets its chance from the counts (:func:`observed`), as does each of ``counted``,
    (failures, runs) of a claim with no value (a bare assert). ``same[i]`` is the first claim
    that measures the same quantity as claim ``i`` (``i`` itself when none does): such claims
    fail together, so they count once, with the largest chance among them. ``calibration``: an
    ``edge_check`` result, whose factor per side multiplies each fitted chance. Returns the
    point estimate, the lower bound and, per claim in the order given, (chance, family).
    """
    same = list(range(len(claims))) if same is None else same
    per_claim, draws = [], []
    for i, (values, threshold, op, decades, *known) in enumerate(claims):
        failed = failures(values, threshold, op)
        if known and known[0] is not None:
            chance, family, refits = known[0], "simulated", None
        elif failed:
            chance, family, refits = observed(failed, len(values), seed=i)
        else:
            chance, family, refits = fail_chance(values, threshold, op, decades, seed=i)
            factor = (calibration or {}).get(side(op), {}).get("factor", 1.0)
            if refits is not None and factor > 1:  # as the edge check found the method too hopeful
                chance, refits = min(1.0, chance * factor), np.minimum(1.0, refits * factor)
        per_claim.append((chance, family))
        draws.append(refits if refits is not None else np.full(REFITS, chance))
    groups: dict[int, list[int]] = {}
    for i, first in enumerate(same):
        groups.setdefault(first, []).append(i)
    point, products = 1.0, np.ones(REFITS)
    for members in groups.values():
        worst = max(members, key=lambda i: per_claim[i][0])  # the first of equals
        point *= 1 - per_claim[worst][0]
        products *= 1 - draws[worst]
    for j, (failed, runs) in enumerate(counted):  # claims with no value to fit (a bare assert)
        if failed:
            chance, _, refits = observed(failed, runs, seed=len(claims) + j)
            point *= 1 - chance
            products *= 1 - refits
    return {"point": point, "lower": float(np.quantile(products, 0.05)), "per_claim": per_claim}


def validate(simulate, threshold: float, op: str, decades: bool, n: int = 30,
             subsets: int = 300, draws: int = 2_000_000, seed: int = 0) -> dict:
    """The method against a claim whose failure rate can be simulated exactly.

    ``simulate(k, rng)`` returns k values of the claim. Returns the true failure rate (from
    ``draws`` values), and the median and mean of the method's estimates from ``subsets``
    independent sets of n values, and how often an estimate fell below the truth.
    """
    rng = np.random.default_rng(seed)
    x, c = natural(simulate(draws, rng), threshold, decades)
    truth = float(np.mean((x <= c) if op in (">", ">=") else (x >= c)))
    estimates = np.array([fail_chance(simulate(n, rng), threshold, op, decades, seed=s)[0]
                          for s in range(subsets)])
    return {"truth": truth, "median": float(np.median(estimates)),
            "mean": float(np.mean(estimates)), "below": float(np.mean(estimates < truth))}


def decade_claims(text: str) -> set[str]:
    """The messages of a page's claims stated in decades, ``claim(math.log10(x), ...)`` or
    ``claim(min(math.log10(...) ...), ...)``: their natural scale is 10**value."""
    import ast

    from rec11_book.shared.pages import code_cells

    def logs(node) -> bool:
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                   and n.func.attr == "log10" for n in ast.walk(node))

    found = set()
    for code in code_cells(text):
        try:
            tree = ast.parse("\n".join(line for line in code.splitlines()
                                       if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "claim" \
                    and len(node.args) >= 4 and logs(node.args[0]) \
                    and isinstance(node.args[3], ast.Constant):
                found.add(node.args[3].value)
    return found
