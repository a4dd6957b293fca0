"""The benchmarks time an edit by changing a line they name on a page. When that line is
edited away, the benchmark must stop, not time a build with no edit in it: so the lines are
checked here, on every `make check`, against today's pages."""

from rec11_tools import bench, previewtime


def test_the_lines_the_benchmarks_edit_are_on_their_pages(root):
    for page, line in [(previewtime.PAGE, previewtime.SENTENCE[0]), (bench.CODE_EDIT_PAGE, bench.CODE_EDIT[0])]:
        assert line in (root / page).read_text(), (
            f"{page} no longer has {line!r}, the line the benchmarks edit: change it in"
            f" rec11_tools.{'previewtime.SENTENCE' if page == previewtime.PAGE else 'bench.CODE_EDIT'}")
