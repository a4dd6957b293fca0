"""The course facts' relations (rec11_book.facts): a new term's dates that make a sentence false."""

import datetime
from pathlib import Path

import pytest
import yaml

from rec11_book import facts

ROOT = Path(__file__).resolve().parents[2]

FACTS = {"week": 11, "review_week": 12, "a5_due": "Tue 11/24", "recess_start": "Wed 11/25",
         "first_day_back": "Tue 12/1", "final_date": "Tue 12/1"}


def test_this_terms_facts_hold():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    year = int(str(config["copyright"])[:4])
    assert facts.broken(config["parse"]["myst_substitutions"], year) == []
    assert facts.broken(FACTS, 2026) == []


@pytest.mark.parametrize("change, fact", [
    ({"final_date": "Thu 12/10"}, "final_date"),  # no longer the first day back
    ({"recess_start": "Fri 11/27"}, "recess_start"),  # not the day after A5 is due
    ({"review_week": 13}, "review_week"),  # not next week
    ({"first_day_back": "Mon 11/23", "final_date": "Mon 11/23"}, "first_day_back"),  # before the recess
])
def test_a_date_that_makes_a_sentence_false_names_the_fact_the_sentence_and_the_fix(change, fact):
    problems = facts.broken({**FACTS, **change}, 2026)
    assert [f for f, _ in problems] == [fact]
    assert "Fix: change" in problems[0][1] and "'" in problems[0][1]  # quotes the sentence


def test_a_weekday_that_fits_no_nearby_year_is_an_error():
    (_, problem), = facts.broken({**FACTS, "final_date": "Wed 12/1"}, 2026)
    assert "'Wed 12/1'" in problem and "Fix: correct the weekday" in problem


def test_the_year_is_the_one_where_every_weekday_fits():
    assert facts.dated(FACTS, 2025)["a5_due"] == datetime.date(2026, 11, 24)
    with pytest.raises(ValueError, match="like 'Tue 11/24'"):
        facts.parse_day("11/24", 2026)
