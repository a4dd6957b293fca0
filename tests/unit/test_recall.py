"""rec11.recall: the task, the model, the diagnostics, and train()'s contract. Fast: tiny runs."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from rec11.recall import (
    DIAG_SEED,
    SETTINGS,
    RecallConfig,
    diagnose,
    grid,
    load,
    make,
    make_batch,
    train,
)

TINY = RecallConfig(steps=6, log_every=3, n_eval=64)


@pytest.fixture
def deterministic():
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(before)


def test_batch_target_is_the_value_stored_with_the_query_key():
    cfg = RecallConfig()
    keys, values, query, target = make_batch(cfg, 500, torch.Generator().manual_seed(0))
    assert keys.shape == values.shape == (500, cfg.n_pairs)
    assert query.shape == target.shape == (500,)
    assert keys.min() >= 0 and keys.max() < cfg.n_keys
    assert values.min() >= 0 and values.max() < cfg.n_values
    for i in range(500):
        assert len(set(keys[i].tolist())) == cfg.n_pairs  # distinct keys: one right answer
        match = (keys[i] == query[i]).nonzero().flatten()
        assert len(match) == 1
        assert target[i] == values[i, match[0]]
    # the asked-for slot is spread over the sequence, not always the same position
    slots = (keys == query[:, None]).float().argmax(1)
    assert len(slots.unique()) == cfg.n_pairs


def test_batch_is_a_function_of_the_generator_seed():
    cfg = RecallConfig()
    a = make_batch(cfg, 8, torch.Generator().manual_seed(3))
    b = make_batch(cfg, 8, torch.Generator().manual_seed(3))
    c = make_batch(cfg, 8, torch.Generator().manual_seed(4))
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not torch.equal(a[0], c[0])


@pytest.mark.parametrize("d_k,scaled", SETTINGS)
def test_forward_shapes_and_rows_sum_to_one(d_k, scaled):
    cfg = RecallConfig(d_k=d_k, scaled=scaled)
    model = make(cfg)
    assert model.W_q.weight.shape == model.W_k.weight.shape == (d_k, cfg.d)
    keys, values, query, _ = make_batch(cfg, 5, torch.Generator().manual_seed(0))
    logits, A = model(keys, values, query)
    assert logits.shape == (5, cfg.n_values)
    assert A.shape == (5, 1, cfg.n_pairs)
    torch.testing.assert_close(A.sum(-1), torch.ones(5, 1))


def test_same_seed_same_model_and_different_seed_different_model():
    a, b, c = make(RecallConfig()), make(RecallConfig()), make(RecallConfig(seed=1))
    assert torch.equal(a.W_q.weight, b.W_q.weight)
    assert not torch.equal(a.W_q.weight, c.W_q.weight)


def test_training_is_deterministic(deterministic):
    first = train(make(TINY), TINY)
    second = train(make(TINY), TINY)
    other = train(make(replace(TINY, seed=1)), replace(TINY, seed=1))
    assert first == second
    assert first["loss"] != other["loss"]


def test_train_returns_documented_plain_data():
    info = train(make(TINY), TINY)
    assert set(info) == {
        "config", "step", "loss", "acc", "final_loss", "final_acc", "chance_acc", "init", "final", "trace",
    }
    assert info["step"] == [3, 6]
    assert len(info["loss"]) == len(info["acc"]) == 2
    assert info["chance_acc"] == 1 / TINY.n_values
    assert info["config"] == json.loads(json.dumps(info["config"]))
    assert set(info["trace"]) == set(info["init"])
    assert all(len(v) == 3 for v in info["trace"].values())  # step 0, then each window
    assert info["trace"]["entropy"][0] == info["init"]["entropy"]
    json.dumps(info)  # the cache stores it as JSON


@pytest.mark.parametrize("d_k,scaled", SETTINGS)
def test_diagnostics_are_finite_and_in_range(d_k, scaled):
    cfg = RecallConfig(d_k=d_k, scaled=scaled)
    d = diagnose(make(cfg), cfg)
    assert all(math.isfinite(v) for v in d.values())
    assert 0 <= d["entropy"] <= d["entropy_max"] == pytest.approx(math.log(cfg.n_pairs))
    assert 1 / cfg.n_pairs <= d["max_weight"] <= 1
    assert 0 <= d["saturated"] <= 1 and 0 <= d["attn_on_answer"] <= 1


def test_diagnose_leaves_no_gradients():
    model = make(RecallConfig())
    diagnose(model, RecallConfig())
    assert all(p.grad is None for p in model.parameters())


def test_score_gradient_matches_autograd():
    """diagnose's hand-written softmax backward agrees with autograd on explicit scores."""
    cfg = RecallConfig(d_k=512, scaled=False)
    model, N = make(cfg), 256
    keys, values, query, target = make_batch(cfg, N, torch.Generator().manual_seed(DIAG_SEED))
    q = model.W_q(model.key_emb(query)).unsqueeze(1)  # (N, 1, d_k)
    x = model.key_emb(keys) + model.value_emb(values)  # (N, T, d)
    scores = q @ model.W_k(x).transpose(-2, -1)  # (N, 1, T), scale 1: unscaled
    scores.retain_grad()
    out = torch.softmax(scores, dim=-1) @ model.W_v(x)  # (N, 1, d)
    F.cross_entropy(model.readout(out.squeeze(1)), target, reduction="sum").backward()
    expected = scores.grad.norm(dim=-1).median().item()  # per-sequence loss gradients
    assert diagnose(model, cfg, N=N)["grad_scores"] == pytest.approx(expected, rel=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unscaled_large_dk_saturates_at_init(seed):
    """The measured mechanism: saturated rows pass little gradient to the scores,
    yet W_q and W_k receive larger gradients than in the scaled model."""
    scaled, unscaled = (RecallConfig(d_k=512, scaled=s, seed=seed) for s in (True, False))
    s, u = diagnose(make(scaled), scaled), diagnose(make(unscaled), unscaled)
    # same weights (same seed), so the logits differ by exactly the deleted factor
    assert u["logit_std"] / s["logit_std"] == pytest.approx(math.sqrt(512), rel=1e-3)
    assert s["entropy"] > 0.9 * s["entropy_max"]  # scaled: nearly uniform
    assert u["entropy"] < 0.2 * s["entropy"]  # unscaled: nearly one-hot
    assert u["saturated"] > 0.2 and s["saturated"] == 0
    assert u["grad_A"] == pytest.approx(s["grad_A"], rel=0.2)  # the same signal arrives at A ...
    assert u["grad_scores"] < 0.3 * s["grad_scores"]  # ... but little gets through the softmax
    assert u["grad_W_q"] > 5 * s["grad_W_q"] and u["grad_W_k"] > 5 * s["grad_W_k"]


def test_small_dk_unscaled_does_not_saturate():
    cfg = RecallConfig(d_k=8, scaled=False)
    d = diagnose(make(cfg), cfg)
    assert d["entropy"] > 0.7 * d["entropy_max"] and d["saturated"] == 0


def test_the_task_is_learnable_in_a_few_steps():
    cfg = RecallConfig(d_k=8, steps=60, log_every=20, n_eval=256)
    info = train(make(cfg), cfg)
    assert info["chance_acc"] == 1 / 16
    assert info["final_acc"] > 0.5
    assert info["final"]["attn_on_answer"] > 0.5 > info["init"]["attn_on_answer"]


def test_run_caches_and_grid_orders(tmp_path, monkeypatch):
    monkeypatch.setenv("REC11_CACHE_DIR", str(tmp_path))
    tiny = replace(TINY, steps=2, log_every=2)
    _, info = load(tiny)
    assert len(list(tmp_path.glob("recall-*.pt"))) == 1
    _, again = load(tiny)  # loaded, not retrained
    assert again == info
    infos = grid(tiny, lrs=(1e-3, 1e-2))
    got = [(i["config"]["lr"], i["config"]["d_k"], i["config"]["scaled"]) for i in infos]
    assert got == [(lr, d_k, s) for lr in (1e-3, 1e-2) for d_k, s in SETTINGS]
    assert len(list(tmp_path.glob("recall-*.pt"))) == 8  # tiny at lr 1e-2 was already cached
