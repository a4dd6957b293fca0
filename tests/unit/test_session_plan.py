"""This book's session: its instructor notes are the seed's, in slide order, summed against its
course facts; the session plan page and the build compare the same rows; its pages are in
reading order. (How notes are parsed and checked, on text each test writes:
tests/machinery/test_notes.py.)"""

from rec11 import notes
from rec11.chapter import load_substitutions, toc_pages

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
