"""A term's course facts and the relations between them, as ``_config.yml``'s block states
them, checked against the sentences of the pages when the build starts.

The block marked CHANGE FOR A NEW TERM OR FORK holds the term: ``title``, ``year``, the
course facts (``parse.myst_substitutions``; pages write ``{{ final_date }}``, never the date)
and ``term_relations``, what the pages say about how the facts relate, in a small
vocabulary (:data:`RELATION`)::

    term_relations:
      - recess_start is day after a5_due    # "{{ recess }} starts the next day"
      - final_date is first_day_back        # "the final is the first day back"
      - review_week is week + 1             # "next week: the exam review"

A sentence that states a relation carries it as a mark that renders nothing, with the
same words: ``... starts the next day{states}`recess_start is day after a5_due`, and``
(several relations: ``{states}`a is b; c is d + 1```). So a new term's block can change
the dates, change a relation or drop it (a summer term has no recess), and :func:`check`
names, each with its file, its line and the fix:

* a date not written like "Tue 11/24", or not on its weekday in ``year`` (and the year in
  which every date fits, when there is one);
* a relation the dates break, at the fact's line, with the sentences that state it;
* a relation that names a fact the block does not have;
* a sentence whose mark states a relation the block no longer has;
* a page that shows ``{{ fact }}`` when the block has no such fact;
* a fact shown at the start of a sentence whose value starts with a small letter.

``Problem.fixes`` are the edits the message asks for, where the build can write them
(the tests apply them to walk a new term to a clean build). Sphinx-side: imports no torch.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

from rec11.chapter import toc_pages

logger = logging.getLogger(__name__)

CONFIG = "_config.yml"
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DATE = re.compile(r"\s*([A-Z][a-z]{2})\s+(\d{1,2})/(\d{1,2})\s*")
LOOKS_LIKE_A_DATE = re.compile(r".*\b\d{1,2}/\d{1,2}\b.*")
# the vocabulary: "X is Y", "X is Y + 2", "X is day after Y", "X is 3 days before Y",
# "X is after Y", "X is before Y" (dates: days; numbers: units)
RELATION = re.compile(
    r"(?P<fact>\w+) is (?:(?P<cmp>after|before) (?P<a>\w+)"
    r"|(?:(?P<n>\d+) days|(?:1 )?day) (?P<dir>after|before) (?P<b>\w+)"
    r"|(?P<c>\w+)(?: (?P<sign>[+-]) (?P<k>\d+))?)")
VOCABULARY = ("'X is Y', 'X is Y + 1', 'X is day after Y', 'X is 3 days before Y', 'X is after Y'"
              " or 'X is before Y'")
MARK = re.compile(r"\{states\}`([^`]*)`")
SUBSTITUTION = re.compile(r"\{\{\s*(\w+)\s*\}\}")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` by ``new`` on ``line`` of ``path`` (relative to the book); ``new=None``
    deletes the line."""

    path: str
    line: int
    old: str
    new: str | None

    def apply(self, book: Path) -> None:
        file = book / self.path
        lines = file.read_text().splitlines(keepends=True)
        if self.old not in lines[self.line - 1]:
            raise ValueError(f"{self.path}:{self.line} no longer has {self.old!r}")
        if self.new is None:
            del lines[self.line - 1]
        else:
            lines[self.line - 1] = lines[self.line - 1].replace(self.old, self.new, 1)
        file.write_text("".join(lines))


@dataclass(frozen=True)
class Problem:
    path: str  # relative to the book
    line: int
    message: str  # what is wrong, then "Fix: ..."
    fixes: tuple[Edit, ...] = ()  # the edits the message asks for, where the build can write them

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Relation:
    """``fact`` compared (``op``: "=", ">" after, "<" before) with ``other`` + ``offset``."""

    fact: str
    op: str
    other: str
    offset: int = 0

    def holds(self, values: dict) -> bool:
        x, y = values[self.fact], values[self.other]
        y = y + datetime.timedelta(days=self.offset) if isinstance(y, datetime.date) else y + self.offset
        return x == y if self.op == "=" else x > y if self.op == ">" else x < y

    def words(self, dates: bool) -> str:
        if self.op != "=":
            return f"{self.fact} is {'after' if self.op == '>' else 'before'} {self.other}"
        if not self.offset:
            return f"{self.fact} is {self.other}"
        if not dates:
            return f"{self.fact} is {self.other} {'+' if self.offset > 0 else '-'} {abs(self.offset)}"
        way = "after" if self.offset > 0 else "before"
        return f"{self.fact} is {'day' if abs(self.offset) == 1 else f'{abs(self.offset)} days'} {way} {self.other}"


