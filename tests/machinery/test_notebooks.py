"""A downloaded notebook is the page as it ran, without the build's bookkeeping."""

import json
from types import SimpleNamespace

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from rec11_book.extensions.notebooks import (
    FINGERPRINT_KEY,
    GlueValues,
    colab_url,
    for_download,
    install_cell,
    pins,
    site_url,
)
from rec11_book.shared.plainmd import Context, paste_glue


def glued(value):
    return {"data": {"text/plain": value}}


def test_glue_roles_are_filled_from_this_page_and_others(tmp_path):
    executed = tmp_path / "jupyter_execute"
    (executed / "book" / "sub").mkdir(parents=True)
    (executed / "book" / "page.glue.json").write_text(json.dumps({"kl": glued("0.123456")}))
    (executed / "book" / "sub" / "x.glue.json").write_text(json.dumps({"n": glued("42")}))
    lookup = GlueValues(executed, tmp_path.joinpath("book", "page.md").relative_to(tmp_path))
    text, missing = paste_glue(
        "KL {glue:text}`kl:.2f`, n {glue:text}`sub/x.md::n`, {glue:text}`nope`", lookup)
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
    ], metadata={"source_map": [1, 2], "kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      FINGERPRINT_KEY: "code:abc"}})
    context = Context(docname="book/page", site="https://x.github.io/b/", facts={"final_date": "Tue 12/1"},
                      glue=lambda key: {"text/plain": "0.25"} if key == "kl" else {})
    out = for_download(nb, context)
    assert out.cells[0].source == "Due Tue 12/1; KL is 0.2."
    assert [c.source for c in out.cells[1:]] == ["plot()", "print('hello')"]
    assert list(out.cells[1].outputs[0].data) == ["image/png", "text/plain"]
    assert len(out.cells[1].outputs) == 1 and out.cells[2].outputs[0].text == "hello\n"
    assert "source_map" not in out.metadata and out.metadata.kernelspec.name == "python3"
    assert FINGERPRINT_KEY not in out.metadata.kernelspec
    assert len(nb.cells) == 3 and FINGERPRINT_KEY in nb.metadata.kernelspec  # the input is left alone
    assert "image/svg+xml" in nb.cells[1].outputs[0].data
    nbformat.validate(out)


def test_instructor_notes_go_hidden_cells_stay_collapsed_and_the_install_cell_comes_first():
    nb = new_notebook(cells=[
        new_markdown_cell(":::{instructor-note}\n:slide: A\n:minutes: 2\n:block: attention\n\nSay it.\n:::"),
        new_markdown_cell(":::{slide}\nAttention is a weighted average.\n:::"),
        new_code_cell("assert True\nhelper = 2", metadata={"tags": ["remove-cell"]}),
        new_code_cell("plot()", metadata={"tags": ["hide-input"]}),
        new_code_cell("x = 1"),
    ], metadata={"source_map": [12, 20, 24, 30, 34]})
    out = for_download(nb, install="# install")
    assert [c.source for c in out.cells] == ["# install", "Attention is a weighted average.", "helper = 2",
                                             "plot()", "x = 1"]
    assert [c.metadata.get("jupyter", {}).get("source_hidden", False) for c in out.cells] == \
        [False, False, True, True, False]
    assert len({c.id for c in out.cells}) == len(out.cells)
    nbformat.validate(out)


def test_a_broken_cell_names_the_page_line():
    problems = []
    context = Context(docname="book/page", site="s/", warn=lambda line, m: problems.append((line, m)))
    page = ["```{code-cell}", "x", "```", "", "", "Text.", "", ":::{mystery}", "x", ":::"]
    nb = new_notebook(cells=[new_code_cell("x"), new_markdown_cell("Text.\n\n:::{mystery}\nx\n:::")],
                      metadata={"source_map": [0, 3]})
    for_download(nb, context, page=page)
    assert problems == [(8, "the notebook download cannot render the {mystery} directive")]


def test_the_install_cell_pins_what_the_package_needs_at_the_versions_built_with(root):
    import importlib.metadata

    packages = pins()
    assert [p.split("==")[0].lower() for p in packages] == ["torch", "numpy", "matplotlib", "scikit-learn", "pyyaml"]
    assert f"torch=={importlib.metadata.version('torch')}" in packages
    requirements = (root / "requirements.txt").read_text().splitlines()
    assert all(p in requirements for p in packages), "the build does not run with requirements.txt's pins"
    cell = install_cell("https://github.com/o/r", "0123456789abcdef", packages, trains=True)
    compile(cell, "install", "exec")
    assert '"rec11 @ git+https://github.com/o/r@0123456789abcdef#subdirectory=src"' in cell
    assert "https://download.pytorch.org/whl/cpu" in cell and "train small models" in cell
    assert "train small models" not in install_cell("https://github.com/o/r", "abc", packages, trains=False)


def test_links_to_the_published_book_and_to_colab():
    config = SimpleNamespace(html_baseurl="", html_theme_options={
        "repository_url": "https://github.com/CPSY1291/recitation-11", "path_to_docs": ""})
    assert site_url(config) == "https://cpsy1291.github.io/recitation-11/"
    assert colab_url(config, "book/sub/page") == \
        "https://colab.research.google.com/github/CPSY1291/recitation-11/blob/notebooks/book/sub/page.ipynb"
    config.html_baseurl = "https://courses.example.edu/rec11"
    assert site_url(config) == "https://courses.example.edu/rec11/"


def exercise_page():
    verdict = new_output("stream", name="stdout", text="Not yet: the softmax runs down the columns\n")
    return new_notebook(cells=[
        new_markdown_cell("::::{exercise}\n:label: ex-a\n\nQ.\n::::"),
        new_code_cell("starter = 2\ncheck(starter)", outputs=[verdict], metadata={"tags": ["hide-output"]}),
        new_markdown_cell("```{solution-start} ex-a\n:class: dropdown\n```\n\nThe fix."),
        new_code_cell("answer = 1", outputs=[new_output("stream", name="stdout", text="Right\n")]),
        new_markdown_cell("```{solution-end}\n```\n\n:::{solution} ex-a\n:class: dropdown\n\nIn words.\n:::"),
    ])


def answers_context():
    return Context(docname="book/x", site="https://s/", solutions_url="https://s/_sources/book/x-solutions.ipynb",
                   solutions_colab="https://colab/x-solutions.ipynb")


def test_a_page_with_answers_downloads_as_a_worksheet_without_them():
    """Colab and VS Code show a cell whatever its ``source_hidden``: the answers are not in
    the reader's notebook at all, and no saved verdict names the starter's bugs."""
    cells = for_download(exercise_page(), answers_context()).cells
    assert [(c.cell_type, c.source) for c in cells if c.cell_type != "markdown"] == \
        [("code", "starter = 2\ncheck(starter)")]
    assert cells[1].outputs == [] and "jupyter" not in cells[1].metadata  # their own verdict, unfolded
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    assert "The fix" not in text and "In words" not in text and "Answer to" not in text
    assert cells[-1].source.startswith("## Answers") and "(https://s/_sources/book/x-solutions.ipynb)" in text
    assert "(https://colab/x-solutions.ipynb)" in cells[-1].source
    nbformat.validate(for_download(exercise_page(), answers_context()))


def test_the_answers_notebook_is_the_page_with_each_answer_run_under_a_heading():
    cells = for_download(exercise_page(), answers_context(), install="# install", answers=True).cells
    assert [c.cell_type for c in cells] == ["code", "markdown", "markdown", "code", "markdown", "code", "markdown"]
    assert "Worked answers" in cells[1].source and "(https://s/_sources/book/x.ipynb)" in cells[1].source
    assert cells[3].outputs[0].text.startswith("Not yet") and cells[5].outputs[0].text == "Right\n"
    assert cells[4].source == "### Answer to Exercise 1\n\nThe fix."
    assert cells[6].source == "### Answer to Exercise 1\n\nIn words."


def test_a_page_without_answers_keeps_its_outputs_and_gets_no_answers_cell():
    nb = exercise_page()
    nb.cells = nb.cells[:2]
    cells = for_download(nb, answers_context()).cells
    assert cells[1].outputs and cells[1].metadata["jupyter"] == {"outputs_hidden": True}
    assert len(cells) == 2


def test_the_pages_own_checks_stay_out_of_the_download():
    """A reader who fixes a starter, or changes a temperature, and runs all must not meet the
    page's asserts about its own sentences, nor read the names of an exercise's mistakes."""
    from rec11_book.extensions.notebooks import without_self_checks

    cell = ("verdict = check.attention(attention)\n"
            "assert 'wrong axis' in verdict.text, \"p.md: names the bug\"\n"
            "claim(kl, '<', 0.1, 'p.md: the KL is small')\n"
            "glue('ex_kl', kl, display=False)\n"
            "for row in rows:\n    assert row.sum() == 1\n")
    left = without_self_checks(cell)
    assert "assert" not in left and "claim" not in left and "glue" not in left and "wrong axis" not in left
    assert left.startswith("verdict = check.attention(attention)")
    compile(left, "cell", "exec")
    assert without_self_checks("assert x\nglue('a', 1)") == ""
    assert without_self_checks("def f(:\n") == "def f(:\n"  # not Python: left as it is
