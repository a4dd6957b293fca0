"""`make build` when nothing changed since the last build passed: it stops at once, and the
first change after that (a page, or a file of the site) builds again (rec11_book.commands.build)."""

import shutil

import pytest
from build_support import budget_notes

from rec11_book.extensions import executions
from rec11_book.shared import why

pytestmark = pytest.mark.build

PAGE = "# Home\n\nThe first words.\n\n```{code-cell} ipython3\nprint(6 * 7)\n```\n"


def test_a_build_with_nothing_changed_stops_and_the_next_change_builds(mini_book):
    mini_book.page("index", PAGE)
    mini_book.toc("index")
    html = mini_book.path / "_build" / "html" / "book" / "index.html"

    def passed():
        result = mini_book.build()
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        return result.stdout

    assert "nothing changed" not in passed(), "the first build has nothing to compare with"
    assert "nothing changed since the last build passed" in passed()
    assert executions.summary(mini_book.path / "_build" / ".doctrees")["executed"] == [], "it ran no page"

    mini_book.page("index", PAGE.replace("The first words.", "The edited words."))
    assert "nothing changed" not in passed()
    assert "The edited words." in html.read_text()

    # the site is an output: a file of it changed since (here the page's download) is made again
    download = mini_book.path / "_build" / "html" / "_sources" / "book" / "index.ipynb"
    assert "print(6 * 7)" in download.read_text()
    download.write_text("{}")
    assert "nothing changed" not in passed()
    assert "print(6 * 7)" in download.read_text()
    assert "nothing changed since the last build passed" in passed()


# a page whose code reads every page's instructor notes, as the session plan's does
PLAN = ("# Plan\n\n```{code-cell} ipython3\nfrom pathlib import Path\nfrom rec11 import notes\n"
        "print('planned', int(sum(n.minutes for n in notes.collect(Path('..').resolve()))), 'min')\n```\n")
SKIPPED = "only prose changed since the last build passed; no page runs before the build"


def test_after_a_prose_edit_no_page_runs_before_the_build_and_after_a_code_edit_it_does(mini_book):
    """The pages-ahead step looks up every page in the execution cache (2 s on the book) to find,
    after an edit to prose only, nothing to run: ``pages_may_run`` skips it then, and only then."""
    mini_book.page("index", PAGE + budget_notes(attention=42))
    mini_book.page("other", "# Other\n\nMore words.\n\n```{code-cell} ipython3\nprint(2 + 3)\n```\n")
    mini_book.page("plan", PLAN)
    mini_book.toc("index", "other", "plan")
    html = mini_book.path / "_build" / "html" / "book"
    index, other = mini_book.path / "book" / "index.md", mini_book.path / "book" / "other.md"

    def passed():
        result = mini_book.build()
        assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        return result.stdout, executions.summary(mini_book.path / "_build" / ".doctrees")["executed"]

    log, ran = passed()
    assert SKIPPED not in log and "3 page(s) ran" in log, log[-3000:]

    index.write_text(index.read_text().replace("The first words.", "The edited words."))
    log, ran = passed()
    assert SKIPPED in log and "executing (" not in log and ran == [], log[-3000:]
    assert "The edited words." in (html / "index.html").read_text()

    other.write_text(other.read_text().replace("print(2 + 3)", "print(2 + 4)"))
    log, ran = passed()
    assert SKIPPED not in log and f"{other}: executing (the cell at line" in log, log[-3000:]
    assert ran == ["book/other"] and ">6<" in (html / "other.html").read_text().replace("\n", "")

    # the notes are prose to the page they are on, and an input of the page that reads them all
    index.write_text(index.read_text().replace(":minutes: 42", ":minutes: 41"))
    log, ran = passed()
    assert SKIPPED not in log and "plan.md: executing (the instructor notes changed)" in log, log[-3000:]
    assert "planned 82 min" in (html / "plan.html").read_text()

    # anything besides the markdown changed, here the execution cache lost every page and kept the
    # record of their last runs: every page runs ahead again, though no page's code changed
    cache = mini_book.path / "_build" / ".jupyter_cache"
    for entry in cache.iterdir():
        if entry.name not in (why.INPUTS, why.WHY):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    index.write_text(index.read_text().replace("The edited words.", "The words edited twice."))
    log, ran = passed()
    assert SKIPPED not in log and "3 page(s) ran" in log, log[-3000:]
    assert "executing (its outputs were not in the execution cache)" in log, log[-3000:]
