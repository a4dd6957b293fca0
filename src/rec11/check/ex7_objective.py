"""Exercise 7: one generative objective, ``reparameterize``, ``vae_loss`` and
``diffusion_loss``. Each is trained through, so each check also asks for the gradient."""

from __future__ import annotations

import itertools
import math

import torch
import torch.nn.functional as F
from torch import nn

from rec11 import diffusion
from rec11.check.core import (
    GRAD_LEAK,
    SEED,
    Case,
    Verdict,
    battery,
    case_name,
    first_difference,
    gradient_difference,
    raised,
    right,
    run,
    wrong,
)

# --- the reparameterisation ------------------------------------------------------------------

ROWS = 20_000  # draws in the statistical case: each test below errs with chance < 1e-7


def _posterior(seed, N, Z, dtype=torch.float32):
    """mu and logvar that differ from row to row and from dimension to dimension."""
    g = torch.Generator().manual_seed(seed)
    mu = 2 * torch.randn(N, Z, generator=g, dtype=dtype)
    logvar = torch.empty(N, Z, dtype=dtype).uniform_(-2.0, 1.5, generator=g)
    return mu, logvar


@battery("reparameterize")
def reparameterize_cases() -> list[Case]:
    return [Case(lambda: _posterior(0, 3, 7), "mu and logvar of shape (3, 7)"),
            Case(lambda: _posterior(1, 5, 4, torch.float64), "float64 mu and logvar (5, 4)"),
            Case(lambda: _posterior(2, ROWS, 3), f"mu and logvar of shape ({ROWS:,}, 3)")]


REPARAMETERIZE_MISTAKES = {
    "logvar_as_sigma": "your z spreads by logvar itself: logvar is the log of the variance, so "
                       "sigma = torch.exp(0.5 * logvar).",
    "variance_as_sigma": "your z spreads by exp(logvar), the variance: its square root is the "
                         "standard deviation, torch.exp(0.5 * logvar).",
    "log_sigma": "your z spreads by exp(logvar) squared: exp(2 * logvar) reads logvar as "
                 "log sigma, but it is log sigma^2, so sigma = torch.exp(0.5 * logvar).",
    "no_noise": "your z is mu, with no noise: add sigma * eps with eps = torch.randn_like(mu), "
                "or the code is a point and the KL has nothing to pull on.",
    "no_mean": "your z does not centre on mu: z = mu + sigma * eps.",
    "torch_normal": "your z comes from torch.normal(mu, sigma): it records a path back "
                    "(NormalBackward) whose gradient to mu and sigma is exactly zero, without a "
                    "warning, so the encoder learns nothing from the reconstruction. Draw "
                    "eps = torch.randn_like(mu), which needs no gradient, and return "
                    "mu + sigma * eps.",
    "shared_eps": "every row gets the same noise: draw eps of mu's shape, torch.randn_like(mu).",
    "shared_across_dims": "every latent dimension of a row gets the same noise (one draw per "
                          "row): the dimensions of z must be independent. Draw eps of mu's "
                          "shape, torch.randn_like(mu).",
    "seeded_inside": "your z is the same every time the function runs: a torch.manual_seed "
                     "inside it (or noise drawn once, outside) repeats the same eps at every "
                     "training step. Draw fresh noise on each call, with no seed inside.",
    "uniform": "your noise is uniform (torch.rand_like): eps must be standard normal, "
               "torch.randn_like(mu).",
}


def _normal_gap(eps: torch.Tensor) -> str | None:
    """None if ``eps`` (n, Z) passes as independent N(0, 1) draws; else what does not.

    Each test errs on true N(0, 1) draws with chance below 1e-7 at n = 20,000 (means within
    0.04 and variances within 0.06: over 5.6 standard errors; correlations within 0.05:
    over 7; the largest gap between the empirical and the normal CDF, 0.012 over 60,000
    values, by the Dvoretzky-Kiefer-Wolfowitz inequality, 2 exp(-2 n 0.012^2) < 1e-7), so
    all of them together err with chance below 1e-6.
    """
    e = eps.double()
    if not torch.isfinite(e).all():
        return "some of its values are NaN or infinite"
    mean, var = e.mean(0), e.var(0)
    if (mean.abs() > 0.04).any():
        return f"its mean per dimension is {_fmt(mean)}, where N(0, 1) gives 0 within 0.04"
    if ((var - 1).abs() > 0.06).any():
        return f"its variance per dimension is {_fmt(var)}, where N(0, 1) gives 1 within 0.06"
    corr = torch.corrcoef(e.T) - torch.eye(e.shape[1], dtype=e.dtype)
    if e.shape[1] > 1 and corr.abs().max() > 0.05:
        return (f"its dimensions are correlated (up to {corr.abs().max().item():.2f}), where "
                "independent draws give under 0.05")
    lag = torch.corrcoef(torch.stack([e[:-1].reshape(-1), e[1:].reshape(-1)]))[0, 1]
    if lag.abs() > 0.05:
        return f"neighbouring rows are correlated ({lag.item():.2f}), where independent draws give under 0.05"
    values = e.reshape(-1).sort().values
    n = len(values)
    normal = 0.5 * (1 + torch.erf(values / math.sqrt(2)))
    upper = torch.arange(1, n + 1, dtype=e.dtype) / n
    gap = torch.maximum((upper - normal).abs(), (upper - 1 / n - normal).abs()).max()
    if gap > 0.012:
        return (f"its distribution is not normal: its CDF is {gap.item():.3f} away from the "
                "normal one, where N(0, 1) draws come within 0.012")
    return None


