"""The book's own Sphinx extension.

It does what Jupyter Book 1 does not do by itself (reading time is
``rec11.book.reading``'s, live code ``rec11.book.livecode``'s):

1. **No stale pages.** jupyter-cache keys a page on its own code cells only, so an
   edit to ``src/rec11`` would leave the cached outputs of the pages that import it
   in place. Before a page is parsed, this extension appends one hidden code cell
   holding a fingerprint of everything the page's code depends on: the source of
   the ``rec11`` modules it imports (transitively) and, for a page that draws the
   session plan, the instructor notes of the whole book. A changed fingerprint
   changes the notebook's hash, so jupyter-cache misses and the page re-executes;
   ``env-get-outdated`` makes Sphinx re-read such a page even though its own
   file did not change. Pages whose dependencies did not change keep their cache.
2. **Alt text is required, and true.** Every image must carry alt text a screen-reader
   user can act on. myst-nb falls back to the image's file path, which is not alt text.
   A missing one is a warning at the page and line, and ``-W`` fails the build. Alt
   text takes numbers from the run as captions do: ``{glue:text}`key:.2f``` in the
   ``alt`` string is replaced by the page's glued value, and a key the page does not
   glue is a warning at the page and line.
3. **Instructor notes.** ``{instructor-note}`` renders a collapsed, visually
   distinct box with the slide and its minutes. The build warns when the notes'
   minutes and the budget in ``_config.yml`` disagree by more than the stated slack.
4. **Live code runs what the page shows.** A cell tagged ``remove-cell`` is not in
   the page, so Live Code never runs it: a shown cell that reads a name only such a
   cell defines is a warning at the page and line.
5. **Static files and theme fixes.** The book's CSS (instructor notes, print,
   accessibility fixes to the theme) ships with this extension, and a change to it
   alone still reaches the site. The theme's Binder logo image goes, and
   sphinx-exercise's repeated body ids are made unique.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from rec11.book import notes as notes_mod
from rec11.book.notebooks import GLUE_ROLE, paste_glue
from rec11.sources import code_hash, imported_modules

logger = logging.getLogger(__name__)

_CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1\s*$", re.M | re.S)
_USES_NOTES = re.compile(r"\bnotes\.collect\(|\bcollect_notes\(")
_IMAGE_FILE = re.compile(r"(^|/)[^/\s]+\.(png|svg|jpe?g|gif)$", re.I)
MIN_ALT = 15  # characters; "figure" or "plot of x" tells a blind reader nothing


# --- 1. fingerprints of what a page's code depends on --------------------------------


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


def _names(code: str) -> tuple[set[str], set[str]]:
    """(names a cell binds, names it reads), or two empty sets if it is not Python."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(), set()
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return bound, read


def live_code_gaps(text: str) -> list[tuple[int, list[str]]]:
    """(line, names) for each shown cell that reads a name only a removed cell defines.

    A cell tagged ``remove-cell`` is not in the page, so Live Code never runs it: it
    may check and glue, but a cell a reader can run must not depend on it.
    """
    gaps, present, removed = [], set(), set()
    for line, options, code in parse_cells(text):
        bound, read = _names(code)
        if "remove-cell" in options:
            removed |= bound - present
            continue
        missing = sorted((read & removed) - present - bound)
        if missing:
            gaps.append((line, missing))
        present |= bound
    return gaps


def page_code(text: str) -> str:
    """The code of all code cells of a MyST page, as one string."""
    return "\n".join(code_cells(text))


def page_modules(text: str) -> set[str]:
    """The ``rec11`` modules a page's code cells import (cell by cell, so that one cell
    that is not valid Python cannot hide the imports of the others)."""
    return set().union(*(imported_modules(cell) for cell in code_cells(text)))


def fingerprint(app: Sphinx, text: str) -> str:
    """A hash of the package code and book data that the page's code cells read."""
    code = page_code(text)
    modules = page_modules(text)
    parts = []
    if modules:
        parts.append("code:" + code_hash(modules, package_dir(app)))
    if _USES_NOTES.search(code):
        plan = [(n.page, n.slide, n.minutes, n.block) for n in notes_mod.collect(Path(app.srcdir))]
        parts.append("notes:" + hashlib.sha256(repr(plan).encode()).hexdigest()[:16])
    return " ".join(parts)


def package_dir(app: Sphinx) -> Path | None:
    """The package sources: ``src/rec11`` beside the book, else the installed copy."""
    local = Path(app.srcdir) / app.config.rec11_package_src
    return local if local.is_dir() else None


