"""Explorable figures: a slider over frames the page drew when it ran.

A cell whose output is ``rec11.explore.explore(draw, values, ...)`` carries every
frame as a JSON mime bundle (``rec11.explore.MIME``), plus the default frame as PNG
and SVG. This module is the page side of it:

* **A myst-nb mime renderer** (``ExploreRenderer``, registered under the entry point
  group ``myst_nb.mime_renderers`` in ``pyproject.toml``) turns the bundle into an
  ``explorable`` node whose children are one image per frame, each with its own alt
  text. The bundle's PNG and SVG are for notebooks, slides and ``figures/``; on the
  page they render to nothing, so the figure is drawn once.
* **The HTML** is the default frame's ``<img>``, then a labelled native range input
  with the value in words (``<output>`` and ``aria-valuetext``), its place kept but
  invisible until ``static/rec11-explore.js`` runs (nothing moves when it appears), and a
  polite live region that reads each new frame's alt text. The other frames' files are
  listed in a JSON script tag and are requested only when the reader moves the control.
  Without JavaScript, in print, in the PDF and on a slide it is the default frame with
  its caption; print adds a line saying that the online page can be explored.
* **Checks**, each a warning at the page and line (``-W`` fails the build): a bundle
  without frames or with a default out of range, and an explorable figure outside a
  captioned figure (``mystnb: figure: caption``). A frame without alt text is caught
  with every other image by ``rec11_book.extensions.accessibility``.
"""

from __future__ import annotations

import hashlib
import html
import json
import posixpath
import urllib.parse
from base64 import b64decode
from typing import ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from rec11.explore import MIME
from rec11_book.shared.pages import line_of

logger = logging.getLogger(__name__)

_FALLBACKS = {"image/png", "image/svg+xml", "text/plain"}


class explorable(nodes.General, nodes.Element):
    """An explorable figure: one image child per frame, the default shown first."""


def _frame_image(renderer, frame: dict, number: int, label: str):
    png = b64decode(frame.get("png", ""))
    name = hashlib.sha256(png).hexdigest() + ".png"
    uri = renderer.write_file([name], png, overwrite=False, exists_ok=True)
    image = nodes.image(uri=uri, alt=str(frame.get("alt") or ""))
    image["rec11_frame"] = f"frame {number} of {label!r} ({frame.get('text', '?')})"
    return image


class ExploreRenderer:
    """myst-nb's plugin for the explorable bundle: every builder prefers it."""

    mime_priority_overrides: ClassVar[list] = [("*", MIME, 1)]

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if not data.output_metadata.get("rec11", {}).get("explore"):
            return None
        if data.mime_type in _FALLBACKS:
            return []  # the explorable node shows these frames already
        if data.mime_type != MIME or inline:
            return None
        spec = data.content
        frames, label = spec.get("frames") or [], str(spec.get("label") or "")
        default = spec.get("default", 0)
        problem = None
        if not label:
            problem = "has no label for its control"
        elif not frames:
            problem = "has no frames"
        elif not isinstance(default, int) or not 0 <= default < len(frames):
            problem = f"has a default frame ({default!r}) that is not one of its {len(frames)}"
        elif any(not str(f.get("text") or "").strip() or not f.get("png") for f in frames):
            problem = "has a frame without its value in words or without its image"
        if problem:
            renderer.logger.warning(f"explorable figure {problem}", subtype="explore",
                                    line=data.line)
            return []
        node = explorable(label=label, default=default, classes=["rec11-explore"],
                          texts=[str(f["text"]) for f in frames])
        node.extend(_frame_image(renderer, f, n, label) for n, f in enumerate(frames, 1))
        return [node]


def check_in_figure(app: Sphinx, doctree: nodes.document) -> None:
    """An explorable figure needs a caption and a name, as every figure does."""
    for node in doctree.findall(explorable):
        figure = node.parent
        while figure is not None and not isinstance(figure, nodes.figure):
            figure = figure.parent
        if figure is None or not any(isinstance(c, nodes.caption) for c in figure.children):
            logger.warning("explorable figure outside a captioned figure: give its cell "
                           "`mystnb: figure: {name, caption}`",
                           location=(app.env.docname, line_of(node)), type="rec11",
                           subtype="explore")


def _src(translator, image: nodes.image) -> str:
    """The frame's file as the HTML builder copies it (what visit_image writes)."""
    uri = image["uri"]
    if uri in translator.builder.images:
        return posixpath.join(translator.builder.imgpath,
                              urllib.parse.quote(translator.builder.images[uri]))
    return uri


def visit_explorable(self, node: explorable) -> None:
    self._rec11_explore = getattr(self, "_rec11_explore", 0) + 1
    ident = f"rec11-explore-{self._rec11_explore}"
    images, default, texts = list(node.children), node["default"], node["texts"]
    label = html.escape(node["label"])
    frames = [{"src": _src(self, image), "alt": image["alt"], "text": text}
              for image, text in zip(images, texts)]
    self.body.append(f'<div class="rec11-explore" id="{ident}">\n')
    self.visit_image(images[default])
    self.depart_image(images[default])
    value = html.escape(texts[default])
    listed = json.dumps(frames).replace("</", "<\\/")  # cannot end the script tag
    self.body.append(
        f'\n<div class="rec11-explore-control rec11-explore-waiting">\n'
        f'<label for="{ident}-input">{label}</label>\n'
        f'<input type="range" id="{ident}-input" min="0" max="{len(images) - 1}" step="1" '
        f'value="{default}" aria-valuetext="{value}">\n'
        f'<output for="{ident}-input" aria-hidden="true">{value}</output>\n'
        f'</div>\n'
        f'<p class="rec11-explore-live" aria-live="polite"></p>\n'
        f'<p class="rec11-explore-print">Online, a slider ({label}) shows this figure '
        f'at each of its {len(images)} settings.</p>\n'
        f'<script type="application/json" class="rec11-explore-frames">'
        f'{listed}</script>\n</div>\n')
    raise nodes.SkipNode


def _default_frame(self, node: explorable) -> None:  # other builders: the default frame
    self.dispatch_visit(node.children[node["default"]])
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict:
    app.setup_extension("rec11_book.extensions.assets")  # serves static/rec11-explore.js
    fallback = dict.fromkeys(("latex", "text", "man", "texinfo"), (_default_frame, None))
    app.add_node(explorable, html=(visit_explorable, None), **fallback)
    app.connect("doctree-read", check_in_figure)
    app.add_js_file("rec11-explore.js", defer="defer")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