def parse_relation(text: str) -> Relation:
    """A relation in the block's words; ValueError naming the vocabulary."""
    match = RELATION.fullmatch(" ".join(str(text).split()))
    if not match:
        raise ValueError(f"'{text}' is not a relation this build reads: write it as {VOCABULARY}")
    if match["cmp"]:
        return Relation(match["fact"], ">" if match["cmp"] == "after" else "<", match["a"])
    if match["b"]:
        days = int(match["n"] or 1)
        return Relation(match["fact"], "=", match["b"], days if match["dir"] == "after" else -days)
    return Relation(match["fact"], "=", match["c"], int(match["k"] or 0) * (-1 if match["sign"] == "-" else 1))


def parse_day(text: str, year: int) -> datetime.date:
    """``"Tue 11/24"`` in ``year``; ValueError if it is not written so or not that weekday."""
    match = DATE.fullmatch(str(text))
    if not match or match[1] not in WEEKDAYS:
        raise ValueError(f"{text!r} is not a date written like 'Tue 11/24'")
    try:
        day = datetime.date(year, int(match[2]), int(match[3]))
    except ValueError:
        raise ValueError(f"{text!r} is not a date written like 'Tue 11/24': {match[2]}/{match[3]} is no day"
                         f" of {year}") from None
    if WEEKDAYS[day.weekday()] != match[1]:
        raise ValueError(f"in {year}, {match[2]}/{match[3]} is a {WEEKDAY_NAMES[day.weekday()]}:"
                         f" write '{shown(day)}'")
    return day


def shown(day: datetime.date) -> str:
    """A date as the block writes it: ``Tue 11/24``."""
    return f"{WEEKDAYS[day.weekday()]} {day.month}/{day.day}"


def is_date(value) -> bool:
    return isinstance(value, str) and bool(LOOKS_LIKE_A_DATE.fullmatch(value))


# ---------------------------------------------------------------- where things are in the block

class Block:
    """``_config.yml`` read once: its values, and the line each key is on."""

    def __init__(self, book: Path):
        self.text = (book / CONFIG).read_text()
        self.lines = self.text.splitlines()
        self.config = yaml.safe_load(self.text) or {}
        self.facts = dict((self.config.get("parse") or {}).get("myst_substitutions") or {})
        self.year = self.config.get("year")
        self.relations = [str(r) for r in self.config.get("term_relations") or []]

    def line_of(self, key: str, below: str | None = None) -> int:
        """The line of the top-level ``key:``, or of the first ``key:`` after ``below:``; 1 if none."""
        start = 0
        if below:
            start = next((i for i, ln in enumerate(self.lines) if ln.strip().startswith(f"{below}:")), 0)
        pattern = re.compile(rf"{'[ ]*' if below else ''}{re.escape(key)}\s*:")
        return next((i + 1 for i, ln in enumerate(self.lines) if i >= start and pattern.match(ln)), 1)

    def fact_line(self, fact: str) -> int:
        return self.line_of(fact, below="myst_substitutions")

    def relation_lines(self) -> list[int]:
        """The line of each ``term_relations`` item, in order."""
        start = self.line_of("term_relations")
        found = []
        for i in range(start, len(self.lines)):
            line = self.lines[i]
            if line.strip() and not line.startswith((" ", "-", "#")):
                break  # the next top-level key
            if line.lstrip().startswith("- "):
                found.append(i + 1)
        return found

    def fact_edit(self, fact: str, value: str) -> Edit:
        line = self.fact_line(fact)
        old = self.lines[line - 1].split("#", 1)[0].rstrip()
        return Edit(CONFIG, line, old, old.split(":", 1)[0] + f": {value}")


