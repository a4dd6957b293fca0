"""A variational autoencoder for the 8×8 digits, written to be read.

Shape letters: N batch, D pixels (64), L latent dimensions, h hidden width.

The model does exactly the slide's two lines (encode to mean and log-variance,
then reparameterise), and the loss is the slide's three lines:

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

from rec11 import cache, data  # modules, so that rec11.cache can trace them

# Burda, Grosse & Salakhutdinov (2016), "Importance Weighted Autoencoders" (ICLR):
# latent unit u is *active* if Var_x( E_{q(z|x)}[z_u] ) > 1e-2, i.e. its posterior mean
# moves with the input. We use their definition and threshold.
ACTIVE_THRESHOLD = 1e-2


@dataclass(frozen=True)
class VAEConfig:
    D: int = 64  # pixels of an 8×8 digit
    L: int = 8  # latent dimensions
    h: int = 128  # hidden width of encoder and decoder
    # weight of the KL term, the slide's exchange rate. 0.3, not the textbook 1: at this
    # pixel scale beta = 1 is a decoder noise of s² = 0.5 (see the top of the file), and
    # its reconstructions are already close to the blurred average digit
    beta: float = 0.3
    lr: float = 2e-3
    epochs: int = 120
    batch_size: int = 100
    seed: int = 0


class VAE(nn.Module):
    def __init__(self, cfg: VAEConfig):
        super().__init__()
        self.cfg = cfg
        # 2*L outputs: the first L are mu, the last L log-variance (chunked in forward)
        self.encoder = nn.Sequential(
            nn.Linear(cfg.D, cfg.h), nn.ReLU(),
            nn.Linear(cfg.h, cfg.h), nn.ReLU(),
            nn.Linear(cfg.h, 2 * cfg.L),
        )
        # sigmoid: pixels are in [0, 1], so the reconstruction is too
        self.decoder = nn.Sequential(
            nn.Linear(cfg.L, cfg.h), nn.ReLU(),
            nn.Linear(cfg.h, cfg.h), nn.ReLU(),
            nn.Linear(cfg.h, cfg.D), nn.Sigmoid(),
        )

    def forward(self, x):
        """x: (N, D). Returns xhat (N, D), mu (N, L), logvar (N, L)."""
        encoder = self.encoder
        # the network predicts log-variance, not variance: any real output is valid,
        # and exp() makes the variance positive for free
        mu, logvar = encoder(x).chunk(2, dim=1)  # (N, L), (N, L)
        # the reparameterisation trick: the randomness sits in eps, which needs no
        # gradient, and mu and sigma stay on the differentiable path
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)  # (N, L)
        xhat = self.decoder(z)  # (N, D)
        return xhat, mu, logvar


def kl_gaussian(mu, logvar):
    """KL( N(mu, diag(exp(logvar))) || N(0, I) ), summed over latents and batch."""
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return kl


def vae_loss(xhat, x, mu, logvar, beta: float = 1.0):
    """The slide's loss, summed over the batch. Returns (loss, recon, kl)."""
    recon = F.mse_loss(xhat, x, reduction='sum')
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = recon + beta * kl
    return loss, recon, kl


def kl_per_dim(mu, logvar):
    """(L,) average KL of each latent dimension over the batch, in nats."""
    return (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp())).mean(0)


def active_units(mu, threshold: float = ACTIVE_THRESHOLD) -> int:
    """How many latent dimensions are active (Burda et al. 2016): Var over x of mu > threshold."""
    return int((mu.var(0) > threshold).sum())


# ---------------------------------------------------------------- training


def train_vae(model: VAE, X: torch.Tensor) -> dict:
    """Adam on minibatches of X for cfg.epochs epochs; returns per-epoch curves (per image)."""
    cfg = model.cfg
    with torch.random.fork_rng():  # leave the caller's random stream as it was
        torch.manual_seed(cfg.seed)
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        curves = {"loss": [], "recon": [], "kl": []}
        start = time.perf_counter()
        model.train()
        for _ in range(cfg.epochs):
            totals = torch.zeros(3)
            for idx in torch.randperm(len(X)).split(cfg.batch_size):
                x = X[idx]  # (N, D)
                xhat, mu, logvar = model(x)
                loss, recon, kl = vae_loss(xhat, x, mu, logvar, cfg.beta)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                totals += torch.stack([loss, recon, kl]).detach()
            for key, value in zip(curves, (totals / len(X)).tolist()):
                curves[key].append(value)
        curves["seconds"] = time.perf_counter() - start
        curves["threads"] = torch.get_num_threads()
    return curves


# the latent-space figure: two latent dimensions can be plotted as they are
LATENT2 = VAEConfig(L=2)


def fit_vae(cfg: VAEConfig = VAEConfig(), name: str = "vae-digits"):
    """(model, info): a VAE trained on the digits' training split, from the cache when it can be."""
    X_train = data.digits_split()[0]

    def make():
        with torch.random.fork_rng():
            torch.manual_seed(cfg.seed)
            return VAE(cfg)

    return cache.load_or_train(name, cfg, make, lambda model: train_vae(model, X_train))


def beta_sweep(betas=(0.1, 0.3, 1.0, 2.0, 3.0), base: VAEConfig = VAEConfig()):
    """{beta: (model, info)} for one architecture trained at several betas.

    The cache key holds the whole config, so the member whose config equals the main
    model's is the main model, trained once.
    """
    return {b: fit_vae(replace(base, beta=b)) for b in betas}


# ---------------------------------------------------------------- using a trained model


@torch.no_grad()
def encode(model: VAE, x):
    """(mu, logvar), each (N, L): the posterior's mean and log-variance, no sampling."""
    return model.encoder(x).chunk(2, dim=1)


@torch.no_grad()
def reconstruct(model: VAE, x):
    """(N, D): the decoding of each image's posterior mean, the model's best guess."""
    mu, _ = encode(model, x)
    return model.decoder(mu)


@torch.no_grad()
def sample_prior(model: VAE, n: int, generator: torch.Generator | None = None):
    """(n, D): decode z ~ N(0, I). Reproducible when a generator is given."""
    z = torch.randn(n, model.cfg.L, generator=generator)  # (n, L)
    return model.decoder(z)


@torch.no_grad()
def evaluate(model: VAE, x, generator: torch.Generator | None = None) -> dict:
    """Per-image reconstruction error and KL on x, per-dimension KL and active units.

    The reconstruction term uses one sampled z per image, as in training, with noise
    from ``generator`` so that the number is reproducible.
    """
    mu, logvar = encode(model, x)
    z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=generator)
    recon = F.mse_loss(model.decoder(z), x, reduction='sum') / len(x)
    kl_dims = kl_per_dim(mu, logvar)  # (L,)
    return {
        "recon": recon.item(),
        "kl": kl_dims.sum().item(),
        "kl_per_dim": kl_dims.tolist(),
        "mu_var_per_dim": mu.var(0).tolist(),
        "active_units": active_units(mu),
    }
