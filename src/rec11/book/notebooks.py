"""The notebooks readers download: each page as it ran, with its outputs.

The theme's download menu offers ``_sources/<page>.ipynb``, a copy of the notebook
myst-nb writes to ``jupyter_execute/``. For a page taken from jupyter-cache that
notebook has no outputs at all (myst-nb merges the cached outputs into a copy it
renders, after writing the file). So, once the build has finished, this extension
writes every download again:

* the outputs come from the jupyter-cache record that matches the page, which is
  exactly what the page rendered (``executed_notebooks``; the figure export reads
  the same);
* the build's own bookkeeping goes: the dependency-fingerprint cell that
  ``rec11.book.fingerprints`` appends, the glue records (outputs only the book's text
  reads), myst-nb's source map;
* each figure keeps one image format, PNG: JupyterLab shows it whether or not the
  notebook is trusted, and it is the lighter one;
* numbers the text pastes with ``{glue:text}`` (from this page or another) and the
  course facts written ``{{ name }}`` are filled in, so the markdown reads as the
  page does.

Sphinx-side: imports no torch and no model code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat

from rec11.book.fingerprints import MARK as FINGERPRINT

GLUE_RECORD = "application/papermill.record/"
GLUE_ROLE = re.compile(r"\{glue(?::text|:md)?\}`([^`]+)`")
SUBSTITUTION = re.compile(r"\{\{\s*(\w+)\s*\}\}")
BUILD_METADATA = ("source_map", "jupytext")  # myst-nb's line map; the .md pairing


def executed_notebooks(build: Path):
    """(page path relative to the book, notebook with outputs) for every executed page.

    ``build`` is the ``_build`` folder. A page with no matching cache record (a
    build with execution off) is yielded as myst-nb wrote it.
    """
    from jupyter_cache import get_cache

    cache_path = build / ".jupyter_cache"
    cache = get_cache(cache_path) if cache_path.is_dir() else None
    executed = build / "jupyter_execute"
    for nb_path in sorted(executed.rglob("*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        if cache is not None:
            try:
                _, nb = cache.merge_match_into_notebook(nb)
            except KeyError:
                pass
        yield nb_path.relative_to(executed).with_suffix(".md"), nb


def paste_glue(text: str, lookup) -> tuple[str, list[str]]:
    """``text`` with each glue role replaced by its value; and the keys not found.

    ``lookup(key)`` returns the glued output's ``data`` dict, or ``{}``.
    """
    from myst_nb.core.variables import format_plain_text

    missing = []

    def paste(match: re.Match) -> str:
        page, sep, rest = match[1].rpartition("::")
        name, _, fmt = rest.partition(":")
        key = f"{page}{sep}{name}"
        data = lookup(key)
        if match[0].startswith("{glue:md}") and "text/markdown" in data:
            return data["text/markdown"]
        if "text/plain" not in data:
            missing.append(key)
            return match[0]
        return format_plain_text(data["text/plain"], fmt)

    return GLUE_ROLE.sub(paste, text), missing


class GlueValues:
    """Glued values of every page, read from myst-nb's ``<page>.glue.json`` files.

    A key is ``name`` (the page's own) or ``path/page.md::name`` (another page's,
    its path relative to this page's folder, as myst-nb reads it).
    """

    def __init__(self, executed: Path, page: Path):
        self.executed, self.page, self.pages = executed, page, {}

    def _page(self, page: Path) -> dict:
        if page not in self.pages:
            path = (self.executed / page).with_suffix(".glue.json")
            self.pages[page] = json.loads(path.read_text()) if path.is_file() else {}
        return self.pages[page]

    def __call__(self, key: str) -> dict:
        page, _, name = key.rpartition("::")
        glued = self._page(self.page.parent / page if page else self.page)
        return glued.get(name, {}).get("data", {})


def for_download(nb, glue=lambda key: {}, facts: dict | None = None):
    """A copy of an executed page's notebook, fit to hand to a reader."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # a deep copy
    nb.cells = [c for c in nb.cells if not (c.cell_type == "code" and c.source.startswith(FINGERPRINT))]
    for key in BUILD_METADATA:
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = SUBSTITUTION.sub(
                lambda m: str((facts or {}).get(m[1], m[0])), paste_glue(cell.source, glue)[0])
            continue
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if any(kind.startswith(GLUE_RECORD) for kind in data):
                continue
            if "image/png" in data:
                data.pop("image/svg+xml", None)
            outputs.append(output)
        cell.outputs = outputs
    nbformat.validate(nb)
    return nb


def write_downloads(build: Path, html: Path, facts: dict | None = None) -> list[Path]:
    """Rewrite each ``_sources/<page>.ipynb`` download the theme offers. Returns them."""
    written = []
    executed = build / "jupyter_execute"
    for relative, nb in executed_notebooks(build):
        target = (html / "_sources" / relative).with_suffix(".ipynb")
        if not target.is_file():  # the theme offers no download for this page
            continue
        glue = GlueValues(executed, relative)
        nbformat.write(for_download(nb, glue, facts), target)
        written.append(target)
    return written


def on_build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        write_downloads(Path(app.outdir).parent, Path(app.outdir), app.config.myst_substitutions)


def setup(app) -> dict:
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
