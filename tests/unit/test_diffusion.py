"""The diffusion model's pieces against closed forms, the iterated chain and scipy."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from rec11 import data
from rec11 import diffusion as df

# ---------------------------------------------------------------- the schedule


def test_alpha_bar_is_monotone_with_ho_et_al_end_values():
    betas = df.linear_beta_schedule(1000)
    abar = df.alpha_bar(betas)
    assert betas[0] == pytest.approx(1e-4) and betas[-1] == pytest.approx(0.02)
    assert (abar[1:] < abar[:-1]).all()
    assert abar[0].item() == pytest.approx(1 - 1e-4, rel=1e-12)
    # the same product computed independently, in numpy
    expected = np.prod(1 - np.linspace(1e-4, 0.02, 1000))
    assert abar[-1].item() == pytest.approx(expected, rel=1e-9)
    assert abar[-1].item() == pytest.approx(4.04e-5, rel=0.01)  # x_T is almost pure noise


def test_float32_schedule_matches_float64():
    betas, alphas, abar = df.schedule(df.DiffusionConfig())
    assert betas.dtype == alphas.dtype == abar.dtype == torch.float32
    assert torch.allclose(abar.double(), df.alpha_bar(df.linear_beta_schedule()), rtol=1e-6)
    assert torch.allclose(alphas, 1 - betas)


def test_scaled_schedule_keeps_the_sum_of_betas_for_a_shorter_chain():
    ref = df.linear_beta_schedule(1000)
    assert torch.equal(df.scaled_beta_schedule(1000), ref)
    short = df.scaled_beta_schedule(100)
    assert len(short) == 100
    assert short.sum().item() == pytest.approx(ref.sum().item(), rel=1e-9)
    # larger steps shrink more than their sum says, so the end is even closer to noise
    end_short, end_ref = df.alpha_bar(short)[-1].item(), df.alpha_bar(ref)[-1].item()
    assert end_short < end_ref < 1e-4
    # at 20 steps the last beta would be 1: refused rather than dividing by zero later
    with pytest.raises(ValueError):
        df.scaled_beta_schedule(20)


# ---------------------------------------------------------------- closed form vs chain


def test_closed_form_matches_the_iterated_chain_in_distribution():
    betas = df.linear_beta_schedule(1000)
    abar = df.alpha_bar(betas)
    t, S = 300, 100_000
    x0 = torch.tensor([[1.5, -2.0]], dtype=torch.float64).expand(S, 2)
    g = torch.Generator().manual_seed(0)
    chain = df.forward_chain(x0, t, betas, generator=g)
    jump = df.q_sample(x0, torch.full((S,), t), torch.randn(S, 2, generator=g, dtype=torch.float64), abar)
    # both are N(sqrt(abar_t) x0, (1 - abar_t) I); with S draws the standard error of a
    # mean is sqrt((1 - abar_t)/S) ~ 0.0025, of a variance ~ (1 - abar_t) sqrt(2/S) ~ 0.003:
    # the tolerances below are 4-5 standard errors
    mean, var = abar[t].sqrt() * x0[0], 1 - abar[t]
    for x in (chain, jump):
        assert torch.allclose(x.mean(0), mean, atol=0.01)
        assert torch.allclose(x.var(0), var.expand(2), atol=0.015)
    assert torch.allclose(chain.mean(0), jump.mean(0), atol=0.015)
    # and the signal really has decayed by t = 300, so the test can tell the two apart
    assert abar[t] < 0.5


def test_q_sample_is_the_slides_expression():
    _, _, abar = df.schedule(df.DiffusionConfig())
    x0, eps = torch.randn(6, 2), torch.randn(6, 2)
    t = torch.tensor([0, 1, 10, 500, 998, 999])
    expected = torch.sqrt(abar[t])[:, None] * x0 + torch.sqrt(1 - abar[t])[:, None] * eps
    assert torch.allclose(df.q_sample(x0, t, eps, abar), expected)
    assert torch.allclose(df.q_sample(x0, t, eps, abar)[0], x0[0], atol=0.02)  # t = 0: almost clean


# ---------------------------------------------------------------- model, training, sampling


def small_config(**kw):
    return df.DiffusionConfig(**{"T": 50, "hidden": 16, "t_dim": 8, "steps": 20, "batch_size": 32, "n_train": 200,
                                 **kw})


def test_denoiser_shapes_and_call_count():
    model = df.Denoiser(small_config())
    out = model(torch.randn(5, 2), torch.randint(0, 50, (5,)))
    assert out.shape == (5, 2) and model.calls == 1
    assert df.time_embedding(torch.arange(7), 8).shape == (7, 8)


def test_sampler_runs_T_steps_with_snapshots_and_is_deterministic():
    cfg = small_config()
    model = df.Denoiser(cfg).eval()
    x, snaps = df.ddpm_sample(model, 64, torch.Generator().manual_seed(3), snapshots=(50, 10, 0))
    assert x.shape == (64, 2) and model.calls == cfg.T  # one network call per step
    assert torch.isfinite(x).all()
    assert sorted(snaps) == [0, 10, 50] and all(s.shape == (64, 2) for s in snaps.values())
    assert torch.equal(snaps[0], x)
    again, _ = df.ddpm_sample(model, 64, torch.Generator().manual_seed(3))
    other, _ = df.ddpm_sample(model, 64, torch.Generator().manual_seed(4))
    assert torch.equal(x, again) and not torch.equal(x, other)
    # the starting noise is the generator's first draw
    assert torch.equal(snaps[50], torch.randn(64, 2, generator=torch.Generator().manual_seed(3)))


class GaussianOracle(torch.nn.Module):
    """The exact noise predictor E[eps | x_t] when the data are N(m, s² I)."""

    def __init__(self, cfg, m, s):
        super().__init__()
        self.cfg, self.m, self.s = cfg, m, s
        self.abar = df.schedule(cfg)[2]

    def forward(self, xt, t):
        a = self.abar[t][:, None]  # (N, 1)
        return (1 - a).sqrt() * (xt - a.sqrt() * self.m) / (a * self.s**2 + 1 - a)


@pytest.mark.parametrize("posterior_variance", [False, True])
def test_sampler_with_the_exact_denoiser_recovers_the_data_distribution(posterior_variance):
    # with the true E[eps | x_t], T = 1000 reverse steps must land on N(m, s² I); the
    # standard errors with 20,000 samples are ~0.002, the discretisation bias ~0.005
    m, s = torch.tensor([1.0, -0.5]), 0.3
    oracle = GaussianOracle(df.DiffusionConfig(), m, s)
    x, _ = df.ddpm_sample(oracle, 20_000, torch.Generator().manual_seed(0), posterior_variance=posterior_variance)
    assert torch.allclose(x.mean(0), m, atol=0.01)
    assert torch.allclose(x.std(0), torch.full((2,), s), atol=0.015)


def test_training_is_deterministic_and_one_call_per_batch():
    cfg = small_config()
    X = df.training_data(cfg)

    def run():
        torch.manual_seed(cfg.seed)
        model = df.Denoiser(cfg)
        return model, df.train(model, X)

    (m1, info1), (m2, info2) = run(), run()
    assert m1.calls == cfg.steps  # each training example costs one network call
    assert info1["final_loss"] == info2["final_loss"] and math.isfinite(info1["final_loss"])
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(), m2.state_dict().values()))


def test_the_returned_model_holds_the_ema_weights():
    # after one step the average is decay * initial + (1 - decay) * stepped weights
    X = df.training_data(small_config())
    models = {}
    for decay in (0.0, 0.9):  # decay 0 keeps the raw stepped weights
        cfg = small_config(steps=1, ema_decay=decay)
        torch.manual_seed(cfg.seed)
        models[decay] = df.Denoiser(cfg)
        initial = {k: v.clone() for k, v in models[decay].state_dict().items()}
        df.train(models[decay], X)
    stepped, averaged = models[0.0].state_dict(), models[0.9].state_dict()
    for k in initial:
        assert torch.allclose(averaged[k], 0.9 * initial[k] + 0.1 * stepped[k], atol=1e-7)
    assert not torch.allclose(stepped["out.weight"], initial["out.weight"])


# ---------------------------------------------------------------- judging samples


def test_energy_distance_is_zero_for_identical_samples_and_matches_scipy():
    x = torch.randn(300, 2)
    assert df.energy_distance(x, x) == pytest.approx(0.0, abs=1e-12)
    a, b = torch.randn(200, 1), torch.randn(150, 1) + 0.5
    # scipy's energy_distance is the square root of ours, in one dimension
    assert df.energy_distance(a, b) == pytest.approx(stats.energy_distance(a[:, 0], b[:, 0]) ** 2, rel=1e-9)


def test_energy_distance_is_small_for_two_draws_and_large_for_a_shift():
    x, y = data.toy_2d("moons", 1000, seed=1), data.toy_2d("moons", 1000, seed=2)
    same = df.energy_distance(x, y)
    shifted = df.energy_distance(x, y + torch.tensor([1.0, 0.0]))
    # two draws of 1000 differ by sampling noise only: a few thousandths
    assert 0 < same < 0.01
    assert shifted > 20 * same


def test_gaussian_fit_matches_mean_and_covariance():
    x = data.toy_2d("moons", 2000, seed=0)
    g = df.gaussian_fit(x, 50_000, torch.Generator().manual_seed(0))
    assert torch.allclose(g.mean(0), x.mean(0), atol=0.02)
    assert torch.allclose(torch.cov(g.T), torch.cov(x.T), atol=0.03)


def test_nearest_distance_is_zero_on_the_reference_itself():
    ref = torch.randn(500, 2)
    assert torch.allclose(df.nearest_distance(ref, ref, chunk=128), torch.zeros(500), atol=1e-5)
    far = df.nearest_distance(torch.tensor([[100.0, 0.0]]), ref)
    assert far.item() > 90


# ---------------------------------------------------------------- the 2-D data


# ---------------------------------------------------------------- findings of the pages, over seeds


def test_the_reverse_mean_with_the_true_noise_is_the_posterior_mean_of_ho_et_al():
    """Eq. 11 with ε̂ = ε equals eq. 7's μ̃_t(x_t, x_0); x̂_0 inverts the closed form."""
    betas = df.linear_beta_schedule(1000)  # float64, so that the identities hold to 1e-9
    alphas, abar = 1 - betas, df.alpha_bar(betas)
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(64, 2, generator=gen, dtype=torch.float64)
    eps = torch.randn(64, 2, generator=gen, dtype=torch.float64)
    for t in (1, 10, 500, 999):  # code indices; the paper's t is one more
        xt = df.q_sample(x0, torch.full((64,), t), eps, abar)
        prev = abar[t - 1]
        posterior = (prev.sqrt() * betas[t] / (1 - abar[t])) * x0 \
            + (alphas[t].sqrt() * (1 - prev) / (1 - abar[t])) * xt
        assert torch.allclose(df.reverse_mean(xt, t, eps, betas, alphas, abar), posterior, atol=1e-9)
        assert torch.allclose(df.predict_x0(xt, t, eps, abar), x0, atol=1e-7)
        assert torch.allclose(df.predict_x0(xt, torch.full((64,), t), eps, abar), x0, atol=1e-7)
        assert not torch.allclose(xt - eps, posterior, atol=1e-2), "x_t - ε̂ is not the step"
