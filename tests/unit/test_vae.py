"""The VAE's pieces against closed forms, Monte Carlo and autograd."""

import itertools
import math

import torch
from torch.distributions import Normal, kl_divergence

from rec11 import data, sentence_vae, vae

# ---------------------------------------------------------------- the KL term


def test_kl_terms_are_the_closed_form_per_example_and_dimension():
    torch.manual_seed(0)
    mu, logvar = torch.randn(5, 3, dtype=torch.float64), torch.randn(5, 3, dtype=torch.float64)
    terms = vae.kl_terms(mu, logvar)  # (N, Z)
    expected = kl_divergence(Normal(mu, torch.exp(0.5 * logvar)), Normal(0.0, 1.0))
    assert torch.allclose(terms, expected)
    # every use is a sum of these terms: the batch's, a dimension's mean, a sentence's
    assert torch.equal(vae.kl_gaussian(mu, logvar), terms.sum())
    assert torch.equal(vae.kl_per_dim(mu, logvar), terms.mean(0))
    assert torch.equal(sentence_vae.kl_per_sentence(mu, logvar), terms.sum(1))


def test_kl_is_zero_at_the_prior_and_positive_elsewhere():
    zeros = torch.zeros(5, 4)
    assert vae.kl_gaussian(zeros, zeros).item() == 0.0
    mu, logvar = torch.randn(1000, 4), 2 * torch.randn(1000, 4)
    per_example = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)
    assert (per_example >= 0).all()
    assert vae.kl_gaussian(mu, logvar) > 0


def test_kl_equals_torch_distributions():
    mu, logvar = torch.randn(64, 3), torch.randn(64, 3)
    q, p = Normal(mu, torch.exp(0.5 * logvar)), Normal(0.0, 1.0)
    ref = kl_divergence(q, p).sum()
    assert torch.allclose(vae.kl_gaussian(mu, logvar), ref, rtol=1e-5)
    assert torch.allclose(vae.kl_per_dim(mu, logvar), kl_divergence(q, p).mean(0), rtol=1e-5)


def test_kl_matches_a_monte_carlo_estimate():
    # KL(q || p) = E_q[log q(z) - log p(z)]; with 200,000 draws the estimate's standard
    # error is about 0.002 nats here, and we allow 4 standard errors.
    mu = torch.tensor([[0.5, -1.0, 2.0]], dtype=torch.float64)
    logvar = torch.tensor([[0.0, -1.5, 0.7]], dtype=torch.float64)
    q, p = Normal(mu, torch.exp(0.5 * logvar)), Normal(0.0, 1.0)
    z = q.sample((200_000,))  # (S, 1, 3)
    log_ratio = (q.log_prob(z) - p.log_prob(z)).sum(-1)  # (S, 1)
    mc, se = log_ratio.mean(), log_ratio.std() / math.sqrt(len(log_ratio))
    closed = vae.kl_gaussian(mu, logvar)
    assert abs(mc - closed) < 4 * se, (mc.item(), closed.item(), se.item())
    assert se < 0.01  # the tolerance is tight enough to mean something


def test_vae_loss_is_the_slides_three_lines():
    x, xhat = torch.rand(10, 64), torch.rand(10, 64)
    mu, logvar = torch.randn(10, 2), torch.randn(10, 2)
    loss, recon, kl = vae.vae_loss(xhat, x, mu, logvar, beta=0.7)
    assert torch.allclose(recon, ((xhat - x) ** 2).sum())
    assert torch.allclose(kl, vae.kl_gaussian(mu, logvar))
    assert torch.allclose(loss, recon + 0.7 * kl)


# ---------------------------------------------------------------- the reparameterisation trick


def test_reparameterised_gradient_matches_the_analytic_one():
    # E[z²] = mu² + sigma² with sigma² = exp(logvar), so d/dmu = 2 mu and
    # d/dlogvar = exp(logvar). The reparameterised estimate must agree; with 400,000
    # draws its standard error is below 0.01, and we allow 0.03.
    mu = torch.tensor([0.8, -0.3], requires_grad=True)
    logvar = torch.tensor([-0.5, 0.4], requires_grad=True)
    S = 400_000
    z = mu + torch.exp(0.5 * logvar) * torch.randn(S, 2)  # (S, 2), the slide's line
    z.pow(2).mean(0).sum().backward()
    assert torch.allclose(mu.grad, 2 * mu.detach(), atol=0.03)
    assert torch.allclose(logvar.grad, logvar.detach().exp(), atol=0.03)


def test_gradient_of_a_single_reparameterised_draw():
    mu = torch.randn(4, 3, requires_grad=True)
    logvar = torch.randn(4, 3, requires_grad=True)
    torch.manual_seed(1)
    eps = torch.randn_like(mu)
    torch.manual_seed(1)
    z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
    z.sum().backward()
    assert torch.equal(mu.grad, torch.ones_like(mu))  # dz/dmu = 1
    assert torch.allclose(logvar.grad, 0.5 * torch.exp(0.5 * logvar.detach()) * eps)


def test_sampling_without_the_trick_passes_no_gradient():
    mu = torch.randn(4, 3, requires_grad=True)
    logvar = torch.randn(4, 3, requires_grad=True)
    # torch.normal keeps the graph (in torch 2.x) but treats the draw as a constant:
    # the gradient that reaches mu and logvar is exactly zero
    z = torch.normal(mu, torch.exp(0.5 * logvar))
    z.sum().backward()
    assert torch.count_nonzero(mu.grad) == 0 and torch.count_nonzero(logvar.grad) == 0
    # Normal(...).sample() cuts the graph outright
    assert not Normal(mu, torch.exp(0.5 * logvar)).sample().requires_grad