def inject_fingerprint(app: Sphinx, docname: str, source: list[str]) -> None:
    if not str(app.env.doc2path(docname)).endswith(".md") or "{code-cell}" not in source[0]:
        return
    for line, names in live_code_gaps(source[0]):
        logger.warning(
            f"this cell reads {', '.join(names)}, which only a `remove-cell` cell defines: Live Code "
            "does not run removed cells; define it in a shown or hidden (hide-input) cell",
            location=(docname, line), type="rec11", subtype="livecode")
    try:
        stamp = fingerprint(app, source[0])
    except ValueError as err:  # a malformed instructor note: the message names the file
        logger.warning(str(err), location=docname, type="rec11", subtype="notes")
        return
    app.env.rec11_fingerprints[docname] = stamp
    if stamp:
        # A comment-only cell: costs nothing to run, but changes the notebook hash.
        source[0] += (
            "\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n\n"
            f"# dependency fingerprint (added by rec11.book.sphinxext): {stamp}\n```\n"
        )


def outdated_by_dependencies(app, env, added, changed, removed) -> list[str]:
    """Pages whose own file is unchanged but whose dependencies changed."""
    stale = []
    for docname, old in env.rec11_fingerprints.items():
        if docname in changed or docname in removed or not old:
            continue
        path = Path(env.doc2path(docname))
        try:
            now = fingerprint(app, path.read_text()) if path.is_file() else old
        except ValueError:  # a malformed note; the re-read reports it with its line
            now = None
        if now != old:
            stale.append(docname)
    if stale:
        logger.info("rec11: re-reading pages whose package code or notes changed: %s", ", ".join(sorted(stale)))
    return stale


def init_env(app: Sphinx) -> None:
    env = app.env
    if not hasattr(env, "rec11_fingerprints"):
        env.rec11_fingerprints = {}
    if not hasattr(env, "rec11_notes"):
        env.rec11_notes = {}


def purge_doc(app, env, docname) -> None:
    env.rec11_notes.pop(docname, None)
    env.rec11_fingerprints.pop(docname, None)


def merge_info(app, env, docnames, other) -> None:
    env.rec11_fingerprints.update(other.rec11_fingerprints)
    env.rec11_notes.update({d: other.rec11_notes[d] for d in docnames if d in other.rec11_notes})


# --- 2. alt text ---------------------------------------------------------------------


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


def line_of(node: nodes.Node) -> int | None:
    """The source line of a node, or of its nearest ancestor that has one."""
    while node is not None:
        if node.line:
            return node.line
        node = node.parent
    return None


def glued_values(app: Sphinx, docname: str) -> dict:
    """The page's glued values as myst-nb saved them (``<docname>.glue.json``)."""
    folder = getattr(getattr(app.env, "mystnb_config", None), "output_folder", None)
    path = Path(folder or "").joinpath(*docname.split("/")).with_suffix(".glue.json")
    return json.loads(path.read_text()) if folder and path.is_file() else {}