# ---------------------------------------------------------------- the checks

def check(book: Path) -> list[Problem]:
    """Every problem of the term's block and of the pages' sentences that state its relations:
    the block's first, then the pages', each in order."""
    block = Block(book)
    problems: list[Problem] = []
    days = check_dates(block, problems)
    relations = check_relations(block, days, problems, sentences_by_relation(book))
    problems += check_pages(book, block, relations)
    return problems


def check_dates(block: Block, problems: list[Problem]) -> dict | None:
    """The facts with each date parsed in ``year``; None (and the problems) when they cannot be."""
    dates = {k: v for k, v in block.facts.items() if is_date(v)}
    year = block.year
    if not isinstance(year, int):
        fits = years_that_fit(dates, datetime.date.today().year)
        hint = f"year: {fits[0]}" if fits else f"year: {datetime.date.today().year}"
        problems.append(Problem(CONFIG, block.line_of("title"), (
            f"the block has no year (it reads {year!r}), so the build cannot tell a date's weekday."
            f" Fix: add '{hint}' under the title: the year in which every date falls on its weekday")))
        return None
    wrong = {}
    for fact, value in dates.items():
        try:
            parse_day(value, year)
        except ValueError as err:
            wrong[fact] = str(err)
    if not wrong:
        return {**block.facts, **{k: parse_day(v, year) for k, v in dates.items()}}
    badly_written = [f for f, why in wrong.items() if "written like" in why]
    for fact in badly_written:
        problems.append(Problem(CONFIG, block.fact_line(fact), f"{fact}: {wrong[fact]}. Fix: write it so"))
    if badly_written:
        return None
    fits = years_that_fit(dates, year)
    if len(wrong) > 1 and fits:
        first = next(iter(wrong))
        old = block.lines[block.line_of("year") - 1].split("#", 1)[0].rstrip()
        problems.append(Problem(CONFIG, block.line_of("year"), (
            f"year is {year}, but {len(wrong)} of the block's dates are not on their weekday in {year}"
            f" ({first}: {wrong[first]}), and every one is in {fits[0]}. Fix: 'year: {fits[0]}' if the"
            f" term is in {fits[0]}; if it is in {year}, correct each date"),
            (Edit(CONFIG, block.line_of("year"), old, f"year: {fits[0]}"),)))
        return None
    for fact in wrong:
        month, day = map(int, DATE.fullmatch(dates[fact]).group(2, 3))
        right = shown(datetime.date(year, month, day))
        other = f"; or, if the term is in {fits[0]}, 'year: {fits[0]}'" if fits else ""
        problems.append(Problem(CONFIG, block.fact_line(fact), (
            f"{fact} is '{dates[fact]}', but in {year}, {month}/{day} is a"
            f" {WEEKDAY_NAMES[WEEKDAYS.index(right[:3])]}. Fix: write '{right}', or correct the date{other}"),
            (block.fact_edit(fact, right),)))
    return None


def years_that_fit(dates: dict, near: int) -> list[int]:
    """The years within six of ``near``, nearest first, in which every date is on its weekday."""
    fits = []
    for year in sorted(range(near - 6, near + 7), key=lambda y: (abs(y - near), y)):
        try:
            [parse_day(v, year) for v in dates.values()]
        except ValueError:
            continue
        fits.append(year)
    return fits


