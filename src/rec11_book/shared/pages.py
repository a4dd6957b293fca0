"""What the build's modules share: the one place for a helper more than one of them uses.

* **The chapter.** ``rec11.chapter`` reads ``_toc.yml`` and the course facts (the
  session plan page reads them too); :func:`for_instructors` says which pages a
  student edition leaves out.

* **Where things are.** The build's checks report a problem at the page and line
  where an editor can fix it. :func:`parse_cells` reads a page's MyST markdown itself
  (dependency fingerprints and the Live Code check read a page before Sphinx parses
  it); :func:`line_of` finds the line of a node Sphinx has already parsed.
* **What is kept per page.** An extension that records something about each page
  (its fingerprint, its notes, its reading time, its formulas) keeps it in the build
  environment, so that an incremental build re-reads only the changed pages:
  :func:`keep_per_page` sets up that record once for all of them.
* **Passes over rendered HTML.** :func:`filter_pages` hooks a pass into every page the
  HTML builder renders (the trim, the math glyphs). A typeset formula draws its glyphs
  by id: :func:`share_glyphs` gives a whole document (a page, the handout) one set of
  them; :func:`own_glyphs` gives each formula its own again (the deck, whose speaker
  view copies formulas one by one); :func:`unique_ids` numbers formula-owned glyphs.

Modules import from here, never from each other's internals.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from docutils import nodes

from rec11_book.compat.myst_nb import glue_file, output_folder
from rec11_book.compat.sphinx import filter_rendered_pages, warnings_fail_build

if TYPE_CHECKING:  # the build's own tools read pages without starting Sphinx
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


# The widest code line a student reads whole on a 390 px phone and on a printed page.
CODE_COLUMNS = 79


def long_code_lines(text: str) -> list[tuple[int, str]]:
    """(page line, text) of every line of a page's code cells wider than ``CODE_COLUMNS``."""
    return [(first + n, line) for first, _, code in parse_cells(text)
            for n, line in enumerate(code.split("\n")) if len(line) > CODE_COLUMNS]


# Set for the pages' kernels (the build, the downloads' runs): a model trained on a cache miss
# says nothing, so that a page looks the same warm or cold (rec11.cache reads it).
QUIET_TRAINING = "REC11_QUIET_TRAINING"
FAILED_PAGES = ".rec11-failed-pages"  # in the doctrees folder: pages a failed build warned about


# The event ``reading`` answers with the ``{agenda}`` as Markdown (fromdoc, slides, site).
AGENDA_MARKDOWN = "rec11-agenda-markdown"
# The kernelspec key that holds a page's fingerprint (``fingerprints``); the downloads leave it out.
FINGERPRINT_KEY = "rec11_fingerprint"


def package_dir(app: Sphinx) -> Path | None:
    """The course package's sources: ``src/rec11`` beside the book, else the installed copy."""
    local = Path(app.srcdir) / app.config.rec11_package_src
    return local if local.is_dir() else None


def failed_pages(doctrees: Path) -> set[str]:
    """The pages the last failed build reported a problem on: the next build reads them again,
    so that a problem is reported until it is fixed (Sphinx re-reads only changed files)."""
    path = doctrees / FAILED_PAGES
    return set(path.read_text().split()) if path.is_file() else set()


def glued_values(app: Sphinx, docname: str) -> dict:
    """The page's glued values as myst-nb saved them (``<docname>.glue.json``)."""
    folder = output_folder(app)
    path = glue_file(folder or "", docname)
    return json.loads(path.read_text()) if folder and path.is_file() else {}


def line_of(node: nodes.Node) -> int | None:
    """The source line of a node, or of its nearest ancestor that has one."""
    while node is not None:
        if node.line:
            return node.line
        node = node.parent
    return None


def build_failed(app: Sphinx, exception: BaseException | None) -> bool:
    """Whether this build has failed so far: an exception, or a warning under ``-W`` (which
    ``--keep-going`` turns into exit status 1 only after ``build-finished``).

    Sphinx does not say so before the build ends: ``rec11_book.compat.sphinx`` reads it.
    """
    return exception is not None or warnings_fail_build(app)


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


# ---------------------------------------------------------------- work a build need not redo


def digest(*parts) -> str:
    """A hash of ``parts`` (bytes, or anything with a stable ``repr``): what a written file came from."""
    h = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


def _file_digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


