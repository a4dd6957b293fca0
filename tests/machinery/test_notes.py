"""Instructor notes are parsed once, checked, and summed honestly."""

import pytest

from rec11 import notes

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
