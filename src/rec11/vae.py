"""A variational autoencoder for the 8×8 digits, written to be read.

Shape letters: N batch, D pixels (64), Z latent dimensions.

The model does exactly the slide's two lines (encode to mean and log-variance,
then reparameterise), and the loss is the slide's three lines. This module is the
one home of that maths: ``reparameterize``, ``kl_terms`` (and the sums of it,
``kl_gaussian`` and ``kl_per_dim``) and ``active_units``; ``rec11.sentence_vae``
uses them too.

    recon = F.mse_loss(xhat, x, reduction='sum')
    kl    = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss  = recon + beta * kl

Why the MSE-sum scale matters. A decoder with Gaussian likelihood N(xhat, s²I) has
-log p(x|z) = ||x - xhat||² / (2 s²) + const. Multiplying the ELBO by 2 s² shows that
``recon + beta * kl`` is the negative ELBO of a Gaussian decoder with variance
s² = beta / 2. So beta = 1 here already means a noise level of s ≈ 0.71 on pixels
that live in [0, 1]: a decoder that explains most of the image as noise. For a linear
decoder this is probabilistic PCA (Tipping & Bishop 1999; Lucas et al. 2019), which
keeps a latent direction only where the data's variance along it exceeds s² = beta/2.
On the digits the largest principal variance is about 0.70, so a linear VAE would
collapse completely (every latent at the prior) from beta ≈ 1.4 on. A nonlinear
decoder need not follow that exactly, but it is where to expect posterior collapse,
and it moves if the pixel scale or the reduction ('mean' instead of 'sum') changes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from rec11 import cache, data
from rec11.seeds import shifted

# Burda, Grosse & Salakhutdinov (2016), "Importance Weighted Autoencoders" (ICLR):
# latent unit u is *active* if Var_x( E_{q(z|x)}[z_u] ) > 1e-2, i.e. its posterior mean
# moves with the input. We use their definition and threshold.
ACTIVE_THRESHOLD = 1e-2


@dataclass(frozen=True)
class VAEConfig:
    D: int = 64  # pixels of an 8×8 digit
    z_dim: int = 8  # Z, latent dimensions
    hidden: int = 128  # width of the encoder's and the decoder's hidden layers
    # weight of the KL term, the slide's exchange rate. 0.3, not the textbook 1: at this
    # pixel scale beta = 1 is a decoder noise of s² = 0.5 (see the top of the file), and
    # its reconstructions are already close to the blurred average digit
    beta: float = 0.3
    # epochs over which beta rises in equal steps to its value ("KL annealing", Bowman
    # et al. 2016); 0 means the full beta from the first step
    kl_warmup: int = 0
    lr: float = 2e-3
    epochs: int = 120
    batch_size: int = 100
    seed: int = 0


class VAE(nn.Module):
    def __init__(self, cfg: VAEConfig):
        super().__init__()
        self.cfg = cfg
        # 2*Z outputs: the first Z are mu, the last Z log-variance (chunked in forward)
        self.encoder = nn.Sequential(
            nn.Linear(cfg.D, cfg.hidden), nn.ReLU(),
            nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU(),
            nn.Linear(cfg.hidden, 2 * cfg.z_dim),
        )
        # sigmoid: pixels are in [0, 1], so the reconstruction is too
        self.decoder = nn.Sequential(
            nn.Linear(cfg.z_dim, cfg.hidden), nn.ReLU(),
            nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU(),
            nn.Linear(cfg.hidden, cfg.D), nn.Sigmoid(),
        )

    def forward(self, x):
        """x: (N, D). Returns xhat (N, D), mu (N, Z), logvar (N, Z)."""
        encoder = self.encoder
        # the network predicts log-variance, not variance: any real output is valid,
        # and exp() makes the variance positive for free
        mu, logvar = encoder(x).chunk(2, dim=1)  # (N, Z), (N, Z)
        z = reparameterize(mu, logvar)  # (N, Z)
        xhat = self.decoder(z)  # (N, D)
        return xhat, mu, logvar


def reparameterize(mu, logvar, eps=None):
    """z = mu + sigma * eps, eps ~ N(0, I): the slide's line. (N, Z) each.

    The randomness sits in eps, which needs no gradient, so mu and sigma stay on the
    differentiable path. Pass eps to choose the noise (a seeded draw, for example).
    """
    eps = torch.randn_like(mu) if eps is None else eps
    return mu + torch.exp(0.5 * logvar) * eps


def kl_terms(mu, logvar):
    """(N, Z): KL( N(mu, diag(exp(logvar))) || N(0, I) ) of each example, per dimension.

    The slide's closed form before its sum; the sums below are the ways it is used.
    """
    return -0.5 * (1 + logvar - mu.pow(2) - logvar.exp())


def kl_gaussian(mu, logvar):
    """The slide's KL: summed over latent dimensions and the batch."""
    return kl_terms(mu, logvar).sum()


def kl_per_dim(mu, logvar):
    """(Z,) average KL of each latent dimension over the batch, in nats."""
    return kl_terms(mu, logvar).mean(0)


