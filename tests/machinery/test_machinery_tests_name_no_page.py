"""The machinery's tests never name a page of this book (issue 47): a test of the build, the tools
or a page-agnostic helper writes the pages it needs (the ``mini_book`` fixture of
tests/conftest.py, or text), so that it holds for any book and no edit of a page can break it.
Tests about this book's pages live apart: tests/unit, tests/build, tests/browser (tests/README.md).

A page is named by its path (``book/<docname>``, or ``<folder>/<name>`` below book/) or by its
file name (``<name>.md``), for every page ``_toc.yml`` lists. A word alone is no page's name:
a module (``rec11.attention``), a check (``check.attention``) or a note's block may share it.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def toc_docnames(root: Path = ROOT) -> list[str]:
    """Every page ``_toc.yml`` lists (its root, chapters and sections at any depth), as written."""
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            found.extend(str(node[key]) for key in ("root", "file") if key in node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load((root / "_toc.yml").read_text()))
    return found


def page_names(docnames: list[str]) -> re.Pattern:
    """A pattern that finds any of these pages named: ``book/<folder>/<name>``, ``<folder>/<name>``,
    ``<folder>/<name>.md`` and ``<name>.md`` for the page ``book/<folder>/<name>``; never inside a
    longer word (``ebook/<name>``, ``my_<name>.md``), nor a page's name that goes on
    (``book/<name>-solutions``)."""
    names = set()
    for doc in docnames:
        doc = doc.removesuffix(".md")
        below = doc.removeprefix("book/")
        names |= {re.escape(doc) + r"(?![\w-])", re.escape(below) + r"\.md\b",
                  re.escape(below.rsplit("/", 1)[-1]) + r"\.md\b"}
        if "/" in below:
            names.add(re.escape(below) + r"(?![\w-])")
    return re.compile(r"(?<![\w-])(?:" + "|".join(sorted(names, key=len, reverse=True)) + ")")


def named_pages(folder: Path, pattern: re.Pattern, base: Path = ROOT) -> list[str]:
    """``file:line: name`` for every page named in a file under ``folder`` (file relative to ``base``)."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        lines = path.read_text(errors="replace").splitlines()
        found += [f"{path.relative_to(base).as_posix()}:{n}: {m.group(0)}"
                  for n, line in enumerate(lines, 1) for m in pattern.finditer(line)]
    return found


def test_the_machinerys_tests_name_no_page_of_the_book():
    found = named_pages(HERE, page_names(toc_docnames()))
    assert not found, (
        f"{len(found)} place(s) in tests/machinery name a page of _toc.yml:\n"
        + "\n".join(f"  {f}" for f in found)
        + "\nFix: write the page the test needs (the mini_book fixture, or text) under another name, or,"
          " if the test is about this book's page, move it to tests/unit (tests/README.md).")


def test_the_rule_sees_each_page_named_and_no_word_alone(tmp_path):
    """Each page of _toc.yml, named as a test would name it, is found at its file and line; a
    module or a word that is a page's name, and a longer name that contains one, are not."""
    docnames = toc_docnames()
    assert len(docnames) > 1 and docnames[0].startswith("book/"), docnames
    pattern = page_names(docnames)
    for doc in docnames:
        doc = doc.removesuffix(".md")
        base = doc.rsplit("/", 1)[-1]
        for named, name in [(f'ROOT / "{doc}.md"', doc), (f'root / "book" / "{base}.md"', f"{base}.md"),
                            (f'docname="{doc}"', doc), (f"/work/x/{doc}.html", doc),
                            (f"\"{base}.md: 'a claim'\"", f"{base}.md")]:
            (tmp_path / "t.py").write_text(f"x = 1\n{named}\n")
            assert named_pages(tmp_path, pattern, tmp_path) == [f"t.py:2: {name}"], named
        for word in (f"rec11.{base}", f"check.{base}(x)", f'"{base}"', f"my_{base}.md", f"ebook/{base}",
                     f"{doc}-solutions.ipynb"):
            assert not pattern.search(word), word
