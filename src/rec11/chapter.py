"""The chapter as its two files outline it: the pages in ``_toc.yml``, the course facts in ``_config.yml``.

The session plan page reads them in its kernel, and the book's build
(``rec11_book``) reads the same, so the page and the build agree on one reading.
Standard library and PyYAML only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class TocPage:
    """A chapter of ``_toc.yml`` (or its root): its part, and the pages under it."""

    docname: str
    part: str | None
    further: tuple[str, ...]  # its sections, at any depth: the going-further pages


def toc_chapters(root: Path) -> list[TocPage]:
    """The root and every chapter of ``_toc.yml``, in order, each with its sections."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    strip = lambda f: f.removesuffix(".md")
    chapters = [TocPage(strip(toc["root"]), None, ())]

    def below(entries):
        for entry in entries or []:
            if "file" in entry:
                yield strip(entry["file"])
            yield from below(entry.get("sections"))

    def walk(entries, part):
        for entry in entries or []:
            if "file" in entry:
                chapters.append(TocPage(strip(entry["file"]), part, tuple(below(entry.get("sections")))))
            for inner in entry.get("parts", []):
                walk(inner.get("chapters"), inner.get("caption"))

    walk(toc.get("chapters"), None)
    for part in toc.get("parts", []):
        walk(part.get("chapters"), part.get("caption"))
    return chapters


def toc_pages(root: Path) -> list[str]:
    """Docnames in ``_toc.yml`` order (root first, then chapters and their sections)."""
    return [page for chapter in toc_chapters(root) for page in (chapter.docname, *chapter.further)]


def load_substitutions(root: Path) -> dict:
    """The course facts: ``parse.myst_substitutions`` in ``_config.yml``."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    return config["parse"]["myst_substitutions"]