def _fmt(t: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.3g}" for v in t.tolist()) + "]"


def _spreads(logvar):
    """(name, sigma) of each reading of logvar, the right one first."""
    return [("right", torch.exp(0.5 * logvar)), ("variance_as_sigma", torch.exp(logvar)),
            ("log_sigma", torch.exp(2 * logvar)), ("logvar_as_sigma", logvar)]


def _noise_mistake(z, z_again, mu, logvar) -> str | None:
    """The one mistake the draws show beyond doubt, or None."""
    if torch.allclose(z, mu):
        return "no_noise"
    eps = (z - mu) / torch.exp(0.5 * logvar)
    if torch.allclose(z, z_again):
        return "seeded_inside"
    if torch.allclose(eps, eps[:1].expand_as(eps), atol=1e-5):
        return "shared_eps"
    if torch.allclose(eps, eps[:, :1].expand_as(eps), atol=1e-5):
        return "shared_across_dims"
    for centre, (name, sigma) in itertools.product((mu, 0 * mu), _spreads(logvar)):
        if (centre is mu and name == "right") or not torch.isfinite(sigma).all():
            continue
        if _normal_gap((z - centre) / sigma) is None:
            return name if centre is mu else "no_mean"
    if eps.min() >= 0 and eps.max() < 1 and _uniform_gap(eps) < 0.012:
        return "uniform"
    return None


def _uniform_gap(values: torch.Tensor) -> float:
    v = values.double().reshape(-1).sort().values
    return (v - torch.arange(1, len(v) + 1, dtype=v.dtype) / len(v)).abs().max().item()


def reparameterize(fn) -> Verdict:
    """``fn(mu, logvar)`` -> z (N, Z): mu + exp(0.5 * logvar) * eps, eps ~ N(0, I), with
    gradients reaching mu and logvar.

    The noise is checked on 20,000 rows of 3 dimensions, drawn twice: independent
    standard normal draws in every row, every dimension and every call. A right answer is
    refused with chance below 1e-6 (``_normal_gap`` says how). The gradients are checked
    exactly on every case: d z / d mu = 1 and d z / d logvar = (z - mu) / 2.
    """
    cases, runs = reparameterize_cases(), []
    for k, case in enumerate(cases):
        mu, logvar = (x.requires_grad_() for x in case.make())
        ran = run(fn, (mu, logvar))
        where = case_name("reparameterize", k, case)
        if ran.error is not None:
            return raised(ran.error, where)
        if ran.grad_leaked:
            return wrong({"grad_leak": GRAD_LEAK})
        z = ran.value
        if not torch.is_tensor(z) or z.shape != mu.shape:
            shape = tuple(z.shape) if torch.is_tensor(z) else type(z).__name__
            return wrong({"shape": f"on {where} your z is {shape}; it should be mu's shape, "
                                   f"{tuple(mu.shape)}. Try: eps = torch.randn_like(mu)."})
        if z.grad_fn is not None and type(z.grad_fn).__name__.startswith("Normal"):
            return wrong({"torch_normal": REPARAMETERIZE_MISTAKES["torch_normal"]})
        runs.append((where, z, mu, logvar))
    where, z, mu, logvar = runs[-1]
    again = run(fn, (mu, logvar), seed=SEED + 1).value
    found = _noise_verdict(z.detach(), torch.as_tensor(again).detach(), mu.detach(),
                           logvar.detach(), where)
    if found is not None:  # a Verdict that is not ok is falsy: ask for None
        return found
    for where, z, mu, logvar in runs:
        want_grads = [torch.ones_like(mu), 0.5 * (z.detach() - mu.detach())]
        grad = gradient_difference(_grads_of_sum(z, [mu, logvar]), want_grads,
                                   ["mu", "logvar"])
        if grad:
            return wrong({"gradient": f"on {where}, {grad}: dz/dmu is 1 and dz/dlogvar is "
                                      "sigma * eps / 2. Try: z = mu + torch.exp(0.5 * logvar) * "
                                      "eps, with eps = torch.randn_like(mu) and nothing "
                                      "detached."})
    return right("z = mu + exp(0.5 * logvar) * eps with fresh eps ~ N(0, I) in every row, "
                 "dimension and call, and gradients reach mu and logvar through it.")