def check_relations(block: Block, days: dict | None, problems: list[Problem],
                    sentences: dict[Relation, list[tuple[str, int]]]) -> dict[Relation, int]:
    """{relation: its line} for each relation of the block that reads; the problems of each."""
    lines = block.relation_lines()
    found = {}
    for i, text in enumerate(block.relations):
        listed = i < len(lines)  # one item a line (a [flow, list] has one line for all)
        line = lines[i] if listed else block.line_of("term_relations")
        delete = (Edit(CONFIG, line, block.lines[line - 1].strip(), None),) if listed else ()
        try:
            relation = parse_relation(text)
        except ValueError as err:
            problems.append(Problem(CONFIG, line, f"{err}. Fix: reword it so, or remove it"))
            continue
        found[relation] = line
        where = ", ".join(f"{page}:{ln}" for page, ln in sentences.get(relation, []))
        stated = f"the pages state it at {where}" if where else "no page states it"
        missing = [f for f in (relation.fact, relation.other) if f not in block.facts]
        if missing:
            problems.append(Problem(CONFIG, line, (
                f"the relation '{text}' names {' and '.join(missing)}, which the block does not have"
                f" ({stated}). Fix: add {' and '.join(missing)} to the course facts,"
                f" or, if the term has none, remove this relation: the build then names each sentence"
                f" that states it, to reword"), delete))
            continue
        if days is None and (is_date(block.facts[relation.fact]) or is_date(block.facts[relation.other])):
            continue  # the dates' own problems come first
        values = days or block.facts
        try:
            holds = relation.holds(values)
        except TypeError:
            problems.append(Problem(CONFIG, line, (
                f"the relation '{text}' compares {relation.fact} ({values[relation.fact]!r}) with"
                f" {relation.other} ({values[relation.other]!r}): two dates or two numbers only."
                f" Fix: reword it or remove it")))
            continue
        if holds:
            continue
        x, y = values[relation.fact], values[relation.other]
        dates = isinstance(x, datetime.date)
        gap = (x - y).days if dates else x - y
        truer = Relation(relation.fact, "=" if abs(gap) <= 1 or not dates else ">" if gap > 0 else "<",
                         relation.other, gap if abs(gap) <= 1 or not dates else 0)
        fixes = []
        if relation.op == "=":
            should = y + datetime.timedelta(days=relation.offset) if dates else y + relation.offset
            fixes.append(block.fact_edit(relation.fact, shown(should) if dates else str(should)))
        if listed:
            fixes.append(Edit(CONFIG, line, block.lines[line - 1].split("- ", 1)[1].split("#", 1)[0].rstrip(),
                              truer.words(dates)))
        fix_fact = f"write '{relation.fact}: {fixes[0].new.split(': ', 1)[1]}'" if relation.op == "=" else \
            f"correct {relation.fact}"
        problems.append(Problem(CONFIG, block.fact_line(relation.fact), (
            f"{relation.fact} is {block.facts[relation.fact]} and {relation.other} is"
            f" {block.facts[relation.other]}, but the block says '{text}' ({CONFIG}:{line}), and"
            f" {stated}. Fix: if {relation.fact} is wrong, {fix_fact}; if it is right, those"
            f" sentences are false for this term: replace the relation with one that holds"
            f" ('{truer.words(dates)}') or remove it, and the build then names each sentence to reword"),
            tuple(fixes)))
    return found


def marked(text: str) -> list[tuple[int, int, str]]:
    """(offset, line, relation words) for each relation a ``{states}`` mark of ``text`` states."""
    return [(m.start(), text.count("\n", 0, m.start()) + 1, words.strip())
            for m in MARK.finditer(text) for words in m[1].split(";") if words.strip()]


def prose(text: str) -> str:
    """``text`` with the lines of code blanked: a code cell or a fence of plain code (its
    ``{{ }}`` and marks are code, not sentences)."""
    lines, fence, code = text.splitlines(keepends=True), None, False
    for i, line in enumerate(lines):
        match = FENCE.match(line)
        if fence is None:
            if match:  # a fence opens: code, or a directive (whose body is prose)
                info = line.strip()[len(match[1]):].strip()
                code = not info or info.startswith("{code-cell}") or bool(re.fullmatch(r"[\w+-]+", info))
                fence = match[1]
        elif line.strip() == fence:
            fence = None
        elif code:
            lines[i] = "\n"
    return "".join(lines)


def pages(book: Path) -> list[tuple[str, str]]:
    """(path relative to the book, prose) for each page of ``_toc.yml`` written in MyST."""
    found = []
    for page in toc_pages(book) if (book / "_toc.yml").is_file() else []:
        path = book / f"{page}.md"
        if path.is_file():
            found.append((f"{page}.md", prose(path.read_text())))
    return found