class Memo:
    """What a build step wrote at its last run, and from what: a step whose inputs are the same,
    and whose files are still as it wrote them (nothing overwrote or removed them), is not redone.

    ``Memo(folder, "deck")`` keeps ``folder/.rec11-memo-deck.json`` ({key: {"inputs", "files",
    "extra"}}); the build keeps it with the doctrees, so ``make clean`` forgets it too.
    """

    def __init__(self, folder: Path, name: str):
        self.path = Path(folder) / f".rec11-memo-{name}.json"
        try:
            self.kept = json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            self.kept = {}

    def unchanged(self, key: str, inputs: str) -> dict | None:
        """The ``extra`` kept with ``key`` if its inputs and files are as recorded, else None."""
        entry = self.kept.get(key)
        if not entry or entry["inputs"] != inputs:
            return None
        if any(_file_digest(Path(f)) != h for f, h in entry["files"].items()):
            return None
        return entry["extra"]

    def record(self, key: str, inputs: str, files, extra: dict | None = None) -> None:
        self.kept[key] = {"inputs": inputs, "files": {str(f): _file_digest(Path(f)) for f in files},
                          "extra": extra or {}}

    def forget(self, key: str) -> None:
        self.kept.pop(key, None)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.kept, sort_keys=True))


# ---------------------------------------------------------------- the chapter's pages


def front_matter(root: Path, docname: str) -> dict:
    """The YAML front matter of a page's source (empty if it has none)."""
    source = root / f"{docname}.md"
    if not source.is_file():
        raise FileNotFoundError(f"{source} is missing, but _toc.yml lists it")
    return front_matter_of(source.read_text())


def front_matter_of(text: str) -> dict:
    """The YAML front matter of a page's source text (empty if it has none)."""
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    return (yaml.safe_load(match[1]) or {}) if match else {}


def for_instructors(meta: dict) -> bool:
    """A page for instructors only (front matter ``audience: instructors``): not in the
    student handout, and not in the chapter's reading time. Sphinx's ``env.metadata``
    of a page, or :func:`front_matter`, is ``meta``."""
    return meta.get("audience") == "instructors"


def instructor_name(name: str) -> str:
    """The instructor edition's file name, beside the handout's ``name``."""
    return name.removesuffix(".pdf") + "-instructor.pdf"


# ---------------------------------------------------------------- the deck's addresses

SLIDE_MARK = "rec11-slide"  # the class a {slide} block puts on each of its elements
DECK = "slides/index.html"  # the deck, in the site (``slides`` writes it)


def slide_id(title: str) -> str:
    """The deck's id for a slide (and the ``#/id`` a link to it ends with)."""
    return "slide-" + nodes.make_id(title)


def deck_uri(fromdoc: str, title: str) -> str:
    """A link from page ``fromdoc`` to the slide called ``title``."""
    return posixpath.relpath(DECK, posixpath.dirname(fromdoc) or ".") + "#/" + slide_id(title)


def slides_of(env, docname: str) -> list:
    """The instructor notes of a page, one per slide, in page order (``rec11.notes.Note``:
    slide, minutes, block, line), as the ``notes`` extension keeps them."""
    return list(getattr(env, "rec11_notes", {}).get(docname, ()))


def deck_links(env, fromdoc: str, docname: str) -> list[nodes.Node]:
    """A list of links, from ``fromdoc``, to each slide of page ``docname``."""
    slides = slides_of(env, docname)
    if not slides or env.app.builder.name != "html":  # only the html build writes the deck
        return []
    items = nodes.bullet_list(classes=["rec11-deck-links"])
    for note in slides:
        ref = nodes.reference("", note.slide, refuri=deck_uri(fromdoc, note.slide))
        items += nodes.list_item("", nodes.paragraph("", "", ref, nodes.Text(f" · {note.minutes:g} min")))
    return [items]


# ---------------------------------------------------------------- passes over rendered HTML


def filter_pages(app: Sphinx, name: str, edit) -> None:
    """Pass every page the HTML builder renders through ``edit(html, context)``, once.

    ``name`` marks the filter, so a builder set up twice (as the preview does) does not
    stack the same filter; the book's filters (``trim_html`` in ``rec11_book.extensions.trim``,
    math ids in ``rec11_book.extensions.mathsvg``) are each added by this function. Sphinx has no event
    for a rendered page: ``rec11_book.compat.sphinx`` wraps its renderer.
    """
    filter_rendered_pages(app, name, edit)


_CONTAINER = re.compile(r"<mjx-container\b.*?</mjx-container>", re.S)
_ANY_PREFIX = re.compile(r"\bMJX-(?:@@|\d+)-")


def unique_ids(html: str) -> str:
    """Number each formula's glyph ids in the order the formulas appear in ``html``.

    A formula's SVG defines its glyphs (``<path id="MJX-n-TEX-...">``) and uses them by
    id. The same formula can appear more than once in a page (a heading with math is also
    in "On this page", which the theme writes twice), and the handout and the slide deck
    put many pages into one document: numbering over the whole, finished document keeps
    every id unique (axe: duplicate-id) and every formula drawing its own glyphs.
    """
    count = 0

    def number(match):
        nonlocal count
        count += 1
        return _ANY_PREFIX.sub(f"MJX-{count}-", match.group(0))

    return _CONTAINER.sub(number, html)


