"""Why a page runs again (rec11_book.shared.why): each input that differs from the page's last run
is named, at the page line or the file it lives in, and nothing that did not change is."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rec11_book.shared import why


def cell(code: str) -> str:
    return f"```{{code-cell}} ipython3\n{code}\n```\n"


def inputs(book, text: str) -> dict:
    page = book.page("p", text)
    return why.page_inputs(book.path, page, book.path / "src" / "rec11")


def line_of(text: str, code: str) -> int:
    """The line (counted from the page's header, as the book writes it) where ``code`` starts."""
    from tests.conftest import JUPYTEXT_HEADER

    full = JUPYTEXT_HEADER + "\n" + text
    return full[:full.index(code)].count("\n") + 1


def test_a_page_never_run_here_says_so(mini_book):
    assert why.reasons(None, inputs(mini_book, cell("x = 1"))) == ["no earlier run of it in this cache"]


def test_an_edited_cell_is_named_by_its_line_now_and_moved_cells_are_not(mini_book):
    before = inputs(mini_book, "# T\n\n" + cell("a = 1") + "\n" + cell("b = 2") + "\n" + cell("c = 3"))
    text = "# T\n\nNew prose\nover two lines.\n\n" + cell("a = 1") + "\n" + cell("b = 20") + "\n" + cell("c = 3")
    assert why.reasons(before, inputs(mini_book, text)) == [f"the cell at line {line_of(text, 'b = 20')} changed"]


def test_added_and_removed_cells(mini_book):
    before = inputs(mini_book, cell("a = 1") + "\n" + cell("b = 2"))
    text = cell("a = 1") + "\n" + cell("new = 0") + "\n" + cell("b = 2")
    assert why.reasons(before, inputs(mini_book, text)) == [f"a new cell at line {line_of(text, 'new = 0')}"]
    assert why.reasons(before, inputs(mini_book, cell("b = 2"))) == ["1 cell removed"]


def test_prose_alone_changes_no_input(mini_book):
    before = inputs(mini_book, "Prose.\n\n" + cell("a = 1"))
    after = inputs(mini_book, "Other prose, longer,\nand on two lines.\n\n" + cell("a = 1"))
    assert after["cells"] != before["cells"]  # the cell moved
    assert why.reasons(before, after) == ["its outputs were not in the execution cache"]


def test_a_package_edit_is_named_by_its_file_and_a_docstring_edit_is_not(mini_book):
    text = cell("from rec11.seeds import shifted\nshifted(1)")
    before = inputs(mini_book, text)
    assert "rec11.seeds" in before["modules"]
    seeds = mini_book.path / "src" / "rec11" / "seeds.py"
    seeds.write_text(seeds.read_text().replace('"""The knobs', '"""Knobs', 1))
    assert why.reasons(before, inputs(mini_book, text)) == ["its outputs were not in the execution cache"]
    seeds.write_text(seeds.read_text() + "\nEDITED = True\n")
    assert why.reasons(before, inputs(mini_book, text)) == ["src/rec11/seeds.py changed"]


def test_another_seed_shift_or_thread_count(mini_book, monkeypatch):
    text = cell("from rec11.seeds import shifted\nshifted(1)")
    monkeypatch.setenv("REC11_SEED", "0")
    before = inputs(mini_book, text)
    monkeypatch.setenv("REC11_SEED", "7")
    assert why.reasons(before, inputs(mini_book, text)) == ["another seed shift (0 → 7)"]


def test_a_page_drawing_the_session_plan_reruns_when_any_note_changes(mini_book):
    note = ":::{{instructor-note}}\n:slide: One\n:minutes: {m}\n:block: attention\n\nSay it.\n:::\n"
    mini_book.page("talk", "# Talk\n\n" + note.format(m=5))
    plan = cell("from rec11 import notes\nnotes.collect('.')")
    mini_book.toc("p", "talk")
    before = inputs(mini_book, plan)
    mini_book.page("talk", "# Talk\n\n" + note.format(m=6))
    assert why.reasons(before, inputs(mini_book, plan)) == ["the instructor notes changed"]


codes = st.lists(st.from_regex(r"x = [0-9]{1,6}", fullmatch=True), min_size=1, max_size=8, unique=True)


@given(codes, st.data())
def test_any_one_edited_cell_is_the_one_named(cells, data):
    """For any page of distinct cells, editing any one names that cell's line and nothing else."""
    i = data.draw(st.integers(0, len(cells) - 1))
    edited = [*cells]
    edited[i] = cells[i] + "  # edited"
    # (line, hash) as page_inputs records them: cell k on line 10 * k
    before = [[10 * k, why._sha(c)] for k, c in enumerate(cells)]
    after = [[10 * k, why._sha(c)] for k, c in enumerate(edited)]
    record = {"modules": {}, "run": None, "notes": None}
    assert why.reasons({**record, "cells": before}, {**record, "cells": after}) == \
        [f"the cell at line {10 * i} changed"]


def test_differ_sees_code_and_not_prose(mini_book):
    before = inputs(mini_book, "Prose.\n\n" + cell("a = 1"))
    assert why.differ(None, before)
    assert not why.differ(before, inputs(mini_book, "Other prose,\non two lines.\n\n" + cell("a = 1")))
    assert why.differ(before, inputs(mini_book, "Prose.\n\n" + cell("a = 2")))
    assert why.differ(before, inputs(mini_book, "Prose.\n\n" + cell("a = 1") + "\n" + cell("b = 1")))


def test_the_preview_runs_pages_ahead_for_a_code_edit_and_not_for_prose(mini_book):
    from rec11_book.commands.preview import code_edits
    from rec11_book.shared.execution import cache_path

    text = "# T\n\nProse.\n\n" + cell("a = 1")
    page = mini_book.page("p", text)
    root = mini_book.path
    why.save(cache_path(root), {"book/p.md": why.page_inputs(root, page, root / "src" / "rec11")}, {})
    page.write_text(page.read_text().replace("Prose.", "Prose,\nnow on two lines."))
    assert not code_edits(root, [page])
    page.write_text(page.read_text().replace("a = 1", "a = 2"))
    assert code_edits(root, [page])
    assert code_edits(root, [root / "_config.yml"])  # outside the pages: the package or the settings


def test_kept_module_inputs_follow_every_change_to_the_package(mini_book):
    """The inputs are kept between calls (the preview asks on every save), and still see an edit
    of the same length, a module added that a page already names, and a module removed."""
    text = cell("from rec11 import seeds, later\nseeds.shifted(1)")
    first = inputs(mini_book, text)
    assert "rec11.later" not in first["modules"]  # no such module yet: an attribute, maybe
    assert inputs(mini_book, text) == first
    seeds = mini_book.path / "src" / "rec11" / "seeds.py"
    original = seeds.read_text()
    seeds.write_text(original.replace("digest_size=4", "digest_size=5"))  # the same length
    assert seeds.read_text() != original and len(seeds.read_text()) == len(original)
    assert why.reasons(first, inputs(mini_book, text)) == ["src/rec11/seeds.py changed"]
    later = mini_book.path / "src" / "rec11" / "later.py"
    later.write_text("VALUE = 1\n")
    assert inputs(mini_book, text)["modules"]["rec11.later"] == ["src/rec11/later.py", why._sha(
        why.behaviour("VALUE = 1\n"))]
    later.unlink()
    assert "rec11.later" not in inputs(mini_book, text)["modules"]


def test_kept_module_inputs_equal_a_fresh_reading(mini_book):
    text = cell("from rec11.seeds import shifted\nshifted(1)")
    inputs(mini_book, text)  # fills what is kept
    kept = inputs(mini_book, text)
    why._closures.clear()
    why._behaviours.clear()
    assert inputs(mini_book, text) == kept
