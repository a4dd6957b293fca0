"""The model cache: keyed by config and code, never retrains on a hit."""

import dataclasses

import torch

from rec11 import cache


def test_imports_are_found_absolute_relative_and_through_from():
    code = "import rec11.attention\nfrom rec11 import style\nfrom rec11.cache import x\nimport numpy\n%matplotlib inline"
    assert cache.imported_modules(code) == {"rec11.attention", "rec11", "rec11.style", "rec11.cache", "rec11.cache.x"}
    assert cache.imported_modules("from .attention import attention", "rec11.gpt") == {"rec11.attention",
                                                                                      "rec11.attention.attention"}
    assert cache.imported_modules("from . import notes", "rec11.book", is_package=True) == {"rec11.book",
                                                                                           "rec11.book.notes"}


def test_the_closure_follows_imports_between_modules(tmp_path):
    pkg = tmp_path / "rec11"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from rec11.b import f\n")
    (pkg / "b.py").write_text("def f(): pass\n")
    (pkg / "c.py").write_text("x = 1\n")
    assert set(cache.module_closure(["rec11.a"], pkg)) == {"rec11.a", "rec11.b"}
    before = cache.code_hash(["rec11.a"], pkg)
    (pkg / "c.py").write_text("x = 2\n")
    assert cache.code_hash(["rec11.a"], pkg) == before, "an unrelated module does not change the hash"
    (pkg / "b.py").write_text("def f(): return 1\n")
    assert cache.code_hash(["rec11.a"], pkg) != before, "an imported module does"


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


def test_book_root_is_found_from_a_page_folder(root):
    assert cache.book_root(root / "book") == root


def test_an_imported_attribute_is_not_mistaken_for_a_module():
    # "from rec11.attention import attention" names a function; the installed package is searched
    assert set(cache.module_closure(["rec11.attention", "rec11.attention.attention"])) == {"rec11.attention"}


def test_every_page_that_imports_the_package_gets_a_fingerprint(root):
    from rec11.book.sphinxext import code_cells, page_modules

    for page in sorted((root / "book").glob("*.md")):
        text = page.read_text()
        if "import rec11" in text or "from rec11" in text:
            assert page_modules(text), f"{page.name}: its rec11 imports were not found"
        for cell in code_cells(text):
            assert not cell.lstrip().startswith((":tags:", "---")), f"{page.name}: cell options left in the code"


def test_training_runs_on_the_training_threads_and_gives_the_page_its_own_back(tmp_path, monkeypatch):
    monkeypatch.setenv("REC11_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("REC11_TRAIN_THREADS", "2")
    monkeypatch.setattr(cache.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    seen = []

    def train(model):
        seen.append(torch.get_num_threads())
        return {}

    assert torch.get_num_threads() == 1  # the page's setting (tests/unit/conftest.py)
    cache.load_or_train("lin", Config(), lambda: torch.nn.Linear(Config.width, 1), train)
    assert seen == [2] and torch.get_num_threads() == 1


def test_training_threads_never_exceed_the_cores_this_process_may_use(monkeypatch):
    monkeypatch.setenv("REC11_TRAIN_THREADS", "2")
    monkeypatch.setattr(cache.os, "sched_getaffinity", lambda pid: {0}, raising=False)  # taskset -c 0
    assert cache.training_threads() == 1
    monkeypatch.setenv("REC11_TRAIN_THREADS", "8")
    monkeypatch.setattr(cache.os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    assert cache.training_threads() == 4
