"""Shared fixtures: the repository root, and a small book built from the real config."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

JUPYTEXT_HEADER = """\
---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
---
"""


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
            [sys.executable, "-m", "rec11.book.build", "--book", str(self.path)],
            capture_output=True, text=True, timeout=900,
        )


@pytest.fixture
def mini_book(tmp_path) -> MiniBook:
    return MiniBook(tmp_path)
