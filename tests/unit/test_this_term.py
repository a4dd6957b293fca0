"""This term's book: the block of _config.yml that a new term changes holds the term, its
relations hold, and every sentence's mark is one of them (rec11_book.extensions.facts; how
it reads a term, on small books each test writes: tests/machinery/test_facts.py)."""

from pathlib import Path

import yaml

from rec11_book.extensions import facts

ROOT = Path(__file__).resolve().parents[2]
RULER = "# ---- CHANGE FOR A NEW TERM OR FORK"


def test_this_terms_book_holds():
    """The real book: its block's relations hold, and every sentence's mark is one of them.
    (A small book of this fall's facts holds too: test_this_fall_builds_as_it_is.)"""
    assert facts.check(ROOT) == []


def test_the_block_holds_the_term():
    """title, year and the relations are inside the block marked for a new term."""
    text = (ROOT / "_config.yml").read_text()
    block = text.split(RULER, 1)[1].split("\n# ----", 1)[0]
    keys = {line.split(":", 1)[0] for line in block.splitlines() if line[:1].isalpha()}
    assert {"title", "year", "repository", "parse", "term_relations"} <= keys, keys
    config = yaml.safe_load(text)
    assert "copyright" not in config  # the footer's © is the year: facts.copyright_from_year
    for words in config["term_relations"]:
        facts.parse_relation(words)
