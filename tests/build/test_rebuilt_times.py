"""Reading times shown on other pages follow an incremental rebuild.

A session plan's {agenda} lists every page's time, and a core page's header gives its
going-further pages' time. When only the going-further page grows, neither is read
again. Sphinx writes the core page again (a toctree parent of the page that changed);
the plan, a page beside it, the build must write again itself.
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
