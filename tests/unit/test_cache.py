"""The model cache: keyed by config, training threads and code; never retrains on a hit."""

import dataclasses

import torch

from rec11 import cache


@dataclasses.dataclass(frozen=True)
class Config:
    width: int = 3


def test_load_or_train_trains_once_and_restores_the_same_weights(tmp_path, monkeypatch):
    monkeypatch.setenv("REC11_CACHE_DIR", str(tmp_path))
    calls = []

    def train(model):
        calls.append(1)
        with torch.no_grad():
            model.weight.fill_(0.5)
        return {"loss": [1.0, 0.5]}

    def make():
        return torch.nn.Linear(Config.width, 1)

    model, info = cache.load_or_train("lin", Config(), make, train)
    again, info_again = cache.load_or_train("lin", Config(), make, train)
    assert calls == [1]
    assert info == info_again == {"loss": [1.0, 0.5]}
    assert torch.equal(model.weight, again.weight) and not again.training
    cache.load_or_train("lin", Config(width=4), lambda: torch.nn.Linear(4, 1), train)
    assert calls == [1, 1], "a different config is a different model"
    monkeypatch.setenv("REC11_TRAIN_THREADS", "2")
    cache.load_or_train("lin", Config(), make, train)
    assert calls == [1, 1, 1], "weights trained on two threads round differently: another model"


def test_book_root_is_found_from_a_page_folder(root):
    from rec11.sources import book_root

    assert book_root(root / "book") == root


def test_every_page_that_imports_the_package_gets_a_fingerprint(root):
    from rec11_book.shared.pagefacts import page_modules
    from rec11_book.shared.pages import code_cells

    for page in sorted((root / "book").glob("*.md")):
        text = page.read_text()
        if "import rec11" in text or "from rec11" in text:
            assert page_modules(text), f"{page.name}: its rec11 imports were not found"
        for cell in code_cells(text):
            assert not cell.lstrip().startswith((":tags:", "---")), f"{page.name}: cell options left in the code"


def test_training_runs_on_the_training_threads_and_gives_the_page_its_own_back(tmp_path, monkeypatch):
    monkeypatch.setenv("REC11_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("REC11_TRAIN_THREADS", "2")
    seen = []

    def train(model):
        seen.append(torch.get_num_threads())
        return {}

    assert torch.get_num_threads() == 1  # the page's setting (tests/unit/conftest.py)
    cache.load_or_train("lin", Config(), lambda: torch.nn.Linear(Config.width, 1), train)
    assert seen == [2] and torch.get_num_threads() == 1


def test_training_threads_do_not_depend_on_the_cores(monkeypatch):
    """The thread count sets the float rounding: an 8-core laptop must train (or find in
    the cache) the same model as the two-core build and a kernel confined to one core."""
    monkeypatch.setattr(cache.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.delenv("REC11_TRAIN_THREADS", raising=False)
    assert cache.training_threads() == 1
    monkeypatch.setenv("REC11_TRAIN_THREADS", "2")
    assert cache.training_threads() == 2


def test_training_flushes_subnormals_and_the_page_keeps_them(tmp_path, monkeypatch):
    """A saturated softmax's tiny weights are subnormal floats, slow on x86: training flushes
    them to zero (Exercise 1's models that learn trained four times faster), and the
    student's own cells afterwards get IEEE arithmetic back."""
    monkeypatch.setenv("REC11_CACHE_DIR", str(tmp_path))
    tiny = torch.tensor([1e-39])  # below float32's smallest normal, 1.18e-38
    during = []

    def train(model):
        during.append((tiny * 1.0).item())
        return {}

    assert (tiny * 1.0).item() > 0, "torch keeps subnormals by default"
    cache.load_or_train("lin", Config(), lambda: torch.nn.Linear(Config.width, 1), train)
    if not torch.set_flush_denormal(False):  # a CPU without the flag: nothing to check
        return
    assert during == [0.0], "training should run with subnormals flushed to zero"
    assert (tiny * 1.0).item() > 0, "after training, the page's arithmetic keeps subnormals again"
