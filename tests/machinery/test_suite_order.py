"""make test's second part starts its longest files first (tests/run_support.py, LONGEST_FIRST)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from run_support import LONGEST_FIRST, longest_first

ROOT = Path(__file__).resolve().parents[2]


def test_each_longest_file_is_a_test_file_of_the_suite():
    found = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    missing = [name for name in LONGEST_FIRST if name not in found]
    assert not missing, (f"tests/run_support.py: LONGEST_FIRST names {missing}, which no file under tests/ is;"
                         " rename them there")


def test_the_longest_files_are_collected_first_and_the_rest_keep_their_order():
    names = ["test_accessibility.py", "test_handout.py", "test_book.py", "test_notebook_downloads.py",
             "test_hub.py", "test_print.py"]
    items = [SimpleNamespace(path=Path("tests") / name) for name in names]
    longest_first(items)
    order = [item.path.name for item in items]
    assert order[:3] == list(LONGEST_FIRST), order
    assert order[3:] == ["test_accessibility.py", "test_book.py", "test_print.py"], order


def test_the_book_part_of_make_test_keeps_the_collection_order():
    """pytest-xdist's --dist loadfile orders files by their number of tests unless told not to."""
    makefile = (ROOT / "Makefile").read_text()
    book_run = next(line for line in makefile.splitlines() if '-m "book and not bench"' in line)
    assert re.search(r"--dist loadfile\b", book_run) and "--no-loadscope-reorder" in book_run, book_run