def _noise_verdict(z, z_again, mu, logvar, where) -> Verdict | None:
    eps = (z - mu) / torch.exp(0.5 * logvar)
    gap = _normal_gap(eps)
    if gap is None:
        across = torch.corrcoef(torch.stack([eps.reshape(-1), ((z_again - mu) / torch.exp(
            0.5 * logvar)).reshape(-1)]))[0, 1]
        if abs(across.item()) <= 0.03 and not torch.allclose(z, z_again):
            return None
    name = _noise_mistake(z, z_again, mu, logvar)
    if name:
        return wrong({name: REPARAMETERIZE_MISTAKES[name]})
    gap = gap or "two calls give correlated noise, where independent calls give under 0.03"
    return wrong({"noise": f"on {where} your eps = (z - mu) / exp(0.5 * logvar) is not "
                           f"independent N(0, 1) noise: {gap}. Try: eps = "
                           "torch.randn_like(mu), drawn inside the function, no seed."})


def _grads_of_sum(out, leaves):
    if not torch.is_tensor(out) or not out.requires_grad:
        return None
    return list(torch.autograd.grad(out.sum(), leaves, allow_unused=True))


# --- the VAE loss ----------------------------------------------------------------------------

@battery("vae_loss")
def vae_cases() -> list[Case]:
    """(xhat, x, mu, logvar): N, D and Z all differ, so no two reductions coincide."""
    def make(seed, N, D, Z, dtype=torch.float32):
        g = torch.Generator().manual_seed(seed)
        x, xhat = (torch.rand(N, D, generator=g, dtype=dtype) for _ in range(2))
        mu = torch.randn(N, Z, generator=g, dtype=dtype)
        logvar = 0.5 * torch.randn(N, Z, generator=g, dtype=dtype)
        return xhat, x, mu, logvar
    rows = [(0, 4, 64, 3), (1, 3, 10, 5), (2, 2, 5, 9), (3, 6, 7, 2, torch.float64)]
    return [Case(lambda r=r: make(*r), f"{'float64, ' if len(r) > 4 else ''}N={r[1]}, "
                                        f"D={r[2]}, Z={r[3]}") for r in rows]


BETAS = (0.0, 1.0, 0.3, 2.0)


def _vae_terms(xhat, x, mu, logvar):
    """(name, value) of the reconstruction terms and of the KLs, the slide's first in each."""
    xhat, x, mu, lv = (v.detach().double() for v in (xhat, x, mu, logvar))
    error = xhat - x
    recon = [("right", error.pow(2).sum()),
             ("recon_half", 0.5 * error.pow(2).sum()),
             ("recon_l1", error.abs().sum()),
             ("recon_norm", error.norm()),
             ("recon_bce", F.binary_cross_entropy(xhat, x, reduction="sum"))]
    inner = lambda log_var, var, one=1.0, m2=mu.pow(2): (one + log_var - m2 - var).sum()  # noqa: B008 - bound once
    kl = [("right", -0.5 * inner(lv, lv.exp())),
          ("kl_sign", 0.5 * inner(lv, lv.exp())),
          ("kl_half", -inner(lv, lv.exp())),  # the 0.5 missing
          ("kl_factor", inner(lv, lv.exp())),  # the -0.5 missing
          ("logvar_as_log_sigma", -0.5 * inner(2 * lv, (2 * lv).exp())),
          ("logvar_as_log_sigma", -0.5 * inner(lv, (2 * lv).exp())),
          ("logvar_as_sigma", -0.5 * inner(lv, lv.pow(2))),
          ("logvar_as_sigma", -0.5 * inner(lv.pow(2).log(), lv.pow(2))),
          ("kl_missing_one", -0.5 * inner(lv, lv.exp(), one=0.0)),
          ("kl_mu_squared", -0.5 * inner(lv, lv.exp(), m2=mu))]
    return recon, kl


