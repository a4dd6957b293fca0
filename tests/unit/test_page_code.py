"""The pages' code as students read it: on a phone and on a printed page."""

from pathlib import Path

from rec11_book.shared.pages import code_cells

ROOT = Path(__file__).resolve().parents[2]


def test_code_lines_fit_a_phone_and_a_printed_page():
    for page in sorted((ROOT / "book").rglob("*.md")):
        for cell in code_cells(page.read_text()):
            long = [line for line in cell.splitlines() if len(line) > 79]
            assert not long, f"{page.relative_to(ROOT)}: code lines over 79 characters: {long[:2]}"
