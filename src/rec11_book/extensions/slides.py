"""The instructor's slide deck, made from the book's own pages.

One reveal.js deck for the whole session is written to ``slides/index.html`` at the
end of every HTML build that has not failed (a failed build leaves the last good deck
in place: an instructor never presents the state that failed). Instructors mark slide content in the pages they already
edit, and nothing else:

* text for a slide sits in a ``:::{slide}`` block; on the page (and in print) the
  block is invisible: its paragraphs, lists, tables and math render as they would
  without it. With ``:deck-only:`` its content is on the slide only (a slide's
  subtitle that the page's own heading already says);
* a code cell tagged ``slide`` puts its code on the slide, or, for a cell whose input
  is hidden (``hide-input``), its figure, which gets a slide of its own after the
  slide it belongs to;
* a slide runs from the previous ``{instructor-note}`` of its page (or the top of
  the page) to the note that names it: that note's ``:slide:`` is its title, and
  the note, with its markup and its minutes, becomes its speaker notes.

Slide content after a page's last note, and a note with no slide content before it,
are warnings at the page and line (so ``-W`` fails the build).

**Why this mechanism.** The deck is composed from the HTML pages this build has just
written, in ``_toc.yml`` order: the code is the page's highlighted code, figures are
the page's own files in ``_images/`` (nothing re-executes, no second copy), math is
the SVG the build typeset for the pages (``rec11_book.extensions.mathsvg``). A second
Sphinx run with ``sphinx-revealjs`` would have to re-render every page: myst-nb drops
cell outputs for a builder it does not know, that builder replaces ``html_static_path``,
and its ``revealjs-notes`` flattens the notes' markup; it also makes one deck per page, not one per session.

reveal.js comes from ``node_modules`` (exact version in ``package.json``), found as
``rec11_book.extensions.assets`` finds Thebe and MathJax, and copied into
``_static/revealjs``. The deck loads no MathJax: its math is already SVG. A page keeps
one set of glyphs for all its formulas; in the deck each formula carries its own again,
so that it survives being copied into reveal's speaker view, with its glyph ids numbered
over the whole deck (``rec11_book.shared.pages.own_glyphs``).

Each core page with slides gets a small link to its first slide under its title,
and ``{agenda}`` with ``:slides:`` (``rec11_book.extensions.reading``) links every slide.
"""

from __future__ import annotations

import copy
import html
import json
import posixpath
import shutil
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from rec11.chapter import toc_pages
from rec11.notes import Note
from rec11_book.compat.myst_nb import cell_selector, tag_class
from rec11_book.shared.files import node_modules_candidates, skip_dev_files
from rec11_book.shared.pages import (
    DECK,
    Memo,
    build_failed,
    deck_uri,
    digest,
    glyph_sets,
    line_of,
    own_glyphs,
    slide_id,
    slides_of,
)
from rec11_book.shared.pages import SLIDE_MARK as MARK

logger = logging.getLogger(__name__)