def vae_loss(xhat, x, mu, logvar, beta: float = 1.0):
    """The slide's loss, summed over the batch. Returns (loss, recon, kl)."""
    recon = F.mse_loss(xhat, x, reduction='sum')
    kl = kl_gaussian(mu, logvar)
    loss = recon + beta * kl
    return loss, recon, kl


def active_units(mu, threshold: float = ACTIVE_THRESHOLD) -> int:
    """How many latent dimensions are active (Burda et al. 2016): Var over x of mu > threshold."""
    return int((mu.var(0) > threshold).sum())


# ---------------------------------------------------------------- training


def warmed_beta(cfg: VAEConfig, epoch: int) -> float:
    """The KL weight in epoch ``epoch`` (from 0): cfg.beta, reached in cfg.kl_warmup equal steps."""
    if cfg.kl_warmup <= 0:
        return cfg.beta
    return cfg.beta * min(1.0, (epoch + 1) / cfg.kl_warmup)


def train(model: VAE, X: torch.Tensor) -> dict:
    """Adam on minibatches of X for cfg.epochs epochs; returns per-epoch curves (per image)."""
    cfg = model.cfg
    with torch.random.fork_rng():  # leave the caller's random stream as it was
        torch.manual_seed(shifted(cfg.seed))
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        curves = {"loss": [], "recon": [], "kl": []}
        start = time.perf_counter()
        model.train()
        for epoch in range(cfg.epochs):
            beta = warmed_beta(cfg, epoch)
            totals = torch.zeros(3)
            for idx in torch.randperm(len(X)).split(cfg.batch_size):
                x = X[idx]  # (N, D)
                xhat, mu, logvar = model(x)
                loss, recon, kl = vae_loss(xhat, x, mu, logvar, beta)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                totals += torch.stack([loss, recon, kl]).detach()
            for key, value in zip(curves, (totals / len(X)).tolist()):
                curves[key].append(value)
        curves["seconds"] = time.perf_counter() - start
        curves["threads"] = torch.get_num_threads()
    return curves


# the latent-space figure: two latent dimensions can be plotted as they are. With the
# full beta from the start, about one training in a few hundred lets its second
# dimension collapse to the prior before the decoder has learnt to use it (its codes'
# spread falls to a tenth); raising beta over the first 10 epochs lets both carry
# information first
LATENT2 = VAEConfig(z_dim=2, kl_warmup=10)


def make(cfg: VAEConfig) -> VAE:
    """A freshly initialised model, seeded without disturbing the caller's random state."""
    with torch.random.fork_rng():
        torch.manual_seed(shifted(cfg.seed))
        return VAE(cfg)


def load(cfg: VAEConfig = VAEConfig(), name: str = "vae-digits"):
    """(model, info): a VAE trained on the digits' training split, from the cache when it can be."""
    X_train = data.digits_split()[0]
    return cache.load_or_train(name, cfg, lambda: make(cfg), lambda model: train(model, X_train))


def beta_sweep(betas=(0.1, 0.3, 1.0, 2.0, 3.0), base: VAEConfig = VAEConfig()):
    """{beta: (model, info)} for one architecture trained at several betas.

    The cache key holds the whole config, so the member whose config equals the main
    model's is the main model, trained once.
    """
    return {b: load(replace(base, beta=b)) for b in betas}


# ---------------------------------------------------------------- using a trained model


@torch.no_grad()
def encode(model: VAE, x):
    """(mu, logvar), each (N, Z): the posterior's mean and log-variance, no sampling."""
    return model.encoder(x).chunk(2, dim=1)


@torch.no_grad()
def reconstruct(model: VAE, x):
    """(N, D): the decoding of each image's posterior mean, the model's best guess."""
    mu, _ = encode(model, x)
    return model.decoder(mu)


@torch.no_grad()
def sample_prior(model: VAE, n: int, generator: torch.Generator | None = None):
    """(n, D): decode z ~ N(0, I). Reproducible when a generator is given."""
    z = torch.randn(n, model.cfg.z_dim, generator=generator)  # (n, Z)
    return model.decoder(z)


@torch.no_grad()
def evaluate(model: VAE, x, generator: torch.Generator | None = None) -> dict:
    """Per-image reconstruction error and KL on x, per-dimension KL and active units.

    The reconstruction term uses one sampled z per image, as in training, with noise
    from ``generator`` so that the number is reproducible.
    """
    mu, logvar = encode(model, x)
    z = reparameterize(mu, logvar, torch.randn(mu.shape, generator=generator))
    recon = F.mse_loss(model.decoder(z), x, reduction='sum') / len(x)
    kl_dims = kl_per_dim(mu, logvar)  # (Z,)
    return {
        "recon": recon.item(),
        "kl": kl_dims.sum().item(),
        "kl_per_dim": kl_dims.tolist(),
        "mu_var_per_dim": mu.var(0).tolist(),
        "active_units": active_units(mu),
    }
