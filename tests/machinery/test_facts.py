"""A term's facts and relations (rec11_book.extensions.facts): each test writes its own small book, a
``_config.yml`` block and a page or two, so none depends on this term's dates."""

import datetime
from pathlib import Path

import pytest
import yaml

from rec11_book.extensions import facts

RULER = "# ---- CHANGE FOR A NEW TERM OR FORK"

FALL = dict(year=2026, week=11, review_week=12, a5_due="Tue 11/24", recess="Thanksgiving recess",
            recess_start="Wed 11/25", first_day_back="Tue 12/1", final_date="Tue 12/1")
RELATIONS = ["recess_start is day after a5_due", "first_day_back is after recess_start",
             "final_date is first_day_back", "review_week is week + 1"]

# The sentences the real pages state, each on a line of its own with its mark.
PAGE = """\
# Home

{{ a5 }} is due {{ a5_due }}.
{{ recess }} starts the next day{states}`recess_start is day after a5_due`.
The final exam ({{ final_date }}) is the first day back{states}`final_date is first_day_back`.
So this is the last session with new material{states}`review_week is week + 1; final_date is first_day_back`.

## Next week: the exam review{states}`review_week is week + 1`

Week {{ review_week }} is before {{ recess }}: the exam is the first day back{states}`final_date is first_day_back`.

```{code-cell} ipython3
print("{{ not_a_fact }} in code is code")  # {states}`no relation`
```
"""


def write_book(folder: Path, term: dict, relations=RELATIONS, page: str = PAGE) -> Path:
    """A small book: the block of ``_config.yml`` (title, year, the facts, the relations), a
    table of contents and one page."""
    term = dict(term)
    year = term.pop("year")
    lines = ["# Jupyter Book 1.x configuration", "author: a test", "", RULER + " ----",
             'title: "A test book"', f"year: {year}    # the term's year", "parse:", "  myst_substitutions:",
             "    a5: Assignment 5"]
    lines += [f"    {key}: {value}" for key, value in term.items()]
    lines += ["term_relations:", *[f"  - {r}    # a comment" for r in relations], "# ----", "execute:",
              "  timeout: 60"]
    (folder / "_config.yml").write_text("\n".join(lines) + "\n")
    (folder / "_toc.yml").write_text("format: jb-book\nroot: book/home\n")
    (folder / "book").mkdir(exist_ok=True)
    (folder / "book" / "home.md").write_text(page)
    return folder


# ---------------------------------------------------------------- the three terms

SPRING = dict(year=2027,  # copied forward from the fall; the dates are those of the 2026 calendar
              week=11, review_week=14, a5_due="Fri 3/13", recess="spring break", recess_start="Mon 3/16",
              first_day_back="Mon 3/23", final_date="Thu 4/30")
SUMMER = dict(year=2026, week=6, review_week=7, a5_due="Fri 7/24", final_date="Thu 8/6")

# What the teaching assistant writes when the build asks for a sentence to be reworded: the
# old words, which must be on the line the build names, and the new.
REWORDINGS = {
    "spring": {
        "{{ recess }} starts the next day{states}`recess_start is day after a5_due`.":
            "{{ recess }} starts {{ recess_start }}.",
        "({{ final_date }}) is the first day back{states}`final_date is first_day_back`.":
            "({{ final_date }}) is after {{ recess }}{states}`final_date is after first_day_back`.",
        "So this is the last session with new material{states}`review_week is week + 1; final_date is first_day_back`.":
            "Three more sessions follow this one.",
        "## Next week: the exam review{states}`review_week is week + 1`": "## The exam review",
        "is before {{ recess }}: the exam is the first day back{states}`final_date is first_day_back`.":
            "is the last session before the exam.",
    },
    "summer": {
        "{{ recess }} starts the next day{states}`recess_start is day after a5_due`.":
            "The term runs without a break to the exam.",
        "({{ final_date }}) is the first day back{states}`final_date is first_day_back`.":
            "({{ final_date }}) is the last day of the term.",
        "{states}`review_week is week + 1; final_date is first_day_back`.": "{states}`review_week is week + 1`.",
        "is before {{ recess }}: the exam is the first day back{states}`final_date is first_day_back`.":
            "is the last session before the exam.",
    },
}


