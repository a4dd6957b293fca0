"""Nothing on a page that the page does not use.

An audit of what the theme and the extensions put on every page, and what
this extension does about each (sizes gzipped):

======================================  ==========  =================================================
file                                    size        what happens
======================================  ==========  =================================================
MathJax ``tex-chtml.js`` + fonts        ~400 kB     gone: math is typeset at build time (``mathsvg``)
``searchtools.js``, ``language_data.js``  24 kB     dropped: pydata-sphinx-theme loads Sphinx's search
and ``searchindex.js``                              on every page for search-as-you-type, which this
                                                    book does not turn on; ``search.html`` loads its own
``sphinx-design.min.css``,                 11 kB     dropped from pages without sphinx-design markup
``design-tabs.js``                                  (today: every page)
``copybutton.js/.css``,                    7 kB     dropped from pages without a code block
``clipboard.min.js``
``exercise.css``                          0.3 kB    dropped from pages without an exercise
``rec11-quickcheck.js``                   2.0 kB    dropped from pages without a ``{quick-check}``
``rec11-explore.js``                      0.9 kB    dropped from pages without an explorable figure
``scripts/fontawesome.js``                0.3 kB    its tag dropped (``assets`` already empties it)
``styles/theme.css``                      0.1 kB    replaced by what it ``@import``\\ s (``basic.css``):
                                                    one round trip less before the first paint
``pydata-sphinx-theme.css``                66 kB    kept: the layout, the header, the sidebars
``bootstrap.js``                           24 kB    kept (deferred): the header's dropdown menus
``togglebutton.js/.css``                    4 kB    kept: instructor notes and dropdowns
======================================  ==========  =================================================

One restyle less: on a first visit the theme's deferred script switches ``<html data-theme>``
from ``auto`` to ``light`` or ``dark`` after the page has been styled, and the browser styles
every element again; a small inline script in ``<head>`` sets the same value before anything
is styled (``compat.theme.settle_theme_script``).

Files are only dropped from a page's HTML; they stay in ``_static`` (other pages, the
search page and the slide deck may use them).
"""

from __future__ import annotations

import re

from sphinx.application import Sphinx
from sphinx.util import logging

from rec11_book.compat.sphinx import asset_attributes, asset_filename, same_script
from rec11_book.compat.theme import settle_theme_script, trimmed_page_tags
from rec11_book.shared.pages import filter_pages

logger = logging.getLogger(__name__)

# (file name ends with, the page uses it if its body matches)
CONDITIONAL = [
    (("sphinx-design.min.css", "design-tabs.js"), re.compile(r'class="[^"]*\bsd-')),
    (("copybutton.js", "copybutton.css", "clipboard.min.js"), re.compile(r'class="highlight')),
    (("exercise.css",), re.compile(r'class="[^"]*\b(exercise|solution)\b')),
    (("rec11-quickcheck.js",), re.compile(r'<form class="quick-check"')),
    (("rec11-explore.js",), re.compile(r'<div class="rec11-explore"')),
]

# Tags the theme's templates write on every page (not in script_files, so removed from
# the rendered HTML): exact patterns, each with what replaces it.
TEMPLATE_TAGS = [
    *trimmed_page_tags(),
    # No favicon: without this the browser asks for /favicon.ico, a 404 in the console
    (re.compile(r"(?=</head>)"), '<link rel="icon" href="data:," />\n'),
]


# Scripts the theme and extensions put in <head> without ``defer``: each blocks the first
# paint until it has downloaded and run, though none draws anything before the page is
# parsed (each waits for DOMContentLoaded or runs on click). Deferred, they keep their
# order; ``documentation_options.js`` stays as it is (inline scripts use it at once).
DEFER = ("doctools.js", "sphinx_highlight.js", "clipboard.min.js", "copybutton.js", "sphinx-book-theme.js",
         "togglebutton.js", "design-tabs.js")


def _name(asset) -> str:
    return asset_filename(asset).split("?")[0]


def drop_unused(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    body = context.get("body")
    if doctree is None or body is None:
        return
    unused = tuple(name for names, used in CONDITIONAL if not used.search(body) for name in names)
    for key in ("css_files", "script_files"):
        if unused and context.get(key) is not None:
            context[key][:] = [a for a in context[key] if not _name(a).endswith(unused)]
    scripts = context.get("script_files")
    if scripts is not None:
        scripts[:] = [_deferred(js) if _name(js).endswith(DEFER) else js for js in scripts]


def _deferred(js):
    attributes = asset_attributes(js)
    if "defer" in attributes or "async" in attributes:
        return js
    attributes["defer"] = "defer"
    return same_script(js, attributes)


def trim_html(html: str) -> str:
    for pattern, replacement in TEMPLATE_TAGS:
        html = pattern.sub(replacement, html)
    return html


def wrap_templates(app: Sphinx) -> None:
    """Filter every page the HTML builder renders through ``trim_html``."""
    filter_pages(app, "trim", lambda html, context:
                 html if context.get("pagename") == "search" else trim_html(html))


def theme_mode(app: Sphinx, config) -> None:
    """pydata-sphinx-theme starts each page in the colour mode ``default_mode`` (an
    ``html_context`` value), which Jupyter Book leaves unset: every page then logs "Got
    invalid theme mode" to the console and falls back to ``auto``. Say ``auto`` (the same
    behaviour, without the error) unless the book chose a mode."""
    if not config.html_context.get("default_mode"):
        config.html_context["default_mode"] = "auto"


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", theme_mode)
    app.connect("html-page-context", drop_unused, priority=950)
    app.connect("builder-inited", wrap_templates)
    # Inline, first of the page's scripts: the colour theme is set before the page is styled.
    app.add_js_file(None, body=settle_theme_script(), priority=100)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