VAE_MISTAKES = {
    "recon_half": "your squared error is halved (the Gaussian log-likelihood's 1/2): the slide's "
                  "term is F.mse_loss(xhat, x, reduction='sum'), with no 0.5.",
    "recon_l1": "your reconstruction term is the absolute error: the slide's is the squared "
                "error, F.mse_loss(xhat, x, reduction='sum').",
    "recon_norm": "your reconstruction term is the norm of the error, a square root: the "
                  "slide's is the squared error, F.mse_loss(xhat, x, reduction='sum').",
    "recon_bce": "your reconstruction term is the binary cross-entropy: the slide's is the "
                 "squared error, F.mse_loss(xhat, x, reduction='sum').",
    "kl_sign": "your KL is negative: the closed form is "
               "-0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl_half": "your KL is twice the closed form: it starts with -0.5, "
               "-0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl_factor": "your KL is -2 times the right one: the closed form starts with -0.5.",
    "logvar_as_log_sigma": "your KL reads logvar as log sigma (exp(2 * logvar) as the "
                           "variance): logvar is already the log of the variance, so the "
                           "variance is exp(logvar), -0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "logvar_as_sigma": "your KL reads logvar as sigma itself (logvar**2 as the variance): it is "
                       "the log of the variance, so the variance is exp(logvar), "
                       "-0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl_missing_one": "your KL lacks the 1 inside the sum: "
                      "-0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl_mu_squared": "your KL has mu where mu^2 belongs: "
                     "-0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "no_beta": "beta changes nothing: the loss is recon + beta * kl.",
    "beta_squared": "your loss grows with beta squared (at beta = 2 the KL counts 4 times): "
                    "the loss is recon + beta * kl, beta once.",
    "beta_on_recon": "beta multiplies the reconstruction term: it weighs the KL, "
                     "recon + beta * kl.",
    "beta_on_both": "beta multiplies both terms, beta * (recon + kl): it weighs the KL alone, "
                    "recon + beta * kl.",
    "beta_one_minus": "you weigh the two terms by (1 - beta) and beta: the slide's loss is "
                      "recon + beta * kl, with the reconstruction term's weight fixed at 1.",
    "mean": "your reconstruction term is the mean over all N*D numbers (F.mse_loss's "
            "default, reduction='mean'), so beta weighs the KL N*D times more than you set. "
            "Use reduction='sum'.",
    "mean_both": "you average each term over its own entries: the squared error over N*D "
                 "numbers, the KL over N*Z, so beta weighs the KL D/Z times more than you set. "
                 "Sum over the pixels and the latent dimensions; averaging both over the "
                 "batch is fine.",
    "reduction": "the two terms are reduced differently, so beta weighs the KL more or less "
                 "than you set: sum both, as the slide does (dividing both by N is fine).",
}

# How each accepted reduction divides a term of a case with N rows, D pixels, Z dimensions.
DIVISORS = {"sum": lambda N, D, Z: 1, "N": lambda N, D, Z: N, "D": lambda N, D, Z: D,
            "ND": lambda N, D, Z: N * D, "Z": lambda N, D, Z: Z, "NZ": lambda N, D, Z: N * Z}
SHARED = ("sum", "N", "D", "ND")  # the same divisor on both terms keeps beta's meaning


def _explanations(value, terms, sizes) -> set[tuple[str, str]]:
    """{(term name, divisor name)} with term / divisor equal to ``value``."""
    return {(name, div) for (name, term), (div, d) in itertools.product(terms, DIVISORS.items())
            if math.isclose(value, float(term) / d(*sizes), rel_tol=1e-4, abs_tol=1e-7)}


def _scalar(value) -> float | dict[str, str]:
    """A loss as a float, or {name: the sentence that says why it is not one tensor number}."""
    if isinstance(value, tuple):
        value = value[0]
    if not torch.is_tensor(value):
        if isinstance(value, (int, float)):
            return {"not_tensor": "your loss is a Python number (.item() or float()), so "
                                  "loss.backward() has nothing to follow: return the tensor."}
        return {"not_tensor": f"your function returned a {type(value).__name__}: return the "
                              "loss, a tensor."}
    if value.numel() != 1:
        return {"not_scalar": f"your loss has shape {tuple(value.shape)}, one number per "
                              "example or per entry: return one number, reduced over the "
                              "batch (the slide's F.mse_loss averages; the VAE's sums)."}
    return float(value.detach())