def walk_to_a_clean_build(book: Path, term: dict, rewordings: dict) -> list[facts.Problem]:
    """Apply the fix the first problem names, as a teaching assistant whose dates are right
    would, until none is left: the edit the build writes, unless it changes a fact of the term
    other than in its capitals (then the other one it offers; the year was copied forward, so
    it may change), or, for a sentence to reword, the assistant's own words on the line the
    build names. Returns the first problem of each round."""
    firsts = []
    for _ in range(20):
        problems = facts.check(book)
        if not problems:
            return firsts
        first = problems[0]
        firsts.append(first)
        path = book / first.path
        assert path.is_file() and 1 <= first.line <= len(path.read_text().splitlines()), first
        assert "Fix:" in first.message, first
        edits = [e for e in first.fixes if not (e.old.split(":")[0].strip() in term.keys() - {"year"}
                                                and (e.new or "").lower() != e.old.lower())]
        if edits:
            edits[0].apply(book)
            continue
        line = path.read_text().splitlines(keepends=True)[first.line - 1]
        mine = [(old, new) for old, new in rewordings.items() if old in line]
        assert len(mine) == 1, f"the assistant has no words for {first}"
        path.write_text(path.read_text().replace(line, line.replace(*mine[0]), 1))
    raise AssertionError(f"still failing after 20 rounds: {facts.check(book)}")


def kinds(problems):
    """What each problem is about, in a word or two, with the line's key or page."""
    return sorted(f"{p.path}:{p.message.split(' ', 1)[0]}" for p in problems)


def test_this_fall_builds_as_it_is(tmp_path):
    book = write_book(tmp_path, FALL)
    assert walk_to_a_clean_build(book, FALL, {}) == []


def test_a_spring_term_names_the_year_the_two_relations_and_the_capital_letter(tmp_path):
    book = write_book(tmp_path, SPRING)
    first = facts.check(book)
    # the dates fall on their weekdays in 2026, not in the year copied forward; the review is
    # not next week (a number: checked before the dates are); the recess starts a sentence with
    # a small letter
    assert kinds(first) == ["_config.yml:review_week", "_config.yml:year", "book/home.md:{{"], first
    assert "every one is in 2026" in first[0].message and "'year: 2026'" in first[0].message
    assert "'review_week is week + 3'" in first[1].message
    assert "'recess: Spring break'" in first[2].message and first[2].line == 4

    firsts = walk_to_a_clean_build(book, SPRING, REWORDINGS["spring"])
    # the year; the three relations the dates break (the recess after A5, the final the first
    # day back, the review next week), each at its fact's line with the sentences that state it;
    # the capital letter; then each sentence of the old relations, at its line
    assert [p.message.split(" ", 1)[0] for p in firsts[:4]] == ["year", "recess_start", "final_date",
                                                               "review_week"]
    assert "book/home.md:4" in firsts[1].message and "book/home.md:5" in firsts[2].message
    reworded = [p for p in firsts if "no longer has" in p.message]
    assert [p.line for p in reworded] == [4, 5, 6, 8, 10], firsts
    assert [(p.path, p.line) for p in firsts if "small letter" in p.message] == [("book/home.md", 4)]
    assert len(firsts) == 10
    config = yaml.safe_load((book / "_config.yml").read_text())
    assert config["year"] == 2026 and config["parse"]["myst_substitutions"]["recess"] == "Spring break"
    assert config["term_relations"] == ["recess_start is after a5_due", "first_day_back is after recess_start",
                                        "final_date is after first_day_back", "review_week is week + 3"]
    subs = config["parse"]["myst_substitutions"]
    assert all(subs[k] == v for k, v in SPRING.items() if k not in ("year", "recess")), "no fact was changed"


def test_a_summer_term_without_a_recess_names_each_relation_and_sentence_of_the_recess(tmp_path):
    book = write_book(tmp_path, SUMMER)
    first = facts.check(book)
    # three relations name a recess fact the block no longer has; two lines show {{ recess }}
    assert kinds(first) == ["_config.yml:the"] * 3 + ["book/home.md:the"] * 2, first
    assert [p.line for p in first[3:]] == [4, 10]

    firsts = walk_to_a_clean_build(book, SUMMER, REWORDINGS["summer"])
    assert [p.path for p in firsts[:3]] == ["_config.yml"] * 3  # each relation removed, as asked
    assert all(p.path == "book/home.md" for p in firsts[3:])
    assert sorted({p.line for p in firsts[3:]}) == [4, 5, 6, 10]
    assert len(firsts) <= 8, firsts
    config = yaml.safe_load((book / "_config.yml").read_text())
    assert config["term_relations"] == ["review_week is week + 1"]
    assert "{states}`review_week is week + 1`" in (book / "book" / "home.md").read_text()


# ---------------------------------------------------------------- one problem at a time

def test_a_date_not_on_its_weekday_names_the_right_one(tmp_path):
    (problem,) = facts.check(write_book(tmp_path, {**FALL, "year": 2026, "a5_due": "Mon 11/24"}))
    assert problem.path == "_config.yml" and problem.message.startswith("a5_due is 'Mon 11/24'")
    assert "in 2026, 11/24 is a Tuesday. Fix: write 'Tue 11/24'" in problem.message
    problem.fixes[0].apply(tmp_path)
    assert facts.check(tmp_path) == []


