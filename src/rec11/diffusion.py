"""A denoising diffusion model (DDPM, Ho et al. 2020) for 2-D points, written to be read.

Shape letters: N batch, D data dimensions (2), T noise steps.

Indexing: code follows the slide, t = 0..T-1, so ``abar[t]`` is the paper's
ᾱ_{t+1} and ``q_sample(x0, t, ...)`` draws the paper's x_{t+1}. ``abar[0] = 1 - β_1``.

Where the cost sits: training draws one random t per example and jumps straight to
x_t with the closed form, so one network call serves one example. Sampling has no
such shortcut: it runs the network T times, once per step, for every sample.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from rec11 import cache, data
from rec11.seeds import shifted


@dataclass(frozen=True)
class DiffusionConfig:
    data: str = "moons"  # a rec11.data.toy_2d set
    n_train: int = 4000  # a fixed training set, not fresh draws: closer to real data
    noise: float = 0.05  # the generator's noise (make_moons' noise argument)
    D: int = 2
    T: int = 1000  # Ho et al.'s number of steps
    beta_1: float = 1e-4  # Ho et al.'s linear schedule at T = 1000; other T rescale it
    beta_T: float = 0.02
    t_dim: int = 32  # width of the sinusoidal time embedding
    hidden: int = 128  # width of the denoiser's hidden layers
    n_layers: int = 3  # hidden layers of the denoiser
    lr: float = 2e-3  # decays to 0 along a half cosine, so the weights settle at the end
    # the target eps is pure noise, so each step's gradient is mostly noise too and the
    # model needs many steps: 3,000 steps left visibly more stray points than 6,000
    steps: int = 6000
    batch_size: int = 256
    # sample quality swings a lot from step to step of plain Adam; an exponential
    # moving average of the weights (window ~ 1/(1-decay) = 200 steps) smooths that out
    ema_decay: float = 0.995
    seed: int = 0


# ---------------------------------------------------------------- the noise schedule


def linear_beta_schedule(T: int = 1000, beta_1: float = 1e-4, beta_T: float = 0.02):
    """(T,) betas rising linearly from beta_1 to beta_T, Ho et al. (2020)."""
    # float64 so that the product of 1000 factors in alpha_bar loses nothing
    return torch.linspace(beta_1, beta_T, T, dtype=torch.float64)


def scaled_beta_schedule(T: int, beta_1: float = 1e-4, beta_T: float = 0.02, T_ref: int = 1000):
    """Ho et al.'s linear schedule for a different number of steps T.

    Multiplying every beta by T_ref / T keeps their sum, and so roughly
    ᾱ_T ≈ exp(-Σβ), about the same: the last step is still (almost) pure noise.
    This is the rescaling of Nichol & Dhariwal (2021)'s code for the linear schedule.
    For fewer steps the betas are larger and ᾱ_T comes out somewhat smaller still.
    Below T = T_ref * beta_T (20 steps for Ho's values) the last beta would reach 1,
    which wipes out x entirely and divides by zero in the sampler, so that is refused.
    """
    scale = T_ref / T
    if beta_T * scale >= 1:
        raise ValueError(f"T={T} is too short: the rescaled last beta would be {beta_T * scale:g} >= 1")
    return linear_beta_schedule(T, beta_1 * scale, beta_T * scale)


def alpha_bar(betas):
    """(T,) ᾱ_t = Π_{s≤t} (1 - β_s): how much of x0 survives to step t."""
    return torch.cumprod(1 - betas, dim=0)


def schedule(cfg: DiffusionConfig):
    """(betas, alphas, abar), each (T,) float32, for a config."""
    # at T = 1000 this is exactly linear_beta_schedule(1000, beta_1, beta_T)
    betas = scaled_beta_schedule(cfg.T, cfg.beta_1, cfg.beta_T)
    return betas.float(), (1 - betas).float(), alpha_bar(betas).float()


def q_sample(x0, t, eps, abar):
    """x_t in one jump, the slide's closed form. x0, eps: (N, D); t: (N,) ints."""
    return abar[t].sqrt()[:,None]*x0 + (1-abar[t]).sqrt()[:,None]*eps


def forward_chain(x0, t: int, betas, generator: torch.Generator | None = None):
    """x_t by running the one-step chain t+1 times, x_s = √(1-β_s) x_{s-1} + √β_s ε.

    The slow way to the same distribution as ``q_sample``: for comparison only.
    """
    x = x0
    for s in range(t + 1):
        eps = torch.randn(x.shape, generator=generator, dtype=x.dtype)
        x = (1 - betas[s]).sqrt() * x + betas[s].sqrt() * eps
    return x


# ---------------------------------------------------------------- the denoiser


def time_embedding(t, dim: int, max_period: float = 10_000.0):
    """(N, dim) sinusoids of t at geometrically spaced frequencies.

    The transformer's positional encoding, applied to the noise step: nearby steps get
    similar codes, and the network can read off both coarse and fine position.
    """
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half) / half)  # (dim/2,)
    args = t.float()[:, None] * freqs[None, :]  # (N, dim/2)
    return torch.cat([args.sin(), args.cos()], dim=1)  # (N, dim)


