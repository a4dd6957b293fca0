"""Slide markup that cannot make a slide fails the build, naming the page and line."""

import pytest

pytestmark = pytest.mark.build

NOTE = """
:::{{instructor-note}}
:slide: {slide}
:minutes: 5
:block: attention

Say it once.
:::
"""


def build_output(mini_book, body: str) -> tuple[int, str, list[str]]:
    page = mini_book.page("index", body)
    mini_book.toc("index")
    result = mini_book.build()
    return result.returncode, result.stdout + result.stderr, page.read_text().splitlines()


def test_slide_content_after_the_last_note_names_the_page_and_line(mini_book):
    code, output, lines = build_output(mini_book, """# Home

:::{slide}
The home slide's point.
:::
""" + NOTE.format(slide="Home") + """
:::{slide}
A sentence for a slide that no note names.
:::
""")
    line = lines.index("A sentence for a slide that no note names.") + 1
    assert code != 0, output[-3000:]
    assert f"index.md:{line}: WARNING: slide content with no instructor note after it" in output, output[-3000:]


def test_a_note_without_slide_content_names_the_page_and_line(mini_book):
    code, output, lines = build_output(mini_book, """# Home

:::{slide}
The first slide's point.
:::
""" + NOTE.format(slide="First") + "\nProse that is not on a slide.\n" + NOTE.format(slide="Second"))
    line = next(i for i, text in enumerate(lines, 1) if text == ":slide: Second") - 1
    assert code != 0, output[-3000:]
    assert f"index.md:{line}: WARNING: this instructor note has no slide content" in output, output[-3000:]
    assert "this instructor note has no slide content" not in output.split(f"index.md:{line}")[0]