def vae_loss(fn) -> Verdict:
    """``fn(xhat, x, mu, logvar, beta)`` -> the slide's loss: summed MSE + beta * KL.

    Four cases with N, D and Z all different, each at beta = 0, 1, 0.3 and 2. Any
    reduction shared by both terms keeps beta's meaning and is accepted: the sum, or the
    sum divided by N, by D or by N*D. The gradients reaching xhat, mu and logvar must be
    the same reduction's.
    """
    cases, at, grads = vae_cases(), [], []
    for k, case in enumerate(cases):
        values = {}
        for beta in BETAS:
            leaves = [v.requires_grad_() for v in case.make()]
            xhat, x, mu, logvar = leaves
            x.requires_grad_(False)
            ran = run(fn, (xhat, x, mu, logvar, beta))
            where = case_name("vae_loss", k, case)
            if ran.error is not None:
                return raised(ran.error, where)
            if ran.grad_leaked:
                return wrong({"grad_leak": GRAD_LEAK})
            value = _scalar(ran.value)
            if isinstance(value, dict):
                return wrong(value)
            values[beta] = value
            if beta == 0.3:
                loss = ran.value[0] if isinstance(ran.value, tuple) else ran.value
                grads.append(None if not loss.requires_grad else list(torch.autograd.grad(
                    loss, [xhat, mu, logvar], allow_unused=True)))
        at.append(values)
    sizes = [(case.make()[0].shape[0], case.make()[0].shape[1], case.make()[2].shape[1])
             for case in cases]
    terms = [_vae_terms(*case.make()) for case in cases]
    for div in SHARED:
        if all(math.isclose(v[b], (float(r[0][1]) + b * float(kl[0][1])) / DIVISORS[div](*s),
                            rel_tol=1e-4, abs_tol=1e-6)
               for v, (r, kl), s in zip(at, terms, sizes) for b in BETAS):
            return _vae_gradients(cases, grads, sizes, div)
    return wrong(_vae_mistakes(at, terms, sizes, cases))


def _vae_gradients(cases, grads, sizes, div) -> Verdict:
    for k, (case, got, s) in enumerate(zip(cases, grads, sizes)):
        xhat, x, mu, logvar = (v.requires_grad_() for v in case.make())
        want = (F.mse_loss(xhat, x, reduction="sum") - 0.15 * torch.sum(
            1 + logvar - mu.pow(2) - logvar.exp())) / DIVISORS[div](*s)
        want = list(torch.autograd.grad(want, [xhat, mu, logvar]))
        grad = gradient_difference(got, want, ["xhat", "mu", "logvar"])
        if grad:
            return wrong({"gradient": f"on {case_name('vae_loss', k, case)} at beta = 0.3 your "
                                      f"loss is right but {grad}. Try: build the loss from the "
                                      "tensors with torch operations, nothing detached."})
    note = {"sum": "", "N": " (you average both over the batch, which keeps beta's meaning)",
            "D": " (you divide both by the D pixels, which keeps beta's meaning)",
            "ND": " (you divide both by N*D, which keeps beta's meaning)"}[div]
    return right("the squared error and the KL reduced the same way, so beta is the exchange "
                 f"rate the formula says{note}, with gradients reaching xhat, mu and logvar.")


