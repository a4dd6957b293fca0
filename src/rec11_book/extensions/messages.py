"""Warnings of Sphinx, MyST and myst-nb, said as the book's own are: at the line, with the fix.

The book's checks end each message with what to do, at the line where it is done. Two
warnings that come from the tools do not, and this extension rewrites them as Sphinx logs
them (before it counts or prints them, so each is still one warning):

* **an undefined glue key** (myst-nb: "No key 'x' found in glue data for this document (use
  `path::key`, ...)"), reported at the first line of the role's paragraph: moved to the
  role's own line, and ended with the fix, a ``glue()`` call in a ``remove-cell`` of the page;
* **an unknown directive** (MyST: "Unknown directive type: 'slid'"): the nearest names of
  the directives this build knows, as ``did you mean {slide}?``.

Each relies on another package's internals (the warnings' texts, Sphinx's warning handlers,
docutils' directive registries) through ``rec11_book.compat``, whose functions are listed in
docs/architecture.md's table of internals and probed there and, on a live Sphinx
application, in ``tests/machinery/test_failed_builds.py``.
"""

from __future__ import annotations

import difflib
import logging
from pathlib import Path

from sphinx.application import Sphinx

from rec11_book.compat.docutils import directive_names
from rec11_book.compat.myst_nb import no_glue_key
from rec11_book.compat.myst_parser import unknown_directive
from rec11_book.compat.sphinx import warning_handlers
from rec11_book.shared.plainmd import GLUE_ROLE

# --- the rewrites ------------------------------------------------------------------------


def role_line(source: str, key: str, reported: int) -> int:
    """The line of the first glue role pasting ``key`` at or after ``reported`` (the first line
    of its paragraph), else ``reported``."""
    lines = source.splitlines()
    for number in range(max(reported, 1), len(lines) + 1):
        if any(role.split(":")[0] == key for role in GLUE_ROLE.findall(lines[number - 1])):
            return number
    return reported


def nearest(name: str, known: set[str]) -> list[str]:
    """The known directive names closest to ``name``, best first (at most three)."""
    return difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)


def rewrite(app: Sphinx, record: logging.LogRecord) -> None:
    """Rewrite ``record`` in place if it is one of the two warnings above."""
    try:
        message = record.getMessage()
    except (TypeError, ValueError):
        return
    glue = no_glue_key(message)
    if glue:
        key, location = glue["key"], getattr(record, "location", None)
        if isinstance(location, tuple) and location[0] and location[1]:
            path = Path(app.env.doc2path(location[0]))
            if path.is_file():
                record.location = (location[0], role_line(path.read_text(), key, location[1]))
        record.msg = (f"this page glues no {key!r}, so its {{glue}} role pastes nothing. "
                      f"Fix: glue({key!r}, value, display=False) in a remove-cell of this page"
                      f"{glue['tag'] or ''}")
        record.args = ()
        return
    unknown = unknown_directive(message)
    if unknown:
        name = unknown["name"]
        close = nearest(name, directive_names())
        guess = f"; did you mean {{{close[0]}}}?" if close else ""
        fix = (f"Fix: write {{{close[0]}}}" + (f" (or {', '.join(f'{{{c}}}' for c in close[1:])})" if close[1:] else "")
               if close else "Fix: correct the name, or load the extension that defines it in _config.yml")
        record.msg = f"Unknown directive type: {name!r}{unknown['rest']}{guess} {fix}{unknown['tag'] or ''}"
        record.args = ()


class Rewrite(logging.Filter):
    def __init__(self, app: Sphinx):
        super().__init__()
        self.app = app

    def filter(self, record: logging.LogRecord) -> bool:
        rewrite(self.app, record)
        return True


def install(app: Sphinx) -> None:
    """Put the rewrite first on Sphinx's warning handlers: it sees each warning as logged,
    before Sphinx suppresses, counts, locates or prints it."""
    for handler in warning_handlers():
        if not any(isinstance(f, Rewrite) for f in handler.filters):
            handler.filters.insert(0, Rewrite(app))


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", install)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
