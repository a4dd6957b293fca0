"""`make build` when nothing changed since the last build passed: it stops at once, and the
first change after that (a page, or a file of the site) builds again (rec11_book.commands.build)."""

import pytest

from rec11_book.extensions import executions

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