class Denoiser(nn.Module):
    """An MLP that predicts the noise eps in x_t, given x_t and t."""

    def __init__(self, cfg: DiffusionConfig):
        super().__init__()
        self.cfg = cfg
        widths = [cfg.D] + [cfg.hidden] * (cfg.n_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(w, cfg.hidden) for w in widths)
        # every layer gets its own view of the step, not only the first: how much to
        # denoise depends on t everywhere in the network (the DDPM U-Net does the same)
        self.t_proj = nn.ModuleList(nn.Linear(cfg.t_dim, cfg.hidden) for _ in widths)
        self.out = nn.Linear(cfg.hidden, cfg.D)
        self.calls = 0  # forward passes so far: training vs sampling cost, counted

    def forward(self, xt, t):
        """xt: (N, D), t: (N,) ints in [0, T). Returns predicted eps, (N, D)."""
        self.calls += 1
        e = time_embedding(t, self.cfg.t_dim)  # (N, t_dim)
        h = xt
        for layer, t_proj in zip(self.layers, self.t_proj):
            h = F.silu(layer(h) + t_proj(e))  # (N, h)
        return self.out(h)  # (N, D)


# ---------------------------------------------------------------- training


def train(model: Denoiser, X: torch.Tensor) -> dict:
    """cfg.steps Adam steps on minibatches of X; the model ends holding the EMA weights."""
    cfg = model.cfg
    _, _, abar = schedule(cfg)
    T = cfg.T
    with torch.random.fork_rng():  # leave the caller's random stream as it was
        torch.manual_seed(shifted(cfg.seed))
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
        ema = copy.deepcopy(model).requires_grad_(False)
        losses = []
        start = time.perf_counter()
        model.train()
        for _ in range(cfg.steps):
            x0 = X[torch.randint(0, len(X), (cfg.batch_size,))]  # (N, D)
            # the slide's four lines, the closed form as q_sample
            t = torch.randint(0, T, (x0.shape[0],))
            eps = torch.randn_like(x0)
            xt = q_sample(x0, t, eps, abar)
            loss = F.mse_loss(model(xt, t), eps)  # predict the noise you added

            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            with torch.no_grad():
                for p_ema, p in zip(ema.parameters(), model.parameters()):
                    p_ema.lerp_(p, 1 - cfg.ema_decay)
            losses.append(loss.item())
        seconds = time.perf_counter() - start
        model.load_state_dict(ema.state_dict())
    # one point per 50 steps for the curve: a single step's loss is too noisy to read
    every = 50 if cfg.steps % 50 == 0 else 1
    tail = losses[-max(1, cfg.steps // 10):]
    return {
        "loss": torch.tensor(losses).view(-1, every).mean(1).tolist(),
        "loss_every": every,
        "final_loss": sum(tail) / len(tail),  # mean over the last tenth of training
        "seconds": seconds,
        "threads": torch.get_num_threads(),
    }


def training_data(cfg: DiffusionConfig) -> torch.Tensor:
    """(n_train, D): the fixed training set of a config, drawn with seed cfg.seed.

    Fresh data to judge samples against must come from other seeds.
    """
    return data.toy_2d(cfg.data, cfg.n_train, cfg.noise, seed=cfg.seed)


def make(cfg: DiffusionConfig) -> Denoiser:
    """A freshly initialised denoiser, seeded without disturbing the caller's random state."""
    with torch.random.fork_rng():
        torch.manual_seed(shifted(cfg.seed))
        return Denoiser(cfg)


def load(cfg: DiffusionConfig = DiffusionConfig(), name: str = "diffusion-2d"):
    """(model, info): an EMA denoiser trained on ``training_data(cfg)``, from the cache when it can be."""
    X = training_data(cfg)
    return cache.load_or_train(name, cfg, lambda: make(cfg), lambda model: train(model, X))


# ---------------------------------------------------------------- sampling


def reverse_mean(xt, t: int, eps_hat, betas, alphas, abar):
    """The mean of p(x_{t-1} | x_t), Ho et al.'s eq. 11.

    t is the code's index, the paper's step t + 1. Not x_t - eps_hat: eps_hat
    estimates ε, and x_t holds √(1 - ᾱ_t) ε of noise; subtracting
    β_t / √(1 - ᾱ_t) times eps_hat removes the fraction β_t / (1 - ᾱ_t) of it,
    and 1 / √α_t undoes one step's shrinking.
    """
    return (xt - betas[t] / (1 - abar[t]).sqrt() * eps_hat) / alphas[t].sqrt()


def predict_x0(xt, t, eps_hat, abar):
    """x̂_0, the clean point the predicted noise implies: the closed form solved for x_0.

    t is a code index (int or (N,) ints); xt, eps_hat: (N, D).
    """
    t = torch.as_tensor(t)
    a = abar[t].reshape(-1, 1) if t.dim() else abar[t]  # (N, 1) or a scalar
    return (xt - (1 - a).sqrt() * eps_hat) / a.sqrt()


@torch.no_grad()
def ddpm_sample(
    model: Denoiser,
    n: int,
    generator: torch.Generator | None = None,
    snapshots=(),
    posterior_variance: bool = False,
):
    """Ho et al.'s Algorithm 2: start from noise and run the denoiser backwards T times.

    Returns (x0, snaps): x0 is (n, D); snaps maps each requested s in ``snapshots``
    to the state x_s in the paper's numbering: s = T is the starting noise, s = 0 the
    returned sample, and x_s for s ≥ 1 should look like ``q_sample(x0, s - 1, ...)``.
    The added noise has variance β_t (Ho et al.'s first choice) or, with
    ``posterior_variance``, β̃_t = β_t (1 - ᾱ_{t-1}) / (1 - ᾱ_t) (their second).
    """
    betas, alphas, abar = schedule(model.cfg)
    T = model.cfg.T
    abar_prev = torch.cat([torch.ones(1), abar[:-1]])
    var = betas * (1 - abar_prev) / (1 - abar) if posterior_variance else betas
    x = torch.randn(n, model.cfg.D, generator=generator)  # x_T ~ N(0, I)
    snaps = {T: x.clone()} if T in snapshots else {}
    for t in reversed(range(T)):
        eps_hat = model(x, torch.full((n,), t))  # (n, D)
        x = reverse_mean(x, t, eps_hat, betas, alphas, abar)
        if t > 0:  # no noise on the last step: x_0 is the answer
            x = x + var[t].sqrt() * torch.randn(x.shape, generator=generator)
        if t in snapshots:
            snaps[t] = x.clone()
    return x, snaps


# ---------------------------------------------------------------- judging samples


# cdist's fast path expands |a-b|² = |a|² + |b|² - 2a·b, which loses the small
# distances to cancellation; the exact mode subtracts first
EXACT = "donot_use_mm_for_euclid_dist"


def energy_distance(x, y) -> float:
    """Squared energy distance 2E|X-Y| - E|X-X'| - E|Y-Y'| between samples x (n, D) and y (m, D).

    Zero exactly when the two samples are identical, and in the population limit zero
    only for equal distributions (Székely & Rizzo 2013). This is the plug-in (V-statistic)
    estimate, which averages the zero self-distances too, so two finite samples from the
    same distribution give a small positive number: compare against that floor, not 0.
    For 1-D data it is the square of ``scipy.stats.energy_distance``.
    """
    x, y = x.double(), y.double()
    d = lambda a, b: torch.cdist(a, b, compute_mode=EXACT).mean()
    return (2 * d(x, y) - d(x, x) - d(y, y)).item()


def nearest_distance(x, ref, chunk: int = 1000):
    """(n,) distance from each point of x (n, D) to its nearest neighbour in ref (m, D).

    A local check that energy distance is too blunt for: samples that land between
    the moons are far from every data point, however few of them there are.
    """
    return torch.cat([torch.cdist(c, ref, compute_mode=EXACT).min(1).values for c in x.split(chunk)])


def gaussian_fit(x, n: int, generator: torch.Generator | None = None):
    """(n, D) draws from the Gaussian with x's mean and covariance: the baseline to beat."""
    mean, cov = x.mean(0), torch.cov(x.T)
    L = torch.linalg.cholesky(cov)  # (D, D), cov = L Lᵀ
    return mean + torch.randn(n, x.shape[1], generator=generator) @ L.T