def _vae_mistakes(at, terms, sizes, cases) -> dict[str, str]:
    """Name what every case agrees on; else show the first case's numbers."""
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)
    if (all(close(v[b], v[0.0] + b * b * (v[1.0] - v[0.0])) for v in at for b in BETAS)
            and any(abs(v[1.0] - v[0.0]) > 1e-6 for v in at)):
        return {"beta_squared": VAE_MISTAKES["beta_squared"]}
    linear = all(close(v[b], v[0.0] + b * (v[1.0] - v[0.0])) for v in at for b in BETAS)
    if not linear:
        v = at[0]
        return {"beta_nonlinear": f"on {case_name('vae_loss', 0, cases[0])} your loss is "
                                  f"{v[0.0]:.5g} at beta = 0, {v[1.0]:.5g} at 1 and {v[2.0]:.5g} "
                                  "at 2: it is not linear in beta, as recon + beta * kl is. Try: "
                                  "multiply the KL by beta once, and nothing else."}
    if all(abs(v[1.0] - v[0.0]) < 1e-6 for v in at):
        return {"no_beta": VAE_MISTAKES["no_beta"]}
    recon = [v[0.0] for v in at]
    kl = [v[1.0] - v[0.0] for v in at]
    both = lambda values, kind: set.intersection(*(_explanations(x, t[kind], s) for x, t, s in
                                                   zip(values, terms, sizes)))
    whole = lambda div: all(math.isclose(x, (float(t[0][0][1]) + float(t[1][0][1])) /
                                         DIVISORS[div](*z), rel_tol=1e-4)
                            for x, t, z in zip(kl, terms, sizes))
    if all(abs(r) < 1e-6 for r in recon) and any(whole(div) for div in SHARED):
        return {"beta_on_both": VAE_MISTAKES["beta_on_both"]}
    r, k = both(recon, 0), both(kl, 1)
    if not r or not k:
        if both(recon, 1) and both(kl, 0):
            return {"beta_on_recon": VAE_MISTAKES["beta_on_recon"]}
        if r and both([a + b for a, b in zip(kl, recon)], 1):
            return {"beta_one_minus": VAE_MISTAKES["beta_one_minus"]}
        scale = [x / float(t[0][0][1]) for x, t in zip(recon, terms)]
        if all(math.isclose(f, scale[0], rel_tol=1e-4) and
               math.isclose(x, f * float(t[1][0][1]), rel_tol=1e-4)
               for f, x, t in zip(scale, kl, terms)):
            return {"scale": f"your loss is the slide's times {scale[0]:.3g} on every case: the "
                             "same factor on both terms keeps beta's meaning, but the slide "
                             "sums them, recon + beta * kl (dividing both by N, by D or by "
                             "N*D is fine too)."}
        return _vae_counterexample(recon, kl, terms, sizes, cases, bool(r))
    names = {name for name, _ in r | k if name != "right"}
    divs = ({d for _, d in r}, {d for _, d in k})
    if len({n for n, _ in r}) > 1 or len({n for n, _ in k}) > 1:
        return _vae_counterexample(recon, kl, terms, sizes, cases, True)
    found = {name: VAE_MISTAKES[name] for name in sorted(names)}
    N, D, Z = sizes[0]
    if not divs[0] & divs[1]:
        if divs == ({"ND"}, {"NZ"}):
            found["mean_both"] = VAE_MISTAKES["mean_both"] + (
                f" (On {case_name('vae_loss', 0, cases[0])}: D/Z = {D / Z:.3g} times.)")
        elif divs[0] == {"ND"} and divs[1] == {"sum"}:
            found["mean"] = VAE_MISTAKES["mean"] + (
                f" (On {case_name('vae_loss', 0, cases[0])}: N*D = {N * D} times.)")
        else:
            found["reduction"] = VAE_MISTAKES["reduction"]
    return found or _vae_counterexample(recon, kl, terms, sizes, cases, True)


def _vae_counterexample(recon, kl, terms, sizes, cases, recon_ok) -> dict[str, str]:
    """The first case's two terms, read off the loss at beta = 0 and 1, against the right ones."""
    r_value, k_value = terms[0][0][0][1], terms[0][1][0][1]  # the right terms of case 0
    return {"differs": f"on {case_name('vae_loss', 0, cases[0])} your loss at beta = 0 is "
                       f"{recon[0]:.5g}, where the summed squared error is {float(r_value):.5g}, "
                       f"and it grows by {kl[0]:.5g} per unit of beta, where the KL is "
                       f"{float(k_value):.5g}. Try: xhat, x, mu, logvar = "
                       "check.inputs('vae_loss', 0), and compute each term on its own."}


# --- the diffusion step ----------------------------------------------------------------------

class Denoiser(nn.Module):
    """A stand-in for the page's ``Denoiser``: ``forward(xt, t)`` -> a guess of eps, (N, D).

    Linear in x_t plus a learned vector per step, so that the loss's gradient reaches both
    parameters. It records what it was given; t may be (N,) or (N, 1), ints or floats.
    """

    def __init__(self, D: int, T: int, seed: int, dtype=torch.float32):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.W = nn.Parameter(0.5 * torch.randn(D, D, generator=g, dtype=dtype))
        # one row more than the steps: a model given t + 1 still runs, and is then named
        self.step = nn.Parameter(torch.randn(T + 1, D, generator=g, dtype=dtype))
        self.seen: list[tuple[torch.Tensor, torch.Tensor]] = []

    def forward(self, xt, t):
        t = torch.as_tensor(t)
        self.seen.append((xt.detach().clone(), t.detach().clone()))
        return xt @ self.W + self.step[t.reshape(-1).long()]  # (N, D)


@battery("diffusion_loss")
def diffusion_cases() -> list[Case]:
    """(model, x0, t, eps, abar): the steps t include 0 and T - 1, and differ by row."""
    def make(seed, N, D, T, dtype=torch.float32):
        g = torch.Generator().manual_seed(seed)
        x0, eps = (torch.randn(N, D, generator=g, dtype=dtype) for _ in range(2))
        t = torch.cat([torch.tensor([0, T - 1]), torch.randint(1, T - 1, (N - 2,), generator=g)])
        t = t[torch.randperm(N, generator=g)]
        abar = diffusion.alpha_bar(torch.linspace(1e-3, 0.2, T, dtype=dtype))
        return Denoiser(D, T, seed, dtype), x0, t, eps, abar
    rows = [(0, 6, 2, 50), (1, 4, 3, 20), (2, 7, 4, 10), (3, 5, 1, 100, torch.float64)]
    return [Case(lambda r=r: make(*r), f"{'float64, ' if len(r) > 4 else ''}N={r[1]}, "
                                        f"D={r[2]}, T={r[3]} steps") for r in rows]


