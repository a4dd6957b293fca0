"""Shared fixtures: the repository root, and a small book built from the real config."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from run_support import SHARED, longest_first, shared

from rec11_tools.previewtime import free_port
from rec11_tools.robustness import commit_seed

ROOT = Path(__file__).resolve().parents[1]

JUPYTEXT_HEADER = """\
---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
---
"""


BOOK_SEED, BOOK_SEED_WHY = commit_seed(ROOT)


def pytest_report_header(config):
    return (f"the book is built and checked as a fresh retraining: REC11_SEED={BOOK_SEED} ({BOOK_SEED_WHY});"
            f" a claim that fails here fails again with: REC11_SEED={BOOK_SEED} make build")


# --- one build and one Jupyter server for the whole run (tests/run_support.py) ----------


def pytest_configure(config):
    if not hasattr(config, "workerinput") and SHARED not in os.environ:
        os.environ[SHARED] = tempfile.mkdtemp(prefix="rec11-tests-")
        config.rec11_shared = Path(os.environ[SHARED])


def pytest_sessionfinish(session, exitstatus):
    session.config.rec11_failed = exitstatus != 0


def pytest_terminal_summary(terminalreporter):
    """Tables the browser tests filled (page weights, timings), from every worker."""
    folder = Path(os.environ.get(SHARED, "/nonexistent"))
    tables: dict[str, dict] = {}
    for part in sorted(folder.glob("report-*.json")):
        for title, rows in json.loads(part.read_text()).items():
            tables.setdefault(title, {}).update(rows)
    for title, rows in tables.items():
        if not rows:
            continue
        columns = list(next(iter(rows.values())))
        terminalreporter.section(title)
        width = max(len(page) for page in rows)
        terminalreporter.write_line(f"{'page':<{width}}  " + "  ".join(f"{c:>22}" for c in columns))
        for page, row in rows.items():
            terminalreporter.write_line(f"{page:<{width}}  " + "  ".join(f"{row.get(c, ''):>22}" for c in columns))


def pytest_unconfigure(config):
    folder = getattr(config, "rec11_shared", None)
    if folder is None:
        return
    for pidfile in folder.glob("*.pid"):
        try:
            os.killpg(int(pidfile.read_text()), signal.SIGTERM)
        except ProcessLookupError:
            pass
    made = [f for f in folder.iterdir() if f.suffix not in (".lock", ".pid") and not f.name.startswith("report-")]
    if made and getattr(config, "rec11_failed", True):
        print(f"\nthe run's book and logs are kept in {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    os.environ.pop(SHARED, None)


def pytest_collection_modifyitems(items):
    """Mark ``book`` every test that reads the whole book (``built_book``, directly or through
    another fixture) and every browser test. ``make test`` runs every other test first, then
    these, each part on both cores (pytest-xdist): the book is built once for the run
    (tests/run_support.py). The longest files go first (``LONGEST_FIRST``); within a file the
    order stays."""
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if uses & {"built_book", "built_site"} or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.book)
    longest_first(items)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


class MiniBook:
    """A throw-away book: the real _config.yml, a copy of the package, pages we write."""

    def __init__(self, path: Path):
        self.path = path
        shutil.copy(ROOT / "_config.yml", path / "_config.yml")
        shutil.copytree(ROOT / "src" / "rec11", path / "src" / "rec11", ignore=shutil.ignore_patterns("__pycache__"))
        (path / "book").mkdir()

    def page(self, name: str, body: str) -> Path:
        page = self.path / "book" / f"{name}.md"
        page.write_text(JUPYTEXT_HEADER + "\n" + textwrap.dedent(body).lstrip())
        return page

    def toc(self, *pages: str) -> None:
        root, *rest = pages
        lines = ["format: jb-book", f"root: book/{root}"]
        if rest:
            lines += ["chapters:", *[f"  - file: book/{p}" for p in rest]]
        (self.path / "_toc.yml").write_text("\n".join(lines) + "\n")

    def build(self) -> subprocess.CompletedProcess:
        """The same command as `make build`, pointed at this book."""
        return subprocess.run(
            [sys.executable, "-m", "rec11_book.commands.build", "--book", str(self.path)],
            check=False, capture_output=True, text=True, timeout=900,
        )


@pytest.fixture
def mini_book(tmp_path) -> MiniBook:
    return MiniBook(tmp_path)




@pytest.fixture(scope="session")
def built_book() -> dict:
    """The whole book, built once per run by the README's build step.

    It is built into the run's shared folder with Live Code pointed at a local Jupyter
    server (``REC11_LIVE_CODE_*``), so the build tests and the browser tests of every worker
    read the same site. ``REC11_BROWSER_BOOK`` builds another book folder instead. The
    repository's execution cache is copied in when there is one: entries are keyed by
    content, so a reused entry is exactly what a cold run would produce.
    Returns {out, html, server_url, token, log, seed}: a kernel a test starts runs at
    ``seed`` (``REC11_SEED``) to load the models this build trained, not train its own.
    """
    with shared("book") as folder:
        record = folder / "book.json"
        if not record.exists():
            record.write_text(json.dumps(_build_book(folder / "book")))
        book = json.loads(record.read_text())
    assert "failed" not in book, book["failed"]  # the other worker's build failed: the same message
    return {**book, "out": Path(book["out"]), "html": Path(book["html"])}


def _build_book(out: Path) -> dict:
    book = Path(os.environ.get("REC11_BROWSER_BOOK") or ROOT).resolve()
    cache = book / "_build" / ".jupyter_cache"
    if cache.is_dir():
        shutil.copytree(cache, out / "_build" / ".jupyter_cache")
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "REC11_SEED": str(BOOK_SEED), "REC11_LIVE_CODE_SOURCE": "jupyter-server",
           "REC11_LIVE_CODE_URL": f"http://127.0.0.1:{port}/", "REC11_LIVE_CODE_TOKEN": token}
    result = subprocess.run(
        [sys.executable, "-m", "rec11_book.commands.build", "--book", str(book), "--out", str(out),
         "--figures", str(out / "figures")],
        check=False, capture_output=True, text=True, timeout=2400, env=env,
    )
    if result.returncode != 0:
        return {"failed": f"the book did not build under REC11_SEED={BOOK_SEED} ({BOOK_SEED_WHY});"
                          f" reproduce with: REC11_SEED={BOOK_SEED} make build\n"
                          f"{(result.stdout + result.stderr)[-6000:]}"}
    return {"out": str(out), "html": str(out / "_build" / "html"), "server_url": f"http://127.0.0.1:{port}/",
            "token": token, "log": result.stdout, "seed": BOOK_SEED}
