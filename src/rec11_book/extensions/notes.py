"""Instructor notes in the book: the note box, and the session budget checked.

The markup and its one parser are the course package's (``rec11.notes``): the
session plan page reads the notes in its kernel with it. Here, each page's notes as
that parser reads them (``pagefacts.notes``) are kept for the page
(``env.rec11_notes``): the deck, the agenda and the budget check read that record.
The ``{instructor-note}`` directive renders a note as a collapsed, visually distinct
box, and reports a malformed one at its line (through the same ``validate``). The
budget check warns, at the block's longest note, when the notes' minutes and the budget
in ``_config.yml`` disagree by more than the stated slack: the rows of
``rec11.notes.compare``, which the session plan page shows too. A build that fails
(for that or anything else) puts the session plan back as the last good build wrote it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from rec11.notes import blocks, budget, compare, validate
from rec11_book.shared.pagefacts import notes
from rec11_book.shared.pages import build_failed, for_instructors, keep_per_page

logger = logging.getLogger(__name__)


# --- the note box, and the budget check --------------------------------------------------


class InstructorNote(SphinxDirective):
    """A speaker note with its slide, its minutes and its block of the budget."""

    has_content = True
    option_spec: ClassVar[dict] = {"slide": directives.unchanged_required,
                                   "minutes": directives.unchanged_required,
                                   "block": directives.unchanged_required}

    def run(self):
        where = f"{self.env.doc2path(self.env.docname)}:{self.lineno}"
        try:
            slide, minutes, _ = validate(self.options, where, blocks(self.config.myst_substitutions))
        except ValueError as err:
            raise self.error(str(err)) from None
        if slide not in {note.slide for note in self.env.rec11_notes.get(self.env.docname, ())}:
            raise self.error(f"{where}: this instructor note is not in the page's parsed notes: write it "
                             "with a colon fence, `:::{instructor-note}` (the deck and the session plan "
                             "read only that markup)")
        box = nodes.admonition(classes=["instructor-note", "dropdown"])
        box += nodes.title(text=f"Instructor notes · {minutes:g} min · {slide}")
        self.state.nested_parse(self.content, self.content_offset, box)
        self.set_source_info(box)
        return [box]


def record_notes(app: Sphinx, docname: str, source: list[str]) -> None:
    """The page's notes, as ``rec11.notes`` parses them, kept for the page."""
    if not str(app.env.doc2path(docname)).endswith(".md"):
        return
    try:
        app.env.rec11_notes[docname] = notes(source[0], docname)
    except ValueError:  # the directive reports it, at the note's line
        app.env.rec11_notes[docname] = ()


def check_budget(app: Sphinx, env) -> None:
    """Each block's notes against its budget, and all the notes against the session's length
    (``rec11.notes.compare``, the rows the session plan shows), within ``budget_slack``; a row
    that is not is a warning at its longest note (where the minutes are changed), or at its
    course fact when no note is in the block."""
    subs = app.config.myst_substitutions
    try:
        stated = budget(subs)
        slack = float(subs["budget_slack"])
    except KeyError as err:
        logger.warning(f"_config.yml: course facts lack {err}; cannot check the session budget", type="rec11")
        return
    found = [note for page in env.rec11_notes.values() for note in page]
    if not found:
        return
    config = Path(app.srcdir) / "_config.yml"
    text = config.read_text().splitlines() if config.is_file() else []
    for row, (in_notes, in_budget) in compare(found, stated).items():
        if abs(in_notes - in_budget) <= slack:
            continue
        key = "session_minutes" if row == "session" else f"budget_{row}"
        line = next((i + 1 for i, ln in enumerate(text) if ln.strip().startswith(f"{key}:")), 0)
        ours = sorted((n for n in found if row == "session" or n.block == row), key=lambda n: -n.minutes)
        whose = "all the instructor notes" if row == "session" else f"the instructor notes of block {row!r}"
        longest = ""
        if ours:
            then = ", ".join(f"{n.page}.md:{n.line} {n.minutes:g}" for n in ours[1:4])
            longest = f"; this note is the longest, {ours[0].minutes:g} min" + (f", then {then}" if then else "")
        fix = f"change a note's :minutes: or {key}" if ours else f"add this block's notes, or change {key}"
        logger.warning(
            f"session budget: {whose} add up to {in_notes:g} min, but {key} is {in_budget:g}"
            f" ({f'{config.name}:{line}; ' if ours else ''}allowed difference: budget_slack = {slack:g}){longest}."
            f" Fix: {fix}",
            location=(ours[0].page, ours[0].line) if ours else f"{config}:{line}",
            type="rec11",
            subtype="budget",
        )


# --- the session plan: a failed build leaves the last good one ----------------------------


def keep_plan(app: Sphinx, env) -> None:
    """Before any page is written, keep the session plan as the last build wrote it: each
    instructor page's HTML (front matter ``audience: instructors``), or None where there is none."""
    if app.builder.name != "html":
        return
    app.rec11_last_plan = {}
    for docname in sorted(env.found_docs):
        if for_instructors(env.metadata.get(docname, {})):
            written = Path(app.builder.get_outfilename(docname))
            app.rec11_last_plan[written] = written.read_bytes() if written.is_file() else None


def restore_plan(app: Sphinx, exception) -> None:
    """A build that failed puts the session plan back as the last good build wrote it (or
    removes the one it wrote where there was none), so that the plan never shows the notes
    that failed the budget. The restored file is dated 1970: Sphinx, which writes a page whose
    source is newer than its HTML, writes it again in the next build."""
    kept = getattr(app, "rec11_last_plan", {})
    if not kept or not build_failed(app, exception):
        return
    for written, html in kept.items():
        if html is None:
            written.unlink(missing_ok=True)
        else:
            written.write_bytes(html)
            os.utime(written, (0, 0))
    logger.info("rec11: the build failed, so the session plan stays as the last good build wrote it (%s)",
                ", ".join(p.name for p in kept))


def setup(app: Sphinx) -> dict:
    app.add_directive("instructor-note", InstructorNote)
    keep_per_page(app, "rec11_notes")  # docname -> (rec11.notes.Note, ...)
    app.connect("source-read", record_notes)
    app.connect("env-check-consistency", check_budget)
    app.connect("env-check-consistency", keep_plan)
    app.connect("build-finished", restore_plan, priority=300)  # before any handler that may raise
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