DIFFUSION_XT = {
    "paper_t": "x_t uses abar[t-1], the paper's numbering: in the code t runs from 0 to T-1 and "
               "abar[t] is already the product of the first t+1 alphas (at t = 0, abar[t-1] is "
               "abar[-1], the last step).",
    "no_sqrt": "x_t uses abar and 1 - abar where their square roots belong.",
    "sqrt_one_term": "x_t takes the square root of one coefficient and not the other: both are "
                     "square roots, sqrt(abar[t]) on x0 and sqrt(1 - abar[t]) on eps.",
    "swapped": "x_t puts sqrt(1 - abar) on x0 and sqrt(abar) on the noise: swapped.",
    "cumprod_again": "x_t uses the cumulative product of abar: abar is already the product of "
                     "the alphas (torch.cumprod(1 - betas, 0)), so index it as it is, abar[t].",
    "alpha_t": "x_t uses one step's alpha_t = abar[t] / abar[t-1]: the closed form jumps from "
               "x0 in one go, with the product of all the steps so far, abar[t].",
    "abar_as_beta": "x_t treats abar as the betas (cumprod(1 - abar)): abar is already the "
                    "cumulative product of the alphas, so use abar[t] itself.",
    "first_t": "x_t uses the first example's step, abar[t[0]], for every row: each row has its "
               "own step, abar[t][:, None].",
    "model_x0": "the model is given x0, the clean data: give it the noisy x_t, or it never "
                "sees the noise it must predict.",
    "fresh_eps": "your x_t changes from one run to the next: you draw new noise "
                 "(torch.randn_like) instead of using the eps you are given, so the loss cannot "
                 "compare the model's guess with the noise that went into x_t. Use the "
                 "argument eps.",
}


def _xt_variants(x0, t, eps, abar):
    """(name, x_t) for the right closed form and each way of getting it wrong."""
    blend = lambda a, b: a[:, None] * x0 + b[:, None] * eps
    jump = lambda a: blend(a.sqrt(), (1 - a).sqrt())  # the closed form with a for abar[t]
    a = abar[t]
    alpha_t = torch.where(t > 0, abar[t] / abar[(t - 1).clamp(min=0)], abar[0])
    return [("right", diffusion.q_sample(x0, t, eps, abar)),
            ("paper_t", jump(abar[t - 1])),  # t = 0 wraps to abar[-1]
            ("no_sqrt", blend(a, 1 - a)),
            ("sqrt_one_term", blend(a.sqrt(), 1 - a)),
            ("sqrt_one_term", blend(a, (1 - a).sqrt())),
            ("swapped", blend((1 - a).sqrt(), a.sqrt())),
            ("cumprod_again", jump(torch.cumprod(abar, 0)[t])),
            ("alpha_t", jump(alpha_t)),
            ("abar_as_beta", jump(torch.cumprod(1 - abar, 0)[t])),
            ("first_t", jump(abar[t[:1]].expand_as(a))),
            ("model_x0", x0)]


MODEL_T = {
    "no_t": "the model is not given t: call model(x_t, t), so that it knows how much noise to "
            "look for.",
    "fresh_t": "the model's t changes from one run to the next: you draw new steps "
               "(torch.randint) instead of using the t you are given.",
    "model_paper_t": "the model is given t + 1, the paper's numbering: give it the same t that "
                     "indexes abar, or training and sampling disagree.",
    "model_t": "the model is not given the step t of each example: pass the t you are given.",
}

TARGETS = {"target_x0": "the loss compares the prediction with x0: predict the noise you "
                        "added, eps.",
           "target_xt": "the loss compares the prediction with x_t, the model's own input: "
                        "predict the noise you added, eps.",
           "target_sum": "the loss is summed; the slide's F.mse_loss averages, which keeps the "
                         "step size independent of the batch."}