def test_reparameterize_is_the_slides_line():
    mu, logvar = torch.randn(4, 3), torch.randn(4, 3)
    eps = torch.randn(4, 3)
    assert torch.equal(vae.reparameterize(mu, logvar, eps), mu + torch.exp(0.5 * logvar) * eps)
    torch.manual_seed(1)
    drawn = vae.reparameterize(mu, logvar)
    torch.manual_seed(1)
    assert torch.equal(drawn, mu + torch.exp(0.5 * logvar) * torch.randn_like(mu))


def test_forward_decodes_mu_plus_sigma_times_eps():
    model = vae.VAE(vae.VAEConfig(z_dim=3, hidden=16))
    x = torch.rand(8, 64)
    torch.manual_seed(7)
    xhat, mu, logvar = model(x)
    torch.manual_seed(7)
    eps = torch.randn_like(mu)
    sigma = torch.exp(0.5 * logvar)  # logvar is log sigma², so sigma = exp(logvar / 2)
    assert torch.allclose(xhat, model.decoder(mu + sigma * eps))
    assert torch.allclose(torch.cat([mu, logvar], 1), model.encoder(x))


def test_encoder_gets_gradient_through_the_sample():
    model = vae.VAE(vae.VAEConfig(z_dim=2, hidden=16))
    x = torch.rand(8, 64)
    xhat, mu, logvar = model(x)
    assert xhat.shape == (8, 64) and mu.shape == logvar.shape == (8, 2)
    # the reconstruction term alone reaches the encoder only through z
    torch.nn.functional.mse_loss(xhat, x, reduction='sum').backward()
    last = model.encoder[-1].weight.grad  # (2Z, hidden): rows 0..Z-1 make mu, Z..2Z-1 logvar
    assert last[:2].abs().sum() > 0 and last[2:].abs().sum() > 0


# ---------------------------------------------------------------- helpers and training


def test_active_units_counts_dimensions_whose_mean_varies():
    mu = torch.randn(5000, 4) * torch.tensor([1.0, 0.3, 0.05, 0.0])  # variances 1, .09, .0025, 0
    assert vae.active_units(mu) == 2  # threshold 0.01, Burda et al. (2016)
    assert vae.active_units(mu, threshold=0.001) == 3


def test_kl_per_dim_sums_to_the_total_per_example():
    mu, logvar = torch.randn(50, 6), torch.randn(50, 6)
    assert torch.allclose(vae.kl_per_dim(mu, logvar).sum() * 50, vae.kl_gaussian(mu, logvar))


def test_training_is_deterministic_and_lowers_the_loss():
    cfg = vae.VAEConfig(z_dim=2, hidden=32, epochs=3, batch_size=50)
    X = data.digits()[0][:300]

    def run():
        torch.manual_seed(cfg.seed)
        model = vae.VAE(cfg)
        return model, vae.train(model, X)

    (m1, info1), (m2, info2) = run(), run()
    assert len(info1["loss"]) == 3 and info1["loss"] == info2["loss"]
    assert info1["loss"][-1] < info1["loss"][0]
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(), m2.state_dict().values()))
    # training leaves the caller's random stream alone (so a cache hit and a miss agree)
    model = vae.VAE(cfg)
    torch.manual_seed(5)
    expected = torch.rand(1)
    torch.manual_seed(5)
    vae.train(model, X)
    assert torch.equal(torch.rand(1), expected)


def test_kl_warmup_raises_beta_in_equal_steps_then_holds_it():
    cfg = vae.VAEConfig(beta=0.3, kl_warmup=10)
    betas = [vae.warmed_beta(cfg, epoch) for epoch in range(12)]
    assert betas[0] == 0.3 / 10 and betas[4] == 0.3 * 5 / 10
    assert betas[9] == betas[10] == betas[11] == 0.3
    assert all(a < b for a, b in itertools.pairwise(betas[:10]))
    assert vae.warmed_beta(vae.VAEConfig(beta=0.3), 0) == 0.3  # no warm-up
    assert vae.LATENT2.kl_warmup > 0 and vae.VAEConfig().kl_warmup == 0


def test_training_weighs_each_epochs_kl_by_its_warmed_beta():
    cfg = vae.VAEConfig(z_dim=2, hidden=32, epochs=4, batch_size=50, kl_warmup=4)
    info = vae.train(vae.make(cfg), data.digits()[0][:300])
    for epoch in range(4):
        expected = info["recon"][epoch] + vae.warmed_beta(cfg, epoch) * info["kl"][epoch]
        assert math.isclose(info["loss"][epoch], expected, rel_tol=1e-5)


def test_decoding_helpers_have_the_right_shapes_and_reproduce():
    model = vae.VAE(vae.VAEConfig(z_dim=3, hidden=16)).eval()
    x = torch.rand(7, 64)
    assert vae.reconstruct(model, x).shape == (7, 64)
    a = vae.sample_prior(model, 5, torch.Generator().manual_seed(0))
    b = vae.sample_prior(model, 5, torch.Generator().manual_seed(0))
    assert a.shape == (5, 64) and torch.equal(a, b) and (a >= 0).all() and (a <= 1).all()
    ev = vae.evaluate(model, x, torch.Generator().manual_seed(0))
    assert len(ev["kl_per_dim"]) == 3 and ev["recon"] > 0 and 0 <= ev["active_units"] <= 3


# ---------------------------------------------------------------- the pages' findings, over seeds
