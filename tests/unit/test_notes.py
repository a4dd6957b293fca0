"""Instructor notes are parsed once, checked, and summed honestly."""

import pytest

from rec11 import notes
from rec11.chapter import load_substitutions, toc_pages

NOTE = """\
:::{{instructor-note}}
:slide: {slide}
:minutes: {minutes}
:block: {block}

Say this.
:::
"""


def test_notes_are_found_with_their_line():
    text = "# Page\n\n" + NOTE.format(slide="A", minutes=5, block="attention") + "\n" + NOTE.format(
        slide="B", minutes=2.5, block="close")
    found = notes.notes_in(text, "book/page")
    assert [(n.slide, n.minutes, n.block, n.line) for n in found] == [("A", 5, "attention", 3), ("B", 2.5, "close", 11)]


BLOCKS = ("attention", "generation", "generative", "close")


@pytest.mark.parametrize("minutes, block, message", [
    ("five", "attention", ":minutes: must be a number"),
    ("5", "lunch", ":block: must be one of the session's blocks, attention, generation, generative, close"),
])
def test_bad_notes_name_the_file_and_line(minutes, block, message):
    with pytest.raises(ValueError, match=rf"book/page\.md:3: instructor-note {message}"):
        notes.notes_in("# Page\n\n" + NOTE.format(slide="A", minutes=minutes, block=block), "book/page", BLOCKS)


@pytest.mark.parametrize("typed, fix", [("atention", "write :block: attention"), ("closing", "write :block: close"),
                                        ("lunch", "write one of them, or add budget_lunch to the course facts")])
def test_a_block_typo_gets_the_nearest_block_as_its_fix(typed, fix):
    with pytest.raises(ValueError, match=f"got '{typed}'. Fix: {fix}$"):
        notes.notes_in(NOTE.format(slide="A", minutes=5, block=typed), "book/page", BLOCKS)


def test_the_blocks_are_the_course_facts_budgets_in_order():
    facts = {"session_minutes": 50, "budget_intro": 10, "budget_slack": 3, "budget_practice": 35, "budget_wrap": 5}
    assert notes.blocks(facts) == ("intro", "practice", "wrap")
    assert notes.budget(facts) == {"intro": 10, "practice": 35, "wrap": 5, "session": 50}
    found = notes.notes_in(NOTE.format(slide="A", minutes=12, block="practice"), "book/page", notes.blocks(facts))
    assert notes.compare(found, notes.budget(facts)) == {"intro": (0, 10), "practice": (12, 35), "wrap": (0, 5),
                                                         "session": (12, 50)}


def test_a_note_without_minutes_is_an_error():
    with pytest.raises(ValueError, match="missing :minutes:"):
        notes.notes_in(":::{instructor-note}\n:slide: A\n:block: close\n\nText\n:::\n", "book/page")


# The seed's slides in order, with the minutes of their speaker notes.
SEED = [
    ("Recitation 11", 2), ("The one idea", 5), ("Tokens are a matrix", 5),
    ("Q, K, V are three views of the same input", 5), ("Attention, in four lines", 6),
    ("Three details that are not decoration", 8), ("Multi-head is only a reshape", 5),
    ("Reading an attention map, carefully", 6), ("Generation is a loop", 5),
    ("Surprisal — the measurement you can do on a laptop", 5),
    ("VAE: the trick that makes sampling differentiable", 6), ("The two terms pull against each other", 5),
    ("Diffusion: one closed form, one MSE", 6), ("Exercise", 6), ("Where this lands", 3),
]


def test_the_book_has_every_seed_note_once_in_slide_order(root):
    plan = notes.collect(root)
    assert [(n.slide, n.minutes) for n in plan] == SEED
    facts = load_substitutions(root)
    stated = notes.budget(facts)
    compared = notes.compare(plan, stated)
    # The seed's own arithmetic, shown on the session-plan page rather than adjusted: the notes
    # against the session's length, as the build checks them, not against the blocks' sum
    assert compared["session"] == (78, 80) and facts["session_minutes"] == 80
    assert notes.blocks(facts) == ("attention", "generation", "generative", "close")
    assert sum(stated[b] for b in notes.blocks(facts)) == 83 and "total" not in compared
    assert compared["attention"] == (42, 42) and compared["generation"] == (10, 10)


def test_the_plan_and_the_build_compare_the_same_rows(root):
    """The session plan page and the build's budget check both take their rows from
    ``notes.compare(…, notes.budget(facts))``, and neither adds a row of its own."""
    plan = (root / "book" / "instructor.md").read_text()
    check = (root / "src" / "rec11_book" / "extensions" / "notes.py").read_text()
    for text in (plan, check):
        assert "compare(" in text and "budget(" in text
    assert 'rows["' not in check and "rows.pop" not in check


def test_toc_order_is_reading_order(root):
    pages = toc_pages(root)
    assert pages[0] == "book/index"
    assert len(pages) == len(set(pages))
    for page in pages:
        assert (root / f"{page}.md").is_file(), page
