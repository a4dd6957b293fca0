"""The torch settings of the fast tests (tests/unit and tests/machinery), defined once: each
folder's conftest.py imports the fixture, which makes it autouse there."""

import pytest
import torch


@pytest.fixture(autouse=True)
def small_and_deterministic(monkeypatch):
    """Every unit test: one torch thread, deterministic kernels, seed 0; restored after.

    The tensors in these tests are tiny: a second thread only adds synchronisation,
    and on a busy 2-core machine the suite ran several times slower with two. That
    holds for the tiny models they train too (``rec11.cache`` trains on two threads).
    """
    monkeypatch.setenv("REC11_TRAIN_THREADS", "1")
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(deterministic)