GLYPHS = "rec11-glyphs"  # the class of a document's one set of shared glyphs
# a glyph's <path>, its attributes in MathJax's order or in another (the theme re-serialises
# the headings it copies into "On this page", sorting them)
_ID = r'id="MJX-(?:@@-|\d+-)?(TEX-[^"]+)"'
_GLYPH = re.compile(rf'<path (?:{_ID} d="([^"]*)"|d="([^"]*)" {_ID})\s*(?:/>|></path>)')
_OWN_DEFS = re.compile(r'<defs>(?:<path [^>]*\bid="MJX-[^>]*>(?:</path>)?)*</defs>')
_OWN_REF = re.compile(r'href="#MJX-(?:@@|\d+)-TEX-')
_SHARED_REF = re.compile(r'href="#MJX-(TEX-[^"]+)"')
_ANY_REF = re.compile(r'href="#MJX-(?:@@-|\d+-)?(TEX-[^"]+)"')
_BLOCK = re.compile(rf'<svg\b[^>]*\bclass="{GLYPHS}"[^>]*><defs>.*?</defs></svg>', re.S)


class GlyphError(ValueError):
    """A document's glyphs do not add up: one defined two ways, or one drawn but defined nowhere."""


def _glyphs(html: str) -> dict[str, str]:
    """Every glyph a document defines, by MathJax's name for it (``TEX-I-1D465``: font and
    character), whether a formula owns it or the document shares it; each glyph it draws
    must be among them."""
    found: dict[str, str] = {}
    for name, path, other_path, other_name in _GLYPH.findall(html):
        name, path = name or other_name, path or other_path
        if found.setdefault(name, path) != path:
            raise GlyphError(f"MathJax glyph {name} has two shapes in one document; typeset the book's math "
                             "with one MathJax (package.json pins it) and build again")
    missing = set(_ANY_REF.findall(html)) - set(found)
    if missing:
        raise GlyphError(f"formulas draw glyphs no set in the document defines ({', '.join(sorted(missing))}): "
                         "a document made from pages must keep each page's svg.rec11-glyphs")
    return found


def share_glyphs(html: str) -> str:
    """One set of glyphs for a whole document, instead of one per formula.

    MathJax's SVG output (``fontCache: local``) gives every formula its own ``<defs>``;
    a page with a hundred formulas repeats the same few dozen glyphs hundreds of times
    (250 kB of the exercises page). Here every formula draws from one hidden ``<svg>`` at
    the end of the document's ``<article>`` (or ``<body>``), as MathJax's own
    ``fontCache: global`` does in a browser. Each glyph's id is its font and character, so
    the sets of several pages merge into one (the handout), and sharing twice changes nothing.
    """
    glyphs = _glyphs(html)
    if not glyphs:
        return html  # no math
    html = _BLOCK.sub("", html)
    html = _CONTAINER.sub(lambda m: _OWN_REF.sub('href="#MJX-TEX-', _OWN_DEFS.sub("", m.group(0))), html)
    paths = "".join(f'<path id="MJX-{name}" d="{path}"></path>' for name, path in glyphs.items())
    block = (f'<svg class="{GLYPHS}" aria-hidden="true" focusable="false" style="display: none">'
             f"<defs>{paths}</defs></svg>")
    for end in ("</article>", "</body>"):
        at = html.rfind(end)
        if at >= 0:
            return html[:at] + block + html[at:]
    return html + block


def glyph_sets(html: str) -> list[str]:
    """The shared glyph sets in ``html`` (one per page it holds), for a document that takes
    formulas from it to carry along."""
    return _BLOCK.findall(html)


def own_glyphs(html: str) -> str:
    """Undo :func:`share_glyphs`: each formula carries the glyphs it draws, numbered over the
    document (:func:`unique_ids`). For a document whose formulas are copied out one by one
    (reveal.js's speaker view copies a slide's notes into another window)."""
    glyphs = _glyphs(html)
    html = _BLOCK.sub("", html)

    def own(match):
        formula = match.group(0)
        names = dict.fromkeys(_SHARED_REF.findall(formula))
        if not names:  # it owns its glyphs already, or draws none
            return formula
        defs = "".join(f'<path id="MJX-@@-{name}" d="{glyphs[name]}"></path>' for name in names)
        formula = _SHARED_REF.sub(r'href="#MJX-@@-\1"', formula)
        return re.sub(r"<svg\b[^>]*>", lambda svg: f"{svg.group(0)}<defs>{defs}</defs>", formula, count=1)

    return unique_ids(_CONTAINER.sub(own, html))

