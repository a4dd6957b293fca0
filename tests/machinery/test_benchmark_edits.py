"""The benchmarks time an edit by changing a line they name on a page. When that line is
edited away, the benchmark must stop, not time a build with no edit in it: so the lines are
checked here, on every `make check`, against today's pages."""

from rec11_tools import bench, previewtime


def test_the_lines_the_benchmarks_edit_are_on_their_pages(root):
    for page, line in [(previewtime.PAGE, previewtime.SENTENCE[0]), (bench.CODE_EDIT_PAGE, bench.CODE_EDIT[0])]:
        assert line in (root / page).read_text(), (
            f"{page} no longer has {line!r}, the line the benchmarks edit: change it in"
            f" rec11_tools.{'previewtime.SENTENCE' if page == previewtime.PAGE else 'bench.CODE_EDIT'}")


def test_the_preview_benchmark_edits_the_first_line_of_prose_of_any_page(root):
    page = ("---\njupytext: x\n---\n# Title\n\n```{code-cell} ipython3\nPrint = 1\n```\n\n"
            ":::{note}\nA note's line.\n:::\n\n- A list item\n\nThe first sentence, here.\n")
    line, edited = previewtime.first_sentence(page)
    assert line == "The first sentence, here."
    assert edited.format(word="new") == "The new first sentence, here."
    for source in sorted((root / "book").rglob("*.md")):
        line, edited = previewtime.first_sentence(source.read_text())
        assert line in source.read_text() and "{word}" in edited, source