def diffusion_loss(fn) -> Verdict:
    """``fn(model, x0, t, eps, abar)`` -> the slide's MSE between model(x_t, t) and eps.

    Four cases (N, D and the number of steps all differ; t holds 0 and T - 1), each run
    twice under different seeds: noise or steps drawn inside the function, instead of the
    eps and t given, change between the runs. The model is an ``nn.Module`` with the page's
    signature, and the loss's gradient must reach its parameters as the right loss's does.
    """
    cases = diffusion_cases()
    for k, case in enumerate(cases):
        where = case_name("diffusion_loss", k, case)
        model, x0, t, eps, abar = case.make()
        ran = run(fn, (model, x0, t, eps, abar))
        again_model, *again_args = case.make()
        run(fn, (again_model, *again_args), seed=SEED + 1)  # what it gives the model, again
        if isinstance(ran.error, TypeError) and "argument: 't'" in str(ran.error):
            return wrong({"no_t": MODEL_T["no_t"]})
        if ran.error is not None:
            return raised(ran.error, where, {
                "out of bounds": "t runs from 0 to T-1 in the code: abar[t] with the paper's "
                                 "t = T is past the end",
                "must match the size": "abar[t] has shape (N,): index it [:, None] so it "
                                       "scales each row of x0"})
        if ran.grad_leaked:
            return wrong({"grad_leak": GRAD_LEAK})
        found = _diffusion_mistakes(model, again_model, x0, t, eps, abar)
        if found:
            return wrong(found)
        value = _scalar(ran.value)
        if isinstance(value, dict):
            return wrong(value)
        xt, _ = model.seen[0]
        ref_model = case.make()[0]
        want = F.mse_loss(ref_model(diffusion.q_sample(x0, t, eps, abar), t), eps)
        if not math.isclose(value, want.item(), rel_tol=1e-4, abs_tol=1e-7):
            return wrong(_diffusion_target(value, ref_model(xt, t).detach(), eps, x0, xt,
                                           want.item(), where))
        loss = ran.value[0] if isinstance(ran.value, tuple) else ran.value
        params = list(model.parameters())
        got = None if not loss.requires_grad else list(
            torch.autograd.grad(loss, params, allow_unused=True))
        grad = gradient_difference(got, list(torch.autograd.grad(want, list(
            ref_model.parameters()))), ["the model's weights", "the model's step vectors"])
        if grad:
            return wrong({"gradient": f"on {where} your loss is right but {grad}. Try: "
                                      "return F.mse_loss(model(x_t, t), eps) with nothing "
                                      "detached, so the model learns from it."})
    return right("x_t from the closed form at the code's t, and the mean squared error "
                 "between the model's guess and the noise that was added, with the gradient "
                 "reaching the model's parameters.")


def _diffusion_mistakes(model, again_model, x0, t, eps, abar) -> dict[str, str]:
    """What the model was given, read against the right x_t and t, named when certain."""
    if not model.seen:
        return {"no_model": "your function never calls the model on x_t and t. Try: "
                            "F.mse_loss(model(x_t, t), eps)."}
    (xt, seen_t), (xt_again, t_again) = model.seen[0], again_model.seen[0]
    found = {}
    if not torch.equal(seen_t, t_again):
        return {"fresh_t": MODEL_T["fresh_t"]}
    given = seen_t.reshape(-1).double()
    if given.numel() != len(t) or not torch.equal(given, t.double()):
        name = "model_paper_t" if given.numel() == len(t) and \
            torch.equal(given, (t + 1).double()) else "model_t"
        found[name] = MODEL_T[name]
    if not torch.equal(xt, xt_again):
        found["fresh_eps"] = DIFFUSION_XT["fresh_eps"]
        return found
    variants = _xt_variants(x0, t, eps, abar)
    if first_difference(xt, variants[0][1]) is None:
        return found
    match = [name for name, v in variants[1:] if first_difference(xt, v) is None]
    if len(set(match)) == 1:
        found[match[0]] = DIFFUSION_XT[match[0]]
    else:
        found["xt"] = (f"the x_t your model was given is not sqrt(abar[t]) * x0 + "
                       f"sqrt(1 - abar[t]) * eps row by row: "
                       f"{first_difference(xt, variants[0][1])}. Try: "
                       "abar[t].sqrt()[:, None] * x0 + (1 - abar[t]).sqrt()[:, None] * eps.")
    return found


def _diffusion_target(loss, guess, eps, x0, xt, want, where) -> dict[str, str]:
    """The mistake in what the loss compares the model's guess with, or the numbers."""
    targets = [("target_x0", F.mse_loss(guess, x0)), ("target_xt", F.mse_loss(guess, xt)),
               ("target_sum", F.mse_loss(guess, eps, reduction="sum")),
               ("target_sum", (guess - eps).pow(2).sum(1).mean())]
    name = next((n for n, v in targets if math.isclose(loss, v.item(), rel_tol=1e-4)), None)
    if name:
        return {name: TARGETS[name]}
    return {"loss": f"on {where} the model was given the right x_t and t, but your loss is "
                    f"{loss:.5g} where F.mse_loss(model(x_t, t), eps) is {want:.5g}. Try: "
                    "compare the model's guess with eps, averaged."}
