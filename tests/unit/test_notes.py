"""Instructor notes are parsed once, checked, and summed honestly."""

import pytest

from rec11.book import notes

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


@pytest.mark.parametrize("minutes, block, message", [
    ("five", "attention", ":minutes: must be a number"),
    ("5", "lunch", ":block: must be one of"),
])
def test_bad_notes_name_the_file_and_line(minutes, block, message):
    with pytest.raises(ValueError, match=rf"book/page\.md:3: instructor-note {message}"):
        notes.notes_in("# Page\n\n" + NOTE.format(slide="A", minutes=minutes, block=block), "book/page")


def test_a_note_without_minutes_is_an_error():
    with pytest.raises(ValueError, match="missing :minutes:"):
        notes.notes_in(":::{instructor-note}\n:slide: A\n:block: close\n\nText\n:::\n", "book/page")


def test_the_book_notes_follow_the_seed(root):
    plan = notes.collect(root)
    facts = notes.load_substitutions(root)
    compared = notes.compare(plan, notes.budget(facts))
    # The seed's per-slide minutes: 15 slides, 78 minutes, inside an 80-minute session.
    assert len(plan) == len({n.slide for n in plan}), "one note per slide"
    assert compared["total"][0] <= facts["session_minutes"]
    assert plan[0].slide.startswith("Recitation 11") and plan[-1].slide == "Where this lands"


def test_toc_order_is_reading_order(root):
    pages = notes.toc_pages(root)
    assert pages[0] == "book/index"
    assert len(pages) == len(set(pages))
    for page in pages:
        assert (root / f"{page}.md").is_file(), page
