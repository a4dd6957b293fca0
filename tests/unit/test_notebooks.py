"""A downloaded notebook is the page as it ran, without the build's bookkeeping."""

import json

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from rec11.book.notebooks import FINGERPRINT, GlueValues, for_download, paste_glue


def glued(value):
    return {"data": {"text/plain": value}}


def test_glue_roles_are_filled_from_this_page_and_others(tmp_path):
    executed = tmp_path / "jupyter_execute"
    (executed / "book" / "further").mkdir(parents=True)
    (executed / "book" / "vae.glue.json").write_text(json.dumps({"kl": glued("0.123456")}))
    (executed / "book" / "further" / "x.glue.json").write_text(json.dumps({"n": glued("42")}))
    lookup = GlueValues(executed, tmp_path.joinpath("book", "vae.md").relative_to(tmp_path))
    text, missing = paste_glue(
        "KL {glue:text}`kl:.2f`, n {glue:text}`further/x.md::n`, {glue:text}`nope`", lookup)
    assert text == "KL 0.12, n 42, {glue:text}`nope`"
    assert missing == ["nope"]


def test_the_build_bookkeeping_goes_and_the_outputs_stay():
    figure = new_output("display_data", data={"image/png": "iVBORw0KGgo=", "image/svg+xml": "<svg/>",
                                              "text/plain": "<Figure>"})
    record = new_output("display_data", data={"application/papermill.record/text/plain": "1"},
                        metadata={"scrapbook": {"name": "x"}})
    printed = new_output("stream", name="stdout", text="hello\n")
    nb = new_notebook(cells=[
        new_markdown_cell("Due {{ final_date }}; KL is {glue:text}`kl:.1f`."),
        new_code_cell("plot()", outputs=[figure, record]),
        new_code_cell("print('hello')", outputs=[printed]),
        new_code_cell(f"{FINGERPRINT}: code:abc"),
    ], metadata={"source_map": [1, 2], "kernelspec": {"name": "python3", "display_name": "Python 3"}})
    out = for_download(nb, lambda key: {"text/plain": "0.25"} if key == "kl" else {}, {"final_date": "Tue 12/1"})
    assert out.cells[0].source == "Due Tue 12/1; KL is 0.2."
    assert [c.source for c in out.cells[1:]] == ["plot()", "print('hello')"]
    assert list(out.cells[1].outputs[0].data) == ["image/png", "text/plain"]
    assert len(out.cells[1].outputs) == 1 and out.cells[2].outputs[0].text == "hello\n"
    assert "source_map" not in out.metadata and out.metadata.kernelspec.name == "python3"
    assert len(nb.cells) == 4 and "image/svg+xml" in nb.cells[1].outputs[0].data  # the input is left alone
    nbformat.validate(out)
