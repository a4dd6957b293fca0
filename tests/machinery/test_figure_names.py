"""The figures' check reads again only the pages whose notebooks changed (a prose edit reads
one); a name taken by a page it did not read again is still a name used twice."""

import base64
from pathlib import Path

import nbformat

from rec11_book.shared.figures import figures_in

PNG = base64.b64encode(b"\x89PNG").decode()


def drawn(name):
    cell = nbformat.v4.new_code_cell("plt.show()", metadata={"mystnb": {"figure": {"name": name}}})
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": PNG, "image/svg+xml": "<svg/>"})]
    return nbformat.v4.new_notebook(cells=[cell])


def test_a_name_a_page_not_read_again_holds_is_taken(tmp_path):
    (tmp_path / "edited.md").write_text("plt.show()\n")
    found, problems = figures_in([(Path("edited.md"), drawn("curve"))], tmp_path, seen={"curve": "kept.md:12"})
    assert not found
    assert problems == [(Path("edited.md"), 1, "figure name 'curve' is already used at kept.md:12. "
                                                "Fix: give one of the two cells another name")]


def test_each_figure_knows_its_page_and_cell(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nplt.show()\n")
    found, problems = figures_in([(Path("a.md"), drawn("curve"))], tmp_path, seen={"other": "b.md:3"})
    assert not problems and [(f.name, f.page, f.where) for f in found] == [("curve", Path("a.md"), "a.md:3")]