def sentences_by_relation(book: Path) -> dict[Relation, list[tuple[str, int]]]:
    found: dict[Relation, list[tuple[str, int]]] = {}
    for path, text in pages(book):
        for _, line, words in marked(text):
            try:
                found.setdefault(parse_relation(words), []).append((path, line))
            except ValueError:
                pass  # check_pages names it
    return found


def sentence_before(text: str, at: int) -> str:
    """The words of the sentence (or clause, after another mark) that ends at offset ``at``."""
    ends = [m.end() for m in re.finditer(r"\n\s*\n|[.!?](?=\s)|\{states\}`[^`]*`|^#+ |^:", text[:at], re.M)]
    words = " ".join(text[max(ends, default=0):at].split()).lstrip(" ,;:")
    return words if len(words) <= 120 else "..." + words[-117:]


def starts_a_sentence(text: str, at: int) -> bool:
    """Whether offset ``at`` begins a sentence: a paragraph, heading, list item or definition,
    or follows a full stop, question or exclamation mark."""
    before = re.sub(r"[*_\s]+$", "", text[:at])  # emphasis and spaces before it
    if not before or before.endswith(("\n", ".", "!", "?")) or re.search(r"(^|\n)\s*([#>]+|[-+*]|:|\d+\.)$", before):
        return True
    line_start = text.rfind("\n", 0, at) + 1
    if text[line_start:at].strip(" *_"):
        return False  # words before it on its line
    previous = text[:line_start].rstrip("\n").rsplit("\n", 1)[-1].strip()
    return previous == "" or previous.startswith((":::", "```", "#")) or bool(re.fullmatch(r":\w[\w-]*:.*", previous))


def check_pages(book: Path, block: Block, relations: dict[Relation, int]) -> list[Problem]:
    problems = []
    for path, text in pages(book):
        for offset, line, words in marked(text):
            sentence = sentence_before(text, offset)
            try:
                relation = parse_relation(words)
            except ValueError as err:
                problems.append(Problem(path, line, f"this sentence's mark: {err}"))
                continue
            if relation in relations:
                continue  # the block has it: checked there
            problems.append(Problem(path, line, (
                f"this sentence, '{sentence}', states '{words}', which {CONFIG}'s term_relations no longer"
                f" has. Fix: reword the sentence to what this term's facts say (mark a relation it still"
                f" states, or drop its {{states}} mark), or restore the relation")))
        for match in SUBSTITUTION.finditer(text):
            name, line = match[1], text.count("\n", 0, match.start()) + 1
            if name not in block.facts:
                problems.append(Problem(path, line, (
                    f"the page shows {{{{ {name} }}}}, and {CONFIG}'s course facts have no {name}. Fix: reword"
                    f" the sentence without it, or add {name} to the course facts")))
                continue
            value = str(block.facts[name])
            if value[:1].islower() and starts_a_sentence(text, match.start()):
                capital = value[0].upper() + value[1:]
                edit = block.fact_edit(name, capital)
                problems.append(Problem(path, line, (
                    f"{{{{ {name} }}}} starts this sentence, and {name} is '{value}', which starts with a"
                    f" small letter. Fix: write '{name}: {capital}' ({CONFIG}:{edit.line})"), (edit,)))
    return problems


# ---------------------------------------------------------------- Sphinx

def check_facts(app: Sphinx) -> None:
    book = Path(app.srcdir)
    if not (book / CONFIG).is_file():
        return
    for problem in check(book):
        logger.warning(f"{book / problem.path}:{problem.line}: {problem.message}", type="rec11", subtype="facts")


def copyright_from_year(app: Sphinx, config: Config) -> None:
    """The footer's copyright is the block's ``year``, unless ``_config.yml`` writes one."""
    path = Path(app.srcdir) / CONFIG
    raw = yaml.safe_load(path.read_text()) if path.is_file() else {}
    if isinstance(raw, dict) and "copyright" not in raw and isinstance(raw.get("year"), int):
        config.copyright = str(raw["year"])


def states(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{states}`final_date is first_day_back```: the relation a sentence states; renders nothing."""
    return [], []


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", copyright_from_year)
    app.connect("builder-inited", check_facts)
    app.add_role("states", states)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
