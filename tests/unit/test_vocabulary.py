"""Every model module speaks the package's vocabulary (the table in rec11/__init__.py).

``XConfig`` → ``make(cfg)`` (seeded, the caller's random state untouched) →
``train(model, ...)`` → ``load(cfg)``: the trained model, from the model cache when it
is there. One test per verb, run on every model module with a tiny config.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from rec11 import diffusion, grammar, lm, recall, sentence_vae, vae
from rec11.gpt import GPTConfig

TINY_GPT = GPTConfig(vocab_size=len(grammar.VOCAB), n_layer=1, n_head=2, d=16)
TINY = {  # module -> (a config that trains in about a second, its cache file prefix)
    recall: (recall.RecallConfig(steps=2, log_every=2, n_eval=64), "recall"),
    lm: (lm.LMConfig(model=TINY_GPT, steps=4, batch_size=16, warmup=1, n_heldout=20), "grammar-gpt"),
    vae: (vae.VAEConfig(z_dim=2, hidden=16, epochs=1, batch_size=100), "vae-digits"),
    sentence_vae: (sentence_vae.SentenceVAEConfig(decoder=TINY_GPT, z_dim=3, emb=8, hidden=16, steps=4,
                                                  batch_size=16), "sentence-vae"),
    diffusion: (diffusion.DiffusionConfig(T=50, hidden=16, t_dim=8, steps=4, batch_size=32, n_train=200),
                "diffusion-2d"),
}
MODULES = pytest.mark.parametrize("module", TINY, ids=lambda m: m.__name__.split(".")[-1])


@MODULES
def test_the_config_is_a_frozen_dataclass_with_a_seed(module):
    cfg, _ = TINY[module]
    assert dataclasses.is_dataclass(cfg) and type(cfg).__dataclass_params__.frozen
    assert "seed" in {f.name for f in dataclasses.fields(cfg)}


@MODULES
def test_make_is_seeded_and_leaves_the_callers_random_state_alone(module):
    cfg, _ = TINY[module]
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    a, b = module.make(cfg), module.make(cfg)
    assert torch.equal(torch.random.get_rng_state(), before), "make() moved the caller's random state"
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(p, q), f"same seed, different {name}"
    other = module.make(dataclasses.replace(cfg, seed=cfg.seed + 1))
    assert any(not torch.equal(p, q) for p, q in zip(a.state_dict().values(), other.state_dict().values()))


@MODULES
def test_load_trains_once_then_reads_the_cache(module, tmp_path, monkeypatch):
    cfg, prefix = TINY[module]
    monkeypatch.setenv("REC11_CACHE_DIR", str(tmp_path))
    model, info = module.load(cfg)
    assert len(list(tmp_path.glob(f"{prefix}-*.pt"))) == 1
    assert not model.training

    def must_not_train(*args):
        raise AssertionError("train was called on a cache hit")

    monkeypatch.setattr(module, "train", must_not_train)
    again, info_again = module.load(cfg)
    assert info_again == info
    for (name, p), q in zip(model.state_dict().items(), again.state_dict().values()):
        assert torch.equal(p, q), name
    assert not again.training
