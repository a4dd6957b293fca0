"""The theme's page templates are compiled once, then loaded compiled by every later build.

Each Sphinx build makes a new Jinja environment, so every build compiled the same forty-odd
templates of the theme again (about a tenth of a second, a tenth of the preview's save to
page). Jinja's own bytecode cache keeps them in ``_build/.rec11-templates``; an entry whose
template's source changed is compiled again, so an edited or upgraded theme is never stale.
"""

from __future__ import annotations

from pathlib import Path

from rec11_book.compat.sphinx import cache_compiled_templates


def keep_compiled_templates(app) -> None:
    """The HTML builder loads its templates through a cache beside its output."""
    if app.builder.format == "html":
        cache_compiled_templates(app, Path(app.outdir).parent / ".rec11-templates")


def setup(app) -> dict:
    app.connect("builder-inited", keep_compiled_templates)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