def test_the_year_is_exact(tmp_path):
    """No year either side: dates that fit the year before fail, naming the year that fits."""
    problems = facts.check(write_book(tmp_path, {**FALL, "year": 2027}))
    assert [p.message.split(" ", 1)[0] for p in problems] == ["year"]
    assert "every one is in 2026" in problems[0].message


@pytest.mark.parametrize("value", ["11/24", "Tues 11/24", "Tue 11/31"])
def test_a_date_written_otherwise_names_the_form(tmp_path, value):
    (problem,) = facts.check(write_book(tmp_path, {**FALL, "a5_due": value}))
    assert "written like 'Tue 11/24'" in problem.message and "a5_due" in problem.message


def test_a_broken_relation_offers_the_fact_or_the_relation(tmp_path):
    (problem,) = facts.check(write_book(tmp_path, {**FALL, "final_date": "Thu 12/10"}))
    config = (tmp_path / "_config.yml").read_text().splitlines()
    assert config[problem.line - 1].strip().startswith("final_date: Thu 12/10")
    assert "'final_date is first_day_back'" in problem.message
    assert "book/home.md:5, book/home.md:6, book/home.md:10" in problem.message  # the sentences
    assert "write 'final_date: Tue 12/1'" in problem.message
    assert "'final_date is after first_day_back'" in problem.message
    to_fact, to_relation = problem.fixes
    assert to_relation.new == "final_date is after first_day_back"
    to_fact.apply(tmp_path)
    assert facts.check(tmp_path) == []


def test_a_mark_that_the_block_does_not_have_names_the_sentence(tmp_path):
    page = PAGE.replace("the next day{states}`recess_start is day after a5_due`",
                        "two days later{states}`recess_start is 2 days after a5_due`")
    (problem,) = facts.check(write_book(tmp_path, FALL, page=page))
    assert (problem.path, problem.line) == ("book/home.md", 4)
    assert "'{{ recess }} starts two days later'" in problem.message
    assert "no longer has" in problem.message and "restore the relation" in problem.message


def test_a_relation_outside_the_vocabulary_is_named_with_the_vocabulary(tmp_path):
    problems = facts.check(write_book(tmp_path, FALL, relations=[*RELATIONS, "final_date comes after the recess"]))
    assert [p.line for p in problems] == [len((tmp_path / "_config.yml").read_text().splitlines()) - 3]
    assert "'X is day after Y'" in problems[0].message


@pytest.mark.parametrize("words, relation", [
    ("final_date is first_day_back", facts.Relation("final_date", "=", "first_day_back", 0)),
    ("recess_start is day after a5_due", facts.Relation("recess_start", "=", "a5_due", 1)),
    ("recess_start is 1 day after a5_due", facts.Relation("recess_start", "=", "a5_due", 1)),
    ("a is 3 days before b", facts.Relation("a", "=", "b", -3)),
    ("review_week is week + 1", facts.Relation("review_week", "=", "week", 1)),
    ("review_week  is  week - 2", facts.Relation("review_week", "=", "week", -2)),
    ("first_day_back is after recess_start", facts.Relation("first_day_back", ">", "recess_start")),
    ("a is before b", facts.Relation("a", "<", "b")),
])
def test_the_vocabulary(words, relation):
    assert facts.parse_relation(words) == relation


@pytest.mark.parametrize("text, starts", [
    ("{{ x }} is first.", True),
    ("One. {{ x }} is next.", True),
    ("One?\n{{ x }} is next.", True),
    ("## {{ x }}", True),
    (":::{slide}\n{{ x }} is first.", True),
    ("- {{ x }} in a list", True),
    (": {{ x }} defines it", True),
    ("It is *before*\n{{ x }}, then.", False),
    ("due then, {{ x }} follows", False),
    ("held before {{ x }}.", False),
])
def test_what_starts_a_sentence(text, starts):
    assert facts.starts_a_sentence(text, text.index("{{")) is starts


def test_a_copyright_follows_the_year(tmp_path):
    write_book(tmp_path, FALL)

    class App:
        srcdir = tmp_path

    class Config:
        copyright = "2023"  # Jupyter Book's default

    config = Config()
    facts.copyright_from_year(App, config)
    assert config.copyright == "2026"


def test_dates_parse_in_their_year():
    assert facts.parse_day("Tue 11/24", 2026) == datetime.date(2026, 11, 24)
    with pytest.raises(ValueError, match="in 2027, 11/24 is a Wednesday: write 'Wed 11/24'"):
        facts.parse_day("Tue 11/24", 2027)
    with pytest.raises(ValueError, match="like 'Tue 11/24'"):
        facts.parse_day("11/24", 2026)
