"""The book's pages as its Sphinx extensions see them.

* **Where things are.** The build's checks report a problem at the page and line
  where an editor can fix it. :func:`parse_cells` reads a page's MyST markdown itself
  (dependency fingerprints and the Live Code check read a page before Sphinx parses
  it); :func:`line_of` finds the line of a node Sphinx has already parsed.
* **What is kept per page.** An extension that records something about each page
  (its fingerprint, its notes, its reading time, its formulas) keeps it in the build
  environment, so that an incremental build re-reads only the changed pages:
  :func:`keep_per_page` sets up that record once for all of them.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx

_CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1\s*$", re.M | re.S)


def parse_cells(text: str) -> list[tuple[int, str, str]]:
    """(line, options, code) of every code cell of a MyST page.

    Options come first in a cell, either as ``:key: value`` lines or as a YAML block
    between ``---`` lines; they are not Python. ``line`` is the page line of the
    cell's first line of code.
    """
    cells = []
    for match in _CODE_CELL.finditer(text):
        lines = match[2].split("\n")
        options = []
        if lines[0].strip() == "---" and "---" in (ln.strip() for ln in lines[1:]):
            end = [ln.strip() for ln in lines].index("---", 1) + 1
            options, lines = lines[:end], lines[end:]
        else:
            while lines and re.match(r"^:[\w-]+:", lines[0]):
                options.append(lines.pop(0))
        line = text.count("\n", 0, match.start(2)) + 1 + len(options)
        cells.append((line, "\n".join(options), "\n".join(lines)))
    return cells


def code_cells(text: str) -> list[str]:
    """The code of every code cell of a MyST page, without the cell's options."""
    return [code for _, _, code in parse_cells(text)]


def line_of(node: nodes.Node) -> int | None:
    """The source line of a node, or of its nearest ancestor that has one."""
    while node is not None:
        if node.line:
            return node.line
        node = node.parent
    return None


def keep_per_page(app: Sphinx, name: str) -> None:
    """Keep ``env.<name>``, a dict keyed by docname, across incremental and parallel builds.

    It is created once, loses a page's entry when the page is re-read or removed, and
    takes the entries of the pages a parallel reader read.
    """

    def init(app):
        if not hasattr(app.env, name):
            setattr(app.env, name, {})

    def purge(app, env, docname):
        getattr(env, name).pop(docname, None)

    def merge(app, env, docnames, other):
        theirs = getattr(other, name)
        getattr(env, name).update({d: theirs[d] for d in docnames if d in theirs})

    app.connect("builder-inited", init, priority=400)  # before the extension's own set-up reads it
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