DECK_ONLY = "rec11-deck-only"  # ... and with :deck-only:, hidden on the page (rec11.css)
CELL = tag_class("slide")  # myst-nb's class on a code cell tagged `slide`
NOTE = "instructor-note"  # the class of rec11_book.extensions.notes's note box
REVEAL = "reveal.js"  # the npm package
# what the deck loads: the core, the white theme and its font, the speaker view
REVEAL_FILES = ("dist/reset.css", "dist/reveal.css", "dist/reveal.js", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js", "LICENSE")
WIDTH, HEIGHT = 1280, 720


# --- the markup -------------------------------------------------------------------------


class Slide(SphinxDirective):
    """``{slide}``: its content goes on the slide; the page shows it unchanged."""

    has_content = True
    option_spec: ClassVar[dict] = {"deck-only": directives.flag}

    def run(self):
        self.assert_has_content()
        holder = nodes.Element()
        self.state.nested_parse(self.content, self.content_offset, holder)
        marks = [MARK, DECK_ONLY] if "deck-only" in self.options else [MARK]
        for child in holder.children:
            if isinstance(child, nodes.Element):
                child["classes"] += marks
                child.line = child.line or self.lineno
                child.source = child.source or self.state.document["source"]
        return holder.children[:]


def _is_content(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Element) and (MARK in node["classes"] or CELL in node["classes"])


def _is_note(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Element) and NOTE in node["classes"]


def check_marks(app: Sphinx, doctree: nodes.document) -> None:
    """Every piece of slide content belongs to a note after it; every note has some."""
    docname, pending = app.env.docname, []
    for node in doctree.findall(lambda n: _is_content(n) or _is_note(n)):
        if _is_content(node):
            if not any(_is_note(a) for a in _ancestors(node)):
                pending.append(node)
            continue
        if not pending:
            logger.warning(
                "this instructor note has no slide content: mark what its slide shows, between "
                "the previous note (or the top of the page) and this one, with a `{slide}` block "
                "or a code cell tagged `slide`",
                location=(docname, line_of(node)), type="rec11", subtype="slides")
        pending = []
    for node in pending[:1]:
        logger.warning(
            "slide content with no instructor note after it: a slide's content goes before the "
            "`{instructor-note}` whose :slide: names it, on the same page",
            location=(docname, line_of(node)), type="rec11", subtype="slides")


def _ancestors(node: nodes.Node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


# --- links from the pages -----------------------------------------------------------------


def link_to_deck(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """A small link to the page's first slide, under its reading-time line."""
    slides = slides_of(app.env, docname)
    section = next(doctree.findall(nodes.section), None)
    if not slides or section is None or app.builder.name != "html":  # the deck's only builder
        return
    after = next((p for p in section.children if "rec11-reading-time" in p.get("classes", [])), None)
    after = after or section.next_node(nodes.title)
    ref = nodes.reference("", "Slides for this page", refuri=deck_uri(docname, slides[0].slide))
    line = nodes.paragraph("", "", ref, classes=["rec11-slides-link"])
    after.parent.insert(after.parent.index(after) + 1, line)


# --- the deck -------------------------------------------------------------------------------


@dataclass
class DeckSlide:
    title: str
    minutes: float
    page: str
    content: list = field(default_factory=list)  # BeautifulSoup elements
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def _rebase(element, page: str) -> None:
    """Point the copied element's links and images at the same files, from the deck."""
    for tag in element.find_all(True):
        for attr in ("href", "src"):
            value = tag.get(attr)
            if not value or "://" in value or value.startswith(("/", "mailto:", "data:")):
                continue
            if value.startswith("#"):
                value = posixpath.basename(page) + ".html" + value
            target = posixpath.normpath(posixpath.join(posixpath.dirname(page), value))
            tag[attr] = posixpath.relpath(target, posixpath.dirname(DECK))


def _clean(element, page: str):
    """A copy fit for the deck: no ids (they would repeat), no ¶ anchors, no figure numbers.

    The glyphs of a typeset formula keep theirs (its SVG draws them by id); the deck
    gives each formula its glyphs and numbers them once it is whole
    (rec11_book.shared.pages.own_glyphs)."""
    element = copy.copy(element)
    # an explorable figure is its default frame on a slide, as in print
    for junk in element.select("a.headerlink, .caption-number, .rec11-explore-control, "
                               ".rec11-explore-live, .rec11-explore-print, .rec11-explore-frames"):
        junk.decompose()
    for tag in [element, *element.find_all(True)]:
        if not (tag.name == "path" and str(tag.get("id", "")).startswith("MJX-")):
            tag.attrs.pop("id", None)
    _rebase(element, page)
    return element


def page_slides(page: str, text: str, notes: tuple[Note, ...]) -> list[DeckSlide]:
    """The slides of one written page: its marked content, grouped by the notes after it."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    article = soup.select_one("article") or soup
    slides, content, figures, at = [], [], [], 0
    for element in article.select(f".{MARK}, {cell_selector('slide')}, div.{NOTE}"):
        if element.find_parent("div", class_=NOTE):
            continue
        classes = element.get("class", [])
        if NOTE in classes:
            note = notes[at]  # the page's notes as rec11.notes parsed them, in page order
            at += 1
            body = [_clean(child, page) for child in element.find_all(recursive=False)
                    if "admonition-title" not in child.get("class", [])]
            slides.append(DeckSlide(note.slide, note.minutes, page, content, figures, body))
            content, figures = [], []
        elif CELL in classes:
            hidden = {tag_class("hide-input"), tag_class("remove-input")} & set(classes)
            code = element.select_one(cell_selector(part="input"))
            if code is not None and not hidden:
                content.append(_clean(code, page))
            figures += [_clean(f, page) for f in element.select(f"{cell_selector(part='output')} figure")]
        else:
            content.append(_clean(element, page))
    return slides


def _html(element) -> str:
    """The element as HTML, every attribute in double quotes like the pages' own (BeautifulSoup
    would switch to single quotes around an alt text that quotes a word)."""
    from bs4.dammit import EntitySubstitution
    from bs4.formatter import HTMLFormatter

    class DoubleQuoted(HTMLFormatter):  # BeautifulSoup's "minimal" formatter, and " as &quot;
        def attribute_value(self, value):
            return super().attribute_value(value).replace('"', "&quot;")

    return element.decode(formatter=DoubleQuoted(entity_substitution=EntitySubstitution.substitute_xml))


def _figure_slide(slide: dict, figure: str, number: int, count: int) -> str:
    label = f"{slide['title']}: figure {number} of {count}" if count > 1 else f"{slide['title']}: figure"
    return (f'<section class="rec11-figure-slide" aria-label="{html.escape(label)}">\n'
            f'<h2>{html.escape(slide["title"])}</h2>\n{figure}\n</section>')


def _main_slide(slide: dict, first: bool) -> str:
    minutes = f"{slide['minutes']:g} min"
    body = "\n".join(slide["content"])
    notes = "\n".join(slide["notes"])
    kind = "rec11-title-slide" if first else "rec11-main-slide"
    title = html.escape(slide["title"])
    return (f'<section id="{slide_id(slide["title"])}" class="rec11-main-slide {kind}" '
            f'data-slide="{title}" data-minutes="{slide["minutes"]:g}">\n'
            f'<h2>{title}</h2>\n{body}\n'
            f'<aside class="notes"><p class="rec11-minutes"><strong>{minutes}</strong> · '
            f'<a href="{html.escape(posixpath.relpath(slide["page"] + ".html", "slides"))}">'
            f'the page</a></p>\n{notes}\n</aside>\n</section>')


def rendered(slide: DeckSlide) -> dict:
    """A slide as the deck writes it: its parts as HTML, kept per page between builds."""
    return {"title": slide.title, "minutes": slide.minutes, "page": slide.page,
            "content": [_html(e) for e in slide.content], "figures": [_html(f) for f in slide.figures],
            "notes": [_html(n) for n in slide.notes]}


PAGE = """<!DOCTYPE html>
<html lang="en" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Slides · {title}</title>
<link rel="stylesheet" href="../_static/revealjs/dist/reset.css">
<link rel="stylesheet" href="../_static/revealjs/dist/reveal.css">
<link rel="stylesheet" href="../_static/revealjs/dist/theme/white.css">
<link rel="stylesheet" href="../_static/pygments.css">
<link rel="stylesheet" href="../_static/rec11-deck.css">
</head>
<body>
<main>
<h1 class="rec11-deck-title">Slides · {title}</h1>
<div class="reveal">
<div class="slides">
{slides}
</div>
</div>
</main>
<script id="rec11-deck-config" type="application/json">{config}</script>
<script src="../_static/revealjs/dist/reveal.js"></script>
<script src="../_static/revealjs/plugin/notes/notes.js"></script>
<script src="../_static/rec11-deck.js"></script>
</body>
</html>
"""


# What shapes the deck besides the pages: this module's code and the HTML parser's version.
CODE = (Path(__file__).read_bytes(), metadata.version("beautifulsoup4"))


def compose(srcdir: Path, outdir: Path, env, title: str, memo: Memo | None = None) -> list[dict]:
    """Read the written pages in toc order and write the deck; return its slides. A page whose
    HTML and notes are as at the last build gives the slides it gave then (``memo``, per page)."""
    slides, glyphs = [], []
    for page in toc_pages(srcdir):
        notes = env.rec11_notes.get(page, [])
        written = outdir / f"{page}.html"
        if not (notes and written.is_file()):
            continue
        text = written.read_text()
        inputs = digest(page, tuple(notes), text, *CODE)
        kept = memo.unchanged(page, inputs) if memo else None
        if kept is None:
            kept = {"slides": [rendered(s) for s in page_slides(page, text, notes)],
                    "glyphs": "".join(glyph_sets(text))}  # what the page's formulas draw
            if memo:
                memo.record(page, inputs, [], kept)
        slides += kept["slides"]
        glyphs.append(kept["glyphs"])
    parts = []
    for index, slide in enumerate(slides):
        parts.append(_main_slide(slide, index == 0))
        figures = slide["figures"]
        parts += [_figure_slide(slide, f, n, len(figures)) for n, f in enumerate(figures, 1)]
    config = json.dumps({"width": WIDTH, "height": HEIGHT})
    deck = outdir / DECK
    deck.parent.mkdir(parents=True, exist_ok=True)
    deck.write_text(own_glyphs(PAGE.format(title=html.escape(title), slides="\n".join(parts + glyphs),
                                           config=config)))
    return slides


def copy_reveal(srcdir: Path, static: Path) -> str:
    """Copy reveal.js's files into ``_static/revealjs``; return its version."""
    candidates = node_modules_candidates(srcdir)
    found = next((m / REVEAL for m in candidates if (m / REVEAL / "dist" / "reveal.js").is_file()), None)
    if found is None:
        looked = ", ".join(str(c) for c in candidates)
        raise FileNotFoundError(
            f"rec11_book.extensions.slides: the npm package {REVEAL!r} is missing (looked in {looked}). Run "
            "`npm ci` in the repository root; the exact version is pinned in package.json.")
    for name in REVEAL_FILES:
        source, target = found / name, static / "revealjs" / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=skip_dev_files, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return json.loads((found / "package.json").read_text())["version"]


def write_deck(app: Sphinx, exception) -> None:
    """Compose the deck, unless the build has failed: a failed build leaves the last good
    deck in place (the last of the build-finished handlers, so that none fails after it)."""
    if app.builder.name != "html":
        return
    if build_failed(app, exception):
        logger.info("rec11: slides: the build failed, so %s stays as the last good build wrote it", DECK)
        return
    start = time.perf_counter()
    outdir, srcdir = Path(app.outdir), Path(app.srcdir)
    version = copy_reveal(srcdir, outdir / "_static")
    # Jupyter Book gives the book's title as html_title; it leaves Sphinx's project unset
    title = app.config.html_title or app.config.project
    # the deck is made from the written pages alone: if none of them changed, neither does it
    memo, inputs = Memo(Path(app.doctreedir), "deck"), deck_inputs(srcdir, outdir, app.env, title)
    kept = memo.unchanged(DECK, inputs)
    if kept is not None:
        logger.info("rec11: slides: %s as the last build wrote it (no page with slides changed)", DECK)
        return
    pages = Memo(Path(app.doctreedir), "deck-pages")
    slides = compose(srcdir, outdir, app.env, title, pages)
    pages.save()
    extra = sum(len(s["figures"]) for s in slides)
    memo.record(DECK, inputs, [outdir / DECK])
    memo.save()
    logger.info("rec11: slides: %d slides and %d figure slides (reveal.js %s) in %s, %.1f s",
                len(slides), extra, version, DECK, time.perf_counter() - start)


def deck_inputs(srcdir: Path, outdir: Path, env, title: str) -> str:
    """What :func:`compose` reads: the title, each written page that has notes (and its notes), and
    this module's own code and BeautifulSoup's version, which shape what it writes."""
    parts = [title, *CODE]
    for page in toc_pages(srcdir):
        notes = env.rec11_notes.get(page, [])
        written = outdir / f"{page}.html"
        if notes and written.is_file():
            parts += [page, tuple(notes), written.read_bytes()]
    return digest(*parts)


def setup(app: Sphinx) -> dict:
    app.setup_extension("rec11_book.extensions.assets")  # serves static/rec11-slides.css
    app.add_directive("slide", Slide)
    app.connect("doctree-read", check_marks)
    app.connect("doctree-resolved", link_to_deck, priority=600)  # after reading.py's time line
    app.connect("build-finished", write_deck)
    app.add_css_file("rec11-slides.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
