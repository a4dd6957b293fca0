"""Accessibility: alt text that is required and true, and fixes to the stock theme.

* **Alt text.** Every image must carry alt text a screen-reader user can act on.
  myst-nb falls back to the image's file path, which is not alt text. A missing,
  file-name or too-short alt text is a warning at the page and line, and ``-W``
  fails the build. Alt text takes numbers from the run as captions do:
  ``{glue:text}`key:.2f``` in the ``alt`` string is replaced by the page's glued
  value, and a key the page does not glue is a warning at the page and line.
* **The theme.** The launch buttons' logo image goes (a screen reader said "Binder
  logo Binder"), sphinx-exercise's repeated body ids are made unique, and
  ``static/rec11-a11y.js`` fixes what axe-core finds in the theme's own markup
  (see tests/browser/test_accessibility.py).
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from rec11_book.compat.book_theme import drop_button_images
from rec11_book.compat.myst_nb import output_folder_name
from rec11_book.compat.sphinx_exercise import shared_body_ids
from rec11_book.shared.pages import glued_values, line_of
from rec11_book.shared.plainmd import GLUE_ROLE, paste_glue

logger = logging.getLogger(__name__)

_IMAGE_FILE = re.compile(r"(^|/)[^/\s]+\.(png|svg|jpe?g|gif)$", re.I)
MIN_ALT = 15  # characters; "figure" or "plot of x" tells a blind reader nothing


def bad_alt(node: nodes.image) -> str | None:
    """Why this image's alt text fails, or None if it is real alt text."""
    alt = (node.get("alt") or "").strip()
    if not alt:
        return "has no alt text"
    if alt == node.get("uri") or _IMAGE_FILE.search(alt):
        return f"has only a file name as alt text ({alt!r})"
    if len(alt) < MIN_ALT:
        return f"has alt text too short to describe anything ({alt!r})"
    return None


def check_alt_text(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    glued = None
    for image in doctree.findall(nodes.image):
        if GLUE_ROLE.search(image.get("alt") or ""):
            glued = glued if glued is not None else glued_values(app, docname)
            # paste_glue calls the lambda before the loop moves on
            image["alt"], missing = paste_glue(
                image["alt"], lambda key: glued.get(key, {}).get("data", {}))  # noqa: B023
            for key in missing:
                logger.warning(f"figure alt text pastes {key!r}, which this page does not glue",
                               location=(docname, line_of(image)), type="rec11", subtype="alt")
        problem = bad_alt(image)
        if problem:
            if image.get("rec11_frame"):  # a frame of an explorable figure (rec11.explore)
                hint = f"({image['rec11_frame']}): its draw() must return the frame's alt text"
            elif output_folder_name() in image.get("uri", "") or "cell" in str(image.parent):
                hint = ("Fix: in the code cell's metadata, under `mystnb:`, add `image:` and under it "
                        "`alt: <what the figure shows>`.")
            else:
                hint = "Fix: give the image an `:alt:` option."
            logger.warning(
                f"figure {problem}; every figure needs alt text that says what it shows. {hint}".strip(),
                location=(docname, line_of(image)),
                type="rec11",
                subtype="alt",
            )


def drop_logo_images(app, pagename, templatename, context, doctree) -> None:
    """The theme's launch buttons show a logo image beside the word "Binder", with the alt
    text "Binder logo": a screen reader says "Binder logo Binder". The word is enough, so
    the image goes; every image left on a page is then a figure with real alt text.
    """
    drop_button_images(context)


def unique_exercise_ids(app, doctree, docname) -> None:
    """sphinx-exercise gives every exercise's and solution's body the same id
    (``exercise-content``, ``solution-content``); with two on a page the ids clash
    (axe: duplicate-id). Each body takes its box's id instead."""
    shared_ids = shared_body_ids()
    for section in doctree.findall(nodes.section):
        shared = [i for i in section["ids"] if i in shared_ids]
        owner = section.parent.get("ids", []) if section.parent is not None else []
        if shared and owner:
            section["ids"] = [f"{owner[0]}-{i}" if i in shared else i for i in section["ids"]]


def setup(app: Sphinx) -> dict:
    app.setup_extension("rec11_book.extensions.assets")  # serves static/rec11-a11y.js
    app.connect("doctree-read", check_alt_text)
    app.connect("html-page-context", drop_logo_images, priority=900)  # after the theme adds them
    app.connect("doctree-resolved", unique_exercise_ids)
    app.add_js_file("rec11-a11y.js", defer="defer")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
