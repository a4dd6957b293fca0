"""What the build knows about one page, read from its MyST source once: the per-page facts.

Every extension that needs a fact about a page's source asks here, and none computes it
again or asks another extension for it:

* its code cells (``pages.parse_cells``) and the ``rec11`` modules they import, through
  any module (:func:`page_modules`; the dependency fingerprint and the model cache's key
  read the same closure, ``rec11.sources``);
* whether its code trains or loads a model (:func:`trains_models`: Live Code's ready
  message, the download's install cell);
* which names each cell binds and reads, and so which shown cell reads a name only a
  removed cell defines (:func:`live_code_gaps`: Live Code runs no removed cell);
* its instructor notes (:func:`notes`), parsed by the one parser of that markup,
  ``rec11.notes``: the deck, the agenda and the budget check read this result.

:func:`facts` (the code) and :func:`notes` compute them once per page text. Sphinx-free:
this module imports neither Sphinx nor another extension.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from rec11.notes import Note, collect, notes_in
from rec11.sources import PACKAGE, imported_modules, module_closure
from rec11_book.shared.pages import package_dir, parse_cells


@dataclass(frozen=True)
class PageFacts:
    cells: tuple[tuple[int, str, str], ...]  # (line, options, code) of each code cell
    modules: frozenset[str]  # the rec11 modules its cells import

    @property
    def code(self) -> str:
        """The code of all code cells, as one string."""
        return "\n".join(code for _, _, code in self.cells)


@functools.lru_cache(maxsize=128)
def facts(text: str) -> PageFacts:
    """The code facts of a page whose MyST source is ``text``."""
    cells = tuple(parse_cells(text))
    # cell by cell, so that one cell that is not valid Python cannot hide the others' imports;
    # a cell that never names the package imports none of its modules: no syntax tree to build
    modules = frozenset().union(*(imported_modules(code) for _, _, code in cells if PACKAGE in code))
    return PageFacts(cells, modules)


def page_modules(text: str) -> set[str]:
    """The ``rec11`` modules a page's code cells import."""
    return set(facts(text).modules)


@functools.lru_cache(maxsize=128)
def notes(text: str, docname: str) -> tuple[Note, ...]:
    """The page's instructor notes, in page order; a malformed one raises a ValueError
    naming ``<docname>.md`` and its line."""
    return tuple(notes_in(text, docname))


def trains_models(text: str, package: Path | None = None) -> bool:
    """Whether a page's code reaches the model cache (``rec11.cache``), through any import."""
    modules = facts(text).modules
    return bool(modules) and "rec11.cache" in _closure(tuple(sorted(modules)), package)


@functools.lru_cache(maxsize=256)
def _closure(modules: tuple[str, ...], package: Path | None) -> frozenset[str]:
    """``module_closure``, once per set of modules in a process: a build asks it for every page
    several times (Live Code's settings, the downloads), and a build's process sees one state of
    the package (the preview builds in a fresh fork each time)."""
    return frozenset(module_closure(list(modules), package))


def uses_trained_models(app, docname: str) -> bool:
    """Whether the book's page ``docname`` trains or loads a model (a Sphinx ``app``'s book)."""
    path = Path(app.env.doc2path(docname))
    return path.suffix == ".md" and path.is_file() and trains_models(path.read_text(), package_dir(app))


# --- the names cells bind and read --------------------------------------------------------


def _names(code: str) -> tuple[set[str], set[str]]:
    """(names a cell binds, names it reads), or two empty sets if it is not Python.

    Inside a function (or lambda) its parameters and the names it assigns are its own:
    reading them is not reading the cell's names.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(), set()
    bound = set()
    for node in tree.body:
        bound |= _binds(node)
    read = _reads(tree, set())
    return bound, read


def _binds(node) -> set[str]:
    """Module-level names a statement binds."""
    names = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(child, ast.Lambda):
                names.add(child.name)
            continue
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        names |= _binds(child)
    return names


def _reads(node, local: set[str]) -> set[str]:
    """Names ``node`` reads that are not in ``local`` (a function's own names)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                  *filter(None, [args.vararg, args.kwarg])]}
        body = node.body if isinstance(node.body, list) else [node.body]
        own = params | {n for b in body for n in _binds(b)}
        outer = set()
        for default in [*args.defaults, *filter(None, args.kw_defaults),
                        *getattr(node, "decorator_list", [])]:
            outer |= _reads(default, local)
        for b in body:
            outer |= _reads(b, local | own)
        return outer
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) and node.id not in local else set()
    out = set()
    for child in ast.iter_child_nodes(node):
        out |= _reads(child, local)
    return out


def live_code_gaps(text: str) -> list[tuple[int, list[str]]]:
    """(line, names) for each shown cell that reads a name only a removed cell defines.

    A cell tagged ``remove-cell`` is not in the page, so Live Code never runs it: it
    may check and glue, but a cell a reader can run must not depend on it.
    """
    gaps, present, removed = [], set(), set()
    for line, options, code in facts(text).cells:
        bound, read = _names(code)
        if "remove-cell" in options:
            removed |= bound - present
            continue
        missing = sorted((read & removed) - present - bound)
        if missing:
            gaps.append((line, missing))
        present |= bound
    return gaps


# a page whose code draws the session plan reads every page's instructor notes
_USES_NOTES = re.compile(r"\bnotes\.collect\(|\bcollect_notes\(")


def notes_hash(srcdir: Path, text: str) -> str | None:
    """For a page whose code draws the session plan, a hash of the whole book's instructor
    notes (slide, minutes, block of each); None for any other page."""
    # the text first: a page that never names the call needs no parse of its cells
    if not _USES_NOTES.search(text) or not _USES_NOTES.search(facts(text).code):
        return None
    plan = [(n.page, n.slide, n.minutes, n.block) for n in collect(srcdir)]
    return hashlib.sha256(repr(plan).encode()).hexdigest()[:16]
