"""REC11_SEED: one knob that moves every seed the package uses, and keys the model cache."""

import dataclasses

import pytest
import torch

from rec11 import cache, data, recall, seeds, style
from rec11.recall import RecallConfig


def test_the_shift_is_an_integer_from_the_environment(monkeypatch):
    monkeypatch.delenv("REC11_SEED", raising=False)
    assert seeds.shift() == 0 and seeds.shifted(5) == 5, "at 0, the published book's seeds"
    monkeypatch.setenv("REC11_SEED", "2")
    assert seeds.shift() == 2 and seeds.shifted(5) not in range(100)
    monkeypatch.setenv("REC11_SEED", "two")
    with pytest.raises(ValueError, match="REC11_SEED must be an integer"):
        seeds.shift()


def test_no_two_retrainings_share_a_stream(monkeypatch):
    """With a sum, retraining 2's seed 5 was retraining 4's seed 3, and retraining 1's
    seeds 1 to 4 were retraining 0's seeds 2 to 5."""
    streams = set()
    for offset in range(1, 60):
        monkeypatch.setenv("REC11_SEED", str(offset))
        streams |= {seeds.shifted(seed) for seed in range(40)}
    monkeypatch.setenv("REC11_SEED", "0")
    streams |= {seeds.shifted(seed) for seed in range(40)}
    assert len(streams) == 60 * 40


def test_a_shift_is_another_draw_of_the_same_experiment(monkeypatch):
    cfg = RecallConfig(d_k=8)
    monkeypatch.setenv("REC11_SEED", "0")
    base = recall.make(cfg).W_q.weight.clone()
    points = data.toy_2d(n=50, seed=1)
    split = data.digits_split()[3]
    monkeypatch.setenv("REC11_SEED", "1")
    assert not torch.equal(recall.make(cfg).W_q.weight, base), "the shift reaches a model's initialisation"
    assert not torch.equal(data.toy_2d(n=50, seed=0), points), "seed 0 moved by 1 is not seed 1"
    assert not torch.equal(data.digits_split()[3], split), "and the data a model is judged on"


def test_the_page_set_up_seeds_the_global_stream_with_the_shift(monkeypatch):
    monkeypatch.setenv("REC11_SEED", "3")
    style.setup_page(seed=0)
    shifted = torch.rand(3)
    torch.manual_seed(seeds.shifted(0))
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
