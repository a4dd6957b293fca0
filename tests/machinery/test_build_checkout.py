"""`make build` refuses to build a checkout with another checkout's code (a copied .venv), and starts
without jsonschema's slow optional import."""

from pathlib import Path

import pytest

from rec11_book.commands import build

ROOT = Path(__file__).resolve().parents[2]


def test_this_checkout_builds_its_own_code():
    assert build.foreign_package(ROOT) is None


def test_a_copied_checkout_is_refused_with_the_fix(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'rec11'\n")
    (tmp_path / "src" / "rec11").mkdir(parents=True)
    problem = build.foreign_package(tmp_path)
    assert problem and str(tmp_path / "src" / "rec11") in problem and "rm -rf .venv" in problem
    assert build.main(["--book", str(tmp_path)]) == 1  # before it trains or runs anything
    assert capsys.readouterr().err.strip().endswith("Fix: rm -rf .venv, then make build again.")


def test_another_checkouts_build_package_is_refused_too(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'rec11-book'\n")
    (tmp_path / "src" / "rec11_book").mkdir(parents=True)
    problem = build.foreign_package(tmp_path)
    assert problem and "run rec11_book from" in problem and str(tmp_path / "src" / "rec11_book") in problem


def test_a_book_without_a_package_of_its_own_uses_the_installed_one(tmp_path):
    (tmp_path / "src" / "rec11").mkdir(parents=True)  # a throw-away book: no pyproject.toml
    assert build.foreign_package(tmp_path) is None


def test_a_build_removes_handout_pdfs_older_than_its_pages(tmp_path):
    import os
    import shutil

    shutil.copy(ROOT / "_config.yml", tmp_path / "_config.yml")
    name = build.load_substitutions(tmp_path)["handout"]
    html = tmp_path / "_build" / "html"
    (html / "book").mkdir(parents=True)
    pdfs = [html / name, html / name.replace(".pdf", "-instructor.pdf")]
    for pdf in pdfs:
        pdf.write_bytes(b"%PDF")
        os.utime(pdf, (1000, 1000))
    page = html / "book" / "p.html"
    page.write_text("<html></html>")
    os.utime(page, (500, 500))  # the pages are older: the PDFs are current
    assert build.remove_stale_handouts(tmp_path, html) == [] and all(p.exists() for p in pdfs)
    os.utime(page, (2000, 2000))  # a page rebuilt after the last make handout
    assert build.remove_stale_handouts(tmp_path, html) == pdfs and not any(p.exists() for p in pdfs)


def test_the_preview_says_what_to_use_where_it_cannot_fork(monkeypatch, capsys):
    import multiprocessing

    from rec11_book.commands import preview

    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert preview.main(["--book", str(ROOT)]) == 2
    said = capsys.readouterr().err
    assert "cannot fork" in said and "make build" in said


def test_models_already_trained_start_no_training_process(tmp_path, monkeypatch):
    """The build asks rec11.models's stamp itself: with every model in the cache it starts no
    Python (which would import torch to find nothing to do); without the stamp it does."""
    from rec11 import models

    (tmp_path / "_config.yml").write_text("title: t\n")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "p.md").write_text("```{code-cell} ipython3\nfrom rec11 import vae\n```\n")
    monkeypatch.setenv("REC11_CACHE_DIR", str(tmp_path / "models"))
    started = []
    monkeypatch.setattr(build.subprocess, "run", lambda cmd, **kw: started.append(cmd) or type("P", (), {
        "returncode": 0})())
    assert build.train_models(tmp_path) == 0 and started and started[0][-1] == "rec11.vae"
    started.clear()
    stamp = models.stamp(["rec11.vae"])
    stamp.parent.mkdir(parents=True)
    stamp.touch()
    assert build.train_models(tmp_path) == 0 and started == []


def test_the_build_blocks_jsonschemas_slow_import_before_the_pages_ahead_step(tmp_path, monkeypatch):
    """The pages-ahead step imports jupyter-cache, which imports jsonschema, whose optional
    ``rfc3987_syntax`` builds grammars for 1.8 s at import; ``make build`` blocks it first
    (compat.jsonschema), as the Sphinx child does."""
    import sys

    name = "rfc3987_syntax"
    held = sys.modules.pop(name, "absent")
    seen = {}

    def pages_ahead(*args, **kwargs):
        seen["blocked"] = name in sys.modules and sys.modules[name] is None
        raise SystemExit(0)

    monkeypatch.setattr(build.preexecute, "run", pages_ahead)
    monkeypatch.setattr(build, "train_models", lambda book: 0)
    (tmp_path / "_config.yml").write_text("title: t\n")
    try:
        with pytest.raises(SystemExit):
            build.main(["--book", str(tmp_path)])
    finally:
        sys.modules.pop(name, None)
        if held != "absent":
            sys.modules[name] = held
    assert seen == {"blocked": True}, "the pages-ahead step could import jsonschema's slow optional module"
