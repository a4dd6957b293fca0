"""A claim is a measured value held to a threshold: checked, recorded, and reproducible."""

import math

import pytest

from rec11 import claims
from rec11.claims import claim


@pytest.fixture(autouse=True)
def fresh_record(monkeypatch):
    monkeypatch.setattr(claims, "RECORD", [])
    monkeypatch.delenv(claims.RECORD_ONLY, raising=False)
    for knob in claims.KNOBS:
        monkeypatch.delenv(knob, raising=False)


def test_a_claim_that_holds_returns_its_value_and_is_recorded():
    assert claim(0.003, "<", 0.01, "p.md: 'the KL is gone'") == 0.003
    assert claims.RECORD == [{"message": "p.md: 'the KL is gone'", "value": 0.003, "op": "<",
                              "threshold": 0.01, "held": True}]


def test_a_false_claim_names_the_sentence_the_value_and_the_command_that_reproduces_it(monkeypatch):
    monkeypatch.setenv("REC11_SEED", "7")
    monkeypatch.setenv("REC11_TRAIN_THREADS", "1")
    with pytest.raises(AssertionError) as caught:
        claim(0.25, "<", 0.1, "p.md: 'the KL is gone'")
    text = str(caught.value)
    assert "p.md: 'the KL is gone'" in text and "measured 0.25" in text and "< 0.1" in text
    assert "REC11_SEED=7 REC11_TRAIN_THREADS=1 make build" in text
    assert claims.RECORD[-1]["held"] is False


def test_record_only_mode_records_a_false_claim_and_goes_on(monkeypatch):
    monkeypatch.setenv(claims.RECORD_ONLY, "1")
    claim(2, ">=", 3, "p.md: 'at least three'")
    assert claims.RECORD[-1]["held"] is False


def test_nan_is_false_and_tensors_and_numpy_numbers_are_values():
    import numpy as np
    import torch

    with pytest.raises(AssertionError):
        claim(math.nan, ">", 0, "p.md: nan")
    assert claim(torch.tensor(0.5), ">", np.float32(0.25), "p.md: tensor") == 0.5


def test_bad_operators_and_empty_messages_are_refused():
    with pytest.raises(ValueError, match="op must be one of"):
        claim(1, "==", 1, "p.md: equality is no statistic")
    with pytest.raises(ValueError, match="name the page"):
        claim(1, ">", 0, " ")


def test_slack_is_the_distance_on_the_right_side():
    assert claims.slack(0.3, ">", 0.1) == pytest.approx(0.2)
    assert claims.slack(0.3, "<", 0.1) == pytest.approx(-0.2)
