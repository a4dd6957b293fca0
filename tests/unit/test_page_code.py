"""The pages' code as students read it: on a phone and on a printed page."""

from pathlib import Path

from rec11_book.shared.pages import CODE_COLUMNS, long_code_lines

ROOT = Path(__file__).resolve().parents[2]


def test_code_lines_fit_a_phone_and_a_printed_page():
    for page in sorted((ROOT / "book").rglob("*.md")):
        long = long_code_lines(page.read_text())
        assert not long, (f"{page.relative_to(ROOT)}:{long[0][0]}: code lines over {CODE_COLUMNS} characters:"
                          f" {[line for _, line in long[:2]]}")


def test_a_long_line_is_found_at_its_page_line():
    page = "# T\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n\nx = 1\ny = '" + "a" * 80 + "'\n```\n"
    assert long_code_lines(page) == [(7, "y = '" + "a" * 80 + "'")]
    assert long_code_lines(page.replace("a" * 80, "a" * 10)) == []
