"""Course facts that depend on each other, checked when the build starts.

The pages show each course fact of ``_config.yml`` as a substitution (``{{ final_date }}``),
so a new term's date appears everywhere at once. But they also state relations between the
facts in words: "{{ recess }} starts the next day", "the final is the first day back", "next
week: the exam review". A new term's dates can make such a sentence false while every date
in it is shown right. So each relation is written once, in :data:`RELATIONS`, with the
sentences that state it, and the build fails at the fact's line in ``_config.yml`` when the
dates break one (``-W``).

Dates are written as the speaker notes write them, "Tue 11/24". The year is the one (the
book's ``copyright`` year, or one either side) in which every date falls on its weekday; a
weekday that matches no such year is an error too.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
DATES = ("a5_due", "recess_start", "first_day_back", "final_date")  # the facts that are dates


class Relation(NamedTuple):
    fact: str  # the fact to change when the relation breaks
    holds: Callable[[dict], bool]
    should: str  # what the fact should be, in words
    sentences: str  # where the pages state it


RELATIONS = (
    Relation("recess_start", lambda f: f["recess_start"] == f["a5_due"] + datetime.timedelta(days=1),
             "the day after a5_due",
             "index.md and its note: '{{ recess }} starts the next day' after A5 is due"),
    Relation("first_day_back", lambda f: f["first_day_back"] > f["recess_start"],
             "after recess_start", "where-this-lands.md: the review is 'before the recess' and the"
             " exam 'the first day back'"),
    Relation("final_date", lambda f: f["final_date"] == f["first_day_back"], "first_day_back",
             "index.md, where-this-lands.md, instructor.md: the final 'is the first day back', and"
             " 'no session between the recess and the exam'"),
    Relation("review_week", lambda f: int(f["review_week"]) == int(f["week"]) + 1, "week + 1",
             "where-this-lands.md: 'Next week: the exam review'"),
)


def parse_day(text: str, year: int) -> datetime.date:
    """``"Tue 11/24"`` in ``year``; ValueError if it is not written so or not that weekday."""
    match = re.fullmatch(r"\s*([A-Z][a-z]{2})\s+(\d{1,2})/(\d{1,2})\s*", str(text))
    if not match or match[1] not in WEEKDAYS:
        raise ValueError(f"{text!r} is not a date written like 'Tue 11/24'")
    day = datetime.date(year, int(match[2]), int(match[3]))
    if WEEKDAYS[day.weekday()] != match[1]:
        raise ValueError(f"{text!r}: {match[2]}/{match[3]}/{year} is a {WEEKDAYS[day.weekday()]}")
    return day


def dated(facts: dict, around: int) -> dict:
    """The facts with each date parsed, in the year near ``around`` where every weekday fits."""
    errors = []
    for year in (around, around + 1, around - 1):
        try:
            return {**facts, **{key: parse_day(facts[key], year) for key in DATES}}
        except ValueError as err:
            errors.append(str(err))
    raise ValueError(f"no year from {around - 1} to {around + 1} puts every date on its weekday ({errors[0]})")


def broken(facts: dict, around: int) -> list[tuple[str, str]]:
    """(fact, what is wrong, with the fix) for every relation the facts break."""
    missing = [key for key in (*DATES, "week", "review_week") if key not in facts]
    if missing:
        return [(missing[0], f"course facts lack {', '.join(missing)}. Fix: add them to the block marked"
                             f" CHANGE FOR A NEW TERM OR FORK")]
    try:
        days = dated(facts, around)
    except ValueError as err:
        return [("final_date", f"course facts: {err}. Fix: correct the weekday or the date")]
    return [(r.fact, f"course facts: {r.fact} is {facts[r.fact]}, but {r.sentences}, so it must be"
                     f" {r.should}. Fix: change {r.fact}, or the sentences and this relation"
                     f" (rec11_book/facts.py)")
            for r in RELATIONS if not r.holds(days)]


def check_facts(app: Sphinx) -> None:
    copyright_year = re.search(r"\d{4}", str(app.config.copyright or ""))
    around = int(copyright_year[0]) if copyright_year else datetime.date.today().year
    config = Path(app.srcdir) / "_config.yml"
    text = config.read_text().splitlines() if config.is_file() else []
    for fact, problem in broken(app.config.myst_substitutions, around):
        line = next((i + 1 for i, ln in enumerate(text) if ln.strip().startswith(f"{fact}:")), 0)
        logger.warning(f"{config}:{line}: {problem}", type="rec11", subtype="facts")


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", check_facts)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