def check_alt_text(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    glued = None
    for image in doctree.findall(nodes.image):
        if GLUE_ROLE.search(image.get("alt") or ""):
            glued = glued if glued is not None else glued_values(app, docname)
            image["alt"], missing = paste_glue(image["alt"], lambda key: glued.get(key, {}).get("data", {}))
            for key in missing:
                logger.warning(f"figure alt text pastes {key!r}, which this page does not glue",
                               location=(docname, line_of(image)), type="rec11", subtype="alt")
        problem = bad_alt(image)
        if problem:
            hint = "give its code cell `mystnb: image: alt: ...` metadata" if "cell" in str(image.parent) else ""
            logger.warning(
                f"figure {problem}; every figure needs alt text that says what it shows. {hint}".strip(),
                location=(docname, line_of(image)),
                type="rec11",
                subtype="alt",
            )


# --- 3. instructor notes -------------------------------------------------------------


class InstructorNote(SphinxDirective):
    """A speaker note with its slide, its minutes and its block of the budget."""

    has_content = True
    option_spec = {"slide": directives.unchanged_required, "minutes": directives.unchanged_required,
                   "block": directives.unchanged_required}

    def run(self):
        where = f"{self.env.doc2path(self.env.docname)}:{self.lineno}"
        try:
            slide, minutes, block = notes_mod.validate(self.options, where)
        except ValueError as err:
            raise self.error(str(err)) from None
        self.env.rec11_notes.setdefault(self.env.docname, []).append((slide, minutes, block))
        box = nodes.admonition(classes=["instructor-note", "dropdown"])
        minutes_text = f"{minutes:g} min"
        box += nodes.title(text=f"Instructor notes · {minutes_text} · {slide}")
        self.state.nested_parse(self.content, self.content_offset, box)
        self.set_source_info(box)
        return [box]


def check_budget(app: Sphinx, env) -> None:
    subs = app.config.myst_substitutions
    try:
        stated = notes_mod.budget(subs)
        slack = float(subs["budget_slack"])
        length = float(subs["session_minutes"])
    except KeyError as err:
        logger.warning(f"_config.yml: course facts lack {err}; cannot check the session budget", type="rec11")
        return
    found = [notes_mod.Note(s, m, b, d, 0) for d, items in env.rec11_notes.items() for s, m, b in items]
    if not found:
        return
    rows = notes_mod.compare(found, stated)
    # The blocks against their budgets, and all the notes against the session's length.
    # (The budget's own sum is shown on the plan page but not checked: the speaker
    # notes' "~42, ~10, ~26, 5" are approximate and add up to more than the session.)
    rows["session"] = (rows.pop("total")[0], length)
    config = Path(app.srcdir) / "_config.yml"
    text = config.read_text().splitlines() if config.is_file() else []
    for block, (in_notes, in_budget) in rows.items():
        if abs(in_notes - in_budget) > slack:
            key = "session_minutes" if block == "session" else f"budget_{block}"
            line = next((i + 1 for i, ln in enumerate(text) if ln.strip().startswith(f"{key}:")), 0)
            logger.warning(
                f"{config}:{line}: session budget: the instructor notes give {in_notes:g} min for "
                f"{block!r}, but {key} is {in_budget:g} (allowed difference: budget_slack = {slack:g})",
                type="rec11",
                subtype="budget",
            )


def drop_logo_images(app, pagename, templatename, context, doctree) -> None:
    """The theme's launch buttons show a logo image beside the word "Binder", with the alt
    text "Binder logo": a screen reader says "Binder logo Binder". The word is enough, so
    the image goes; every image left on a page is then a figure with real alt text.
    """

    def walk(buttons):
        for button in buttons:
            if str(button.get("icon", "")).endswith((".svg", ".png")):
                button["icon"] = None
            walk(button.get("buttons", []))

    walk(context.get("header_buttons", []))


def unique_exercise_ids(app, doctree, docname) -> None:
    """sphinx-exercise gives every exercise's and solution's body the same id
    (``exercise-content``, ``solution-content``); with two on a page the ids clash
    (axe: duplicate-id). Each body takes its box's id instead."""
    for section in doctree.findall(nodes.section):
        shared = [i for i in section["ids"] if i in ("exercise-content", "solution-content")]
        owner = section.parent.get("ids", []) if section.parent is not None else []
        if shared and owner:
            section["ids"] = [f"{owner[0]}-{i}" if i in shared else i for i in section["ids"]]


# --- set-up --------------------------------------------------------------------------


STATIC = Path(__file__).parent / "static"


def add_static(app: Sphinx, config) -> None:
    app.config.html_static_path.append(str(STATIC))


def static_changed(app, env, added, changed, removed) -> list[str]:
    """Sphinx copies static files only when it writes a page, so an edit to the book's
    CSS or JS alone would never reach the site: re-read the root page when they change."""
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in sorted(STATIC.iterdir()) if f.is_file()))
    if getattr(env, "rec11_static", None) == digest.hexdigest():
        return []
    env.rec11_static = digest.hexdigest()
    return [env.config.root_doc] if env.config.root_doc in env.found_docs else []


def setup(app: Sphinx) -> dict:
    app.add_config_value("rec11_package_src", "src/rec11", "env")
    app.add_directive("instructor-note", InstructorNote)
    app.connect("config-inited", add_static)
    app.connect("builder-inited", init_env)
    app.connect("env-get-outdated", outdated_by_dependencies)
    app.connect("env-get-outdated", static_changed)
    app.connect("env-purge-doc", purge_doc)
    app.connect("env-merge-info", merge_info)
    app.connect("source-read", inject_fingerprint)
    app.connect("doctree-read", check_alt_text)
    app.connect("env-check-consistency", check_budget)
    app.connect("html-page-context", drop_logo_images, priority=900)  # after the theme adds them
    app.connect("doctree-resolved", unique_exercise_ids)
    app.add_css_file("rec11.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
