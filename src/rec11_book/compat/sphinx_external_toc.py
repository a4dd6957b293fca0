"""What the build relies on in sphinx-external-toc (pinned 1.1.0) beyond its documented API."""

from __future__ import annotations

import fnmatch
import glob as _glob
import os
from pathlib import Path

from rec11_book.compat import lacks_text, reliance


class _PrunedGlob:
    """Stands in for the ``glob`` module inside ``sphinx_external_toc.events``: its recursive
    walk of the book skips the folders ``exclude_patterns`` excludes (files in them are
    dropped afterwards either way, so the result is the same)."""

    def __init__(self, srcdir: str, exclude_patterns: list[str]):
        from sphinx.util.matching import Matcher

        self.srcdir = Path(srcdir).resolve()
        self._excluded = Matcher(exclude_patterns)  # the same test the toc applies afterwards

    def __getattr__(self, name):
        return getattr(_glob, name)

    def iglob(self, pathname, *, recursive=False, **kwargs):
        head, sep, suffix_pattern = str(pathname).partition(os.sep + "**" + os.sep)
        if not (recursive and sep and Path(head).resolve() == self.srcdir and os.sep not in suffix_pattern):
            yield from _glob.iglob(pathname, recursive=recursive, **kwargs)
            return
        for folder, dirs, files in os.walk(self.srcdir):
            relative = os.path.relpath(folder, self.srcdir)
            relative = "" if relative == "." else relative.replace(os.sep, "/")
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                             and not self._excluded(f"{relative}/{d}".lstrip("/")))
            for name in sorted(files):
                if not name.startswith(".") and fnmatch.fnmatch(name, suffix_pattern):
                    yield os.path.join(folder, name)


def _probe() -> list[str]:
    from sphinx_external_toc import events

    wrong = [] if getattr(events, "glob", None) is _glob else ["sphinx_external_toc.events.glob is the glob module"]
    return wrong + lacks_text("sphinx_external_toc", 'glob.iglob(\n                str(Path(app.srcdir) / "**" / '
                                                     'f"*{suffix}"), recursive=True')


@reliance(probe=_probe)
def prune_walk(srcdir: str, exclude_patterns: list[str]) -> None:
    """Make the toc's walk through the book (``only_build_toc_files``) skip excluded folders
    (``node_modules``, ``.venv``: tens of thousands of entries, about 0.9 s a build).

    Relies on: ``sphinx_external_toc.events`` walking the book with its module-level ``glob``,
    ``glob.iglob(str(srcdir / "**" / f"*{suffix}"), recursive=True)``, then dropping the files
    ``exclude_patterns`` matches; this swaps that module-level name.
    Package: sphinx-external-toc. Checked against: 1.1.0.
    Public alternative: none (the toc takes no list of folders to skip).
    """
    try:
        from sphinx_external_toc import events
    except ImportError:
        return
    if getattr(events, "glob", None) is _glob:
        events.glob = _PrunedGlob(srcdir, list(exclude_patterns))
