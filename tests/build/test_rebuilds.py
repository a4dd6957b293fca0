"""What only an incremental rebuild shows: pages the rebuild does not read again.

A session plan's {agenda} lists every page's time, and a core page's header gives its
going-further pages' time. When only the going-further page grows, neither is read
again. Sphinx writes the core page again (a toctree parent of the page that changed);
the plan, a page beside it, the build must write again itself. The deck is composed
from every written page, read again or not.
(The notebook downloads after a cached rebuild: test_notebook_downloads.py; the pages
a package edit re-executes: test_no_stale_pages.py.)
"""

import re

import pytest

pytestmark = pytest.mark.build

WORDS = "word " * 20  # 20 words: 6 s at 200 words a minute


def text(html) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.read_text()))


def test_a_grown_going_further_page_updates_the_agenda_and_its_core_page(mini_book):
    mini_book.page("index", "# The chapter\n\nSome prose.\n")
    mini_book.page("plan", "# Session plan\n\n```{agenda}\n```\n")
    mini_book.page("core", f"# Core\n\n{WORDS * 10}\n")  # 200 words: 1 min
    (mini_book.path / "book" / "further").mkdir()
    deep = mini_book.page("further/deep", f"# Deep\n\n{WORDS * 10}\n")
    (mini_book.path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/index\nchapters:\n"
        "  - file: book/core\n    sections:\n      - file: book/further/deep\n"
        "  - file: book/plan\n")
    html = mini_book.path / "_build" / "html" / "book"

    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "Deep · 1 min" in text(html / "plan.html")
    assert "going further 1 min more" in text(html / "core.html")

    deep.write_text(deep.read_text() + f"\n{WORDS * 50}\n")  # now 1,200 words: 6 min
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "reading time 6 min" in text(html / "further" / "deep.html")
    assert "Deep · 6 min" in text(html / "plan.html"), "the agenda kept the old time"
    assert "going further 6 min more" in text(html / "core.html"), "the core page kept the old time"



def slide(point: str, title: str, block: str, minutes: float) -> str:
    """Slide content, then the instructor note that makes it a slide."""
    return (f"\n:::{{slide}}\n{point}\n:::\n\n:::{{instructor-note}}\n:slide: {title}\n"
            f":minutes: {minutes:g}\n:block: {block}\n\nSay it once.\n:::\n")


def test_the_deck_keeps_every_page_after_a_rebuild_that_reads_one(mini_book):
    """The deck is composed from the written pages: a rebuild that reads only one page
    must still give every page's slides, with the edited one's new words."""
    from rec11.book.pages import load_substitutions

    facts = load_substitutions(mini_book.path)  # the notes must fill the session's budget
    mini_book.page("index", "# Home\n" + slide("The home point.", "Home", "attention",
                                               facts["budget_attention"]))
    other = mini_book.page("other", "# Other\n" + "".join(
        slide(f"The {block} point.", block.title(), block, facts[f"budget_{block}"])
        for block in ("generation", "generative", "close")))
    mini_book.toc("index", "other")
    deck = mini_book.path / "_build" / "html" / "slides" / "index.html"

    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "The home point." in text(deck) and "The close point." in text(deck)

    other.write_text(other.read_text().replace("The close point.", "The edited point."))
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "1 changed" in result.stdout, "the rebuild read more than the edited page"
    assert "The home point." in text(deck), "the deck lost the page the rebuild did not read"
    assert "The edited point." in text(deck) and "The close point." not in text(deck)
