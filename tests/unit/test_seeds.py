"""REC11_SEED: one knob that shifts every seed the package uses, and keys the model cache."""

import dataclasses

import pytest
import torch

from rec11 import cache, data, recall, seeds, style
from rec11.recall import RecallConfig


def test_the_shift_is_an_integer_from_the_environment(monkeypatch):
    monkeypatch.delenv("REC11_SEED", raising=False)
    assert seeds.shift() == 0 and seeds.shifted(5) == 5
    monkeypatch.setenv("REC11_SEED", "2")
    assert seeds.shift() == 2 and seeds.shifted(5) == 7
    monkeypatch.setenv("REC11_SEED", "two")
    with pytest.raises(ValueError, match="REC11_SEED must be an integer"):
        seeds.shift()


def test_a_shift_is_another_draw_of_the_same_experiment(monkeypatch):
    cfg = RecallConfig(d_k=8)
    monkeypatch.setenv("REC11_SEED", "0")
    base = recall.make(cfg).W_q.weight.clone()
    points = data.toy_2d(n=50, seed=1)
    split = data.digits_split()[3]
    monkeypatch.setenv("REC11_SEED", "1")
    assert not torch.equal(recall.make(cfg).W_q.weight, base), "the shift reaches a model's initialisation"
    assert torch.equal(data.toy_2d(n=50, seed=0), points), "seed 0 shifted by 1 is seed 1"
    assert not torch.equal(data.digits_split()[3], split), "and the data a model is judged on"
    assert torch.equal(recall.make(RecallConfig(d_k=8, seed=-1)).W_q.weight, base)


def test_the_page_set_up_seeds_the_global_stream_with_the_shift(monkeypatch):
    monkeypatch.setenv("REC11_SEED", "3")
    style.setup_page(seed=0)
    shifted = torch.rand(3)
    torch.manual_seed(3)
    assert torch.equal(shifted, torch.rand(3))
    torch.set_num_threads(1)  # setup_page set the page's threads; the unit tests run on one


def test_the_model_cache_keys_a_model_on_the_shift(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class Config:
        width: int = 3

    monkeypatch.setenv("REC11_SEED", "0")
    key = cache.cache_key("lin", Config(), ["rec11.cache"], 2)
    monkeypatch.setenv("REC11_SEED", "1")
    assert cache.cache_key("lin", Config(), ["rec11.cache"], 2) != key
