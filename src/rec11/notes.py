"""Instructor notes: the one markup, read once, by the session plan page and the build alike.

A note is written in a page as

    :::{instructor-note}
    :slide: Tokens are a matrix
    :minutes: 5
    :block: attention

    What to say, what to ask the room ...
    :::

:func:`notes_in` is the one parser of that markup. The session plan page calls
:func:`collect` in its kernel; the build reads each page's notes with
:func:`notes_in` too (``rec11_book.shared.pagefacts``), and its directive, the deck, the
budget check and the handout take their slide, minutes and block from that one
result. The session's blocks are data: each course fact ``budget_<block>`` in
``_config.yml`` (all but ``budget_slack``) names one, with its minutes. Standard library
and PyYAML only.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from rec11.chapter import load_substitutions, toc_pages

SLACK = "budget_slack"  # how far a row may differ from its budget; every other budget_<x> is a block
_NOTE = re.compile(r"^(?P<fence>:{3,})\{instructor-note\}[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$", re.M | re.S)
_OPTION = re.compile(r"^:(\w+):\s*(.*)$")


@dataclass(frozen=True)
class Note:
    slide: str
    minutes: float
    block: str
    page: str  # docname, e.g. "book/attention"
    line: int  # the page line of the note's opening fence


def parse_options(lines: list[str]) -> dict[str, str]:
    """The ``:key: value`` lines at the top of a note body."""
    options = {}
    for line in lines:
        match = _OPTION.match(line.strip())
        if not match:
            break
        options[match[1]] = match[2].strip()
    return options


def blocks(facts: dict) -> tuple[str, ...]:
    """The session's blocks, in ``_config.yml``'s order: each course fact ``budget_<block>``
    but ``budget_slack``."""
    return tuple(key.removeprefix("budget_") for key in facts if key.startswith("budget_") and key != SLACK)


def validate(options: dict[str, str], where: str, known: tuple[str, ...] | None = None) -> tuple[str, float, str]:
    """(slide, minutes, block) from a note's options, or a ValueError naming ``where``.
    ``known``: the session's blocks (:func:`blocks`); None checks only that a block is given."""
    missing = {"slide", "minutes", "block"} - options.keys()
    if missing:
        raise ValueError(f"{where}: instructor-note is missing :{', :'.join(sorted(missing))}:")
    try:
        minutes = float(options["minutes"])
    except ValueError:
        raise ValueError(f"{where}: instructor-note :minutes: must be a number, got {options['minutes']!r}") from None
    block = options["block"]
    if known is not None and block not in known:
        near = difflib.get_close_matches(block, known, n=1)
        fix = (f"write :block: {near[0]}" if near else f"write one of them, or add budget_{block} to the course facts")
        raise ValueError(f"{where}: instructor-note :block: must be one of the session's blocks, {', '.join(known)}"
                         f" (the course facts budget_<block> in _config.yml), got {block!r}. Fix: {fix}")
    return options["slide"], minutes, block


def notes_in(text: str, page: str, known: tuple[str, ...] | None = None) -> list[Note]:
    """The notes of one page's MyST text, in order; a malformed one raises a ValueError
    naming ``<page>.md`` and its line (a block not in ``known``, when given, too)."""
    found = []
    for match in _NOTE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        options = parse_options(match["body"].splitlines())
        found.append(Note(*validate(options, f"{page}.md:{line}", known), page=page, line=line))
    return found


def collect(root: Path) -> list[Note]:
    """Every instructor note in the book, in reading order, each in a block of its course facts."""
    known = blocks(load_substitutions(Path(root)))
    notes = []
    for page in toc_pages(root):
        notes.extend(notes_in((root / f"{page}.md").read_text(), page, known))
    return notes


def budget(facts: dict) -> dict[str, float]:
    """What the notes' minutes are held to, from the course facts: each block's stated minutes
    (``budget_<block>``), and, as row ``"session"``, the session's length (``session_minutes``)
    for all the notes together. The blocks' own sum is not a row: the speaker notes' "~42, ~10,
    ~26, 5" are approximate and add up to more than the session."""
    rows = {block: float(facts[f"budget_{block}"]) for block in blocks(facts)}
    rows["session"] = float(facts["session_minutes"])
    return rows


def compare(notes: list[Note], stated: dict[str, float]) -> dict[str, tuple[float, float]]:
    """{row: (minutes in the notes, minutes it is held to)}: a row per block, then "session", every
    note against the session's length. The build checks these rows (``budget_slack`` apart at most)
    and the session plan page shows them, so the two compare the same numbers."""
    rows = {b: (sum(n.minutes for n in notes if n.block == b), stated[b]) for b in stated if b != "session"}
    rows["session"] = (sum(n.minutes for n in notes), stated["session"])
    return rows
