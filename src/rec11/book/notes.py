"""Instructor notes: the one markup, and the session plan built from it.

A note is written in a page as

    :::{instructor-note}
    :slide: Tokens are a matrix
    :minutes: 5
    :block: attention

    What to say, what to ask the room ...
    :::

As a Sphinx extension, this module renders each note as a collapsed, visually
distinct box with its slide and minutes, and warns when the notes' minutes and the
budget in ``_config.yml`` disagree by more than the stated slack. :func:`collect`
reads the same notes straight from the markdown in table-of-contents order, so a
page cell can draw the session plan while the book is still being built.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from rec11.book.pages import keep_per_page, toc_pages

logger = logging.getLogger(__name__)

BLOCKS = ("attention", "generation", "generative", "close")
_NOTE = re.compile(r"^(?P<fence>:{3,})\{instructor-note\}[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$", re.M | re.S)
_OPTION = re.compile(r"^:(\w+):\s*(.*)$")


@dataclass(frozen=True)
class Note:
    slide: str
    minutes: float
    block: str
    page: str  # docname, e.g. "book/attention"
    line: int


def parse_options(lines: list[str], where: str) -> dict[str, str]:
    """The ``:key: value`` lines at the top of a note body."""
    options = {}
    for line in lines:
        match = _OPTION.match(line.strip())
        if not match:
            break
        options[match[1]] = match[2].strip()
    return options


def validate(options: dict[str, str], where: str) -> tuple[str, float, str]:
    """(slide, minutes, block) from a note's options, or a ValueError naming ``where``."""
    missing = {"slide", "minutes", "block"} - options.keys()
    if missing:
        raise ValueError(f"{where}: instructor-note is missing :{', :'.join(sorted(missing))}:")
    try:
        minutes = float(options["minutes"])
    except ValueError:
        raise ValueError(f"{where}: instructor-note :minutes: must be a number, got {options['minutes']!r}") from None
    if options["block"] not in BLOCKS:
        raise ValueError(f"{where}: instructor-note :block: must be one of {BLOCKS}, got {options['block']!r}")
    return options["slide"], minutes, options["block"]


def notes_in(text: str, page: str) -> list[Note]:
    found = []
    for match in _NOTE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        options = parse_options(match["body"].splitlines(), f"{page}:{line}")
        found.append(Note(*validate(options, f"{page}.md:{line}"), page=page, line=line))
    return found


def collect(root: Path) -> list[Note]:
    """Every instructor note in the book, in reading order."""
    notes = []
    for page in toc_pages(root):
        notes.extend(notes_in((root / f"{page}.md").read_text(), page))
    return notes


def budget(substitutions: dict) -> dict[str, float]:
    """The stated minutes per block, from the ``budget_<block>`` course facts."""
    return {block: float(substitutions[f"budget_{block}"]) for block in BLOCKS}


def compare(notes: list[Note], stated: dict[str, float]) -> dict[str, tuple[float, float]]:
    """{block: (minutes in the notes, minutes in the budget)}, plus a "total" row."""
    rows = {b: (sum(n.minutes for n in notes if n.block == b), stated[b]) for b in BLOCKS}
    rows["total"] = (sum(r[0] for r in rows.values()), sum(r[1] for r in rows.values()))
    return rows


# --- the Sphinx side: the note box, and the budget check -------------------------------


class InstructorNote(SphinxDirective):
    """A speaker note with its slide, its minutes and its block of the budget."""

    has_content = True
    option_spec = {"slide": directives.unchanged_required, "minutes": directives.unchanged_required,
                   "block": directives.unchanged_required}

    def run(self):
        where = f"{self.env.doc2path(self.env.docname)}:{self.lineno}"
        try:
            slide, minutes, block = validate(self.options, where)
        except ValueError as err:
            raise self.error(str(err)) from None
        self.env.rec11_notes.setdefault(self.env.docname, []).append((slide, minutes, block))
        box = nodes.admonition(classes=["instructor-note", "dropdown"])
        box += nodes.title(text=f"Instructor notes · {minutes:g} min · {slide}")
        self.state.nested_parse(self.content, self.content_offset, box)
        self.set_source_info(box)
        return [box]


def check_budget(app: Sphinx, env) -> None:
    subs = app.config.myst_substitutions
    try:
        stated = budget(subs)
        slack = float(subs["budget_slack"])
        length = float(subs["session_minutes"])
    except KeyError as err:
        logger.warning(f"_config.yml: course facts lack {err}; cannot check the session budget", type="rec11")
        return
    found = [Note(s, m, b, d, 0) for d, items in env.rec11_notes.items() for s, m, b in items]
    if not found:
        return
    rows = compare(found, stated)
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
            ours = sorted((n for n in found if block == "session" or n.block == block), key=lambda n: -n.minutes)
            notes = ", ".join(f"{n.page} '{n.slide}' {n.minutes:g}" for n in ours[:4])
            logger.warning(
                f"{config}:{line}: session budget: the instructor notes give {in_notes:g} min for "
                f"{block!r}, but {key} is {in_budget:g} (allowed difference: budget_slack = {slack:g});"
                f" its longest notes: {notes}. Fix: change a note's :minutes: or {key}",
                type="rec11",
                subtype="budget",
            )


def setup(app: Sphinx) -> dict:
    app.add_directive("instructor-note", InstructorNote)
    keep_per_page(app, "rec11_notes")  # docname -> [(slide, minutes, block)]
    app.connect("env-check-consistency", check_budget)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
