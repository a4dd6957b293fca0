"""Reading time is counted from what a student reads on a page."""

import textwrap

import pytest
from docutils import nodes

from rec11.chapter import toc_chapters
from rec11_book.extensions import reading
from rec11_book.extensions.reading import Reading, count, minutes_text


def paragraph(words: int) -> nodes.paragraph:
    return nodes.paragraph(text=" ".join(["word"] * words))


def cell(source: str = "x = 1", hide_mode: str | None = None, outputs=()) -> nodes.container:
    node = nodes.container(nb_element="cell_code")
    if hide_mode:
        node["hide_mode"] = hide_mode
    node += nodes.container("", nodes.literal_block(text=source), nb_element="cell_code_source")
    node += nodes.container("", *outputs, nb_element="cell_code_output")
    return node


def bundle(**mime) -> nodes.container:
    """An output held in several formats, as myst-nb reads it before choosing one."""
    node = nodes.container(nb_element="mime_bundle")
    for mime_type, child in mime.items():
        node += nodes.container("", child, mime_type=mime_type.replace("_", "/"))
    return node


def page(*children) -> nodes.document:
    doc = nodes.section()
    doc += nodes.title(text="Title")  # one word
    doc.extend(children)
    return doc


def test_prose_is_read_at_200_words_a_minute():
    r = count(page(paragraph(199)))
    assert r == Reading(words=200, figures=0, cells=0)
    assert r.minutes == pytest.approx(1.0)


def test_a_figure_and_a_visible_code_cell_add_their_allowances():
    figure = bundle(image_png=nodes.image(uri="a.png"), image_svg__xml=nodes.image(uri="a.svg"))
    r = count(page(cell(outputs=[figure])), mime_priority=["image/png"])
    assert (r.figures, r.cells) == (1, 1)  # the PNG and SVG of one figure are one figure
    assert r.seconds == pytest.approx(1 * 60 / 200 + reading.SECONDS_PER_FIGURE + reading.SECONDS_PER_CELL)


def test_hidden_code_is_not_read_but_its_figure_is():
    figure = nodes.image(uri="a.png")
    r = count(page(cell("plot()", hide_mode="input", outputs=[figure]), cell("setup()", hide_mode="all")))
    assert (r.cells, r.figures) == (0, 1)


def test_an_explorable_figure_is_one_figure_however_many_frames():
    from rec11_book.extensions.explore import explorable

    frames = explorable(classes=["rec11-explore"])
    frames.extend(nodes.image(uri=f"{n}.png", alt=f"Frame {n} of five.") for n in range(5))
    r = count(page(cell("explore(draw, values)", hide_mode="input", outputs=[frames])))
    assert (r.figures, r.cells) == (1, 0)


def test_code_and_instructor_notes_are_not_prose():
    note = nodes.admonition("", nodes.title(text="Instructor notes"), paragraph(500), classes=["instructor-note"])
    code = cell("a b c d e f g h i j")  # ten words of code
    listing = nodes.literal_block(text="print('a code listing in the text')")
    r = count(page(note, code, listing))
    assert r == Reading(words=1, figures=0, cells=2)


def test_a_table_output_is_counted_once_in_the_format_shown():
    table = bundle(text_markdown=paragraph(40), text_plain=nodes.literal_block(text="a b c"))
    r = count(page(cell(hide_mode="input", outputs=[table])), mime_priority=["text/markdown", "text/plain"])
    assert r == Reading(words=41, figures=0, cells=0)


def test_minutes_are_whole_and_at_least_one():
    assert minutes_text(0.2) == "1 min"
    assert minutes_text(6.4) == "6 min"
    assert minutes_text(6.6) == "7 min"


def test_going_further_pages_are_the_sections_under_a_chapter(tmp_path):
    (tmp_path / "_toc.yml").write_text(textwrap.dedent("""\
        format: jb-book
        root: book/start
        parts:
          - caption: Attention
            chapters:
              - file: book/first
                sections:
                  - file: book/more/first.md
              - file: book/second
          - caption: For instructors
            chapters:
              - file: book/plan
        """))
    pages = toc_chapters(tmp_path)
    assert [(p.docname, p.part, p.further) for p in pages] == [
        ("book/start", None, ()),
        ("book/first", "Attention", ("book/more/first",)),
        ("book/second", "Attention", ()),
        ("book/plan", "For instructors", ()),
    ]


def test_an_exercise_beyond_the_slides_is_practice_apart_from_the_core():
    from rec11_book.shared.pages import SLIDE_MARK as MARK

    on_slide = nodes.container("", nodes.paragraph(text="why " * 10, classes=[MARK]), classes=["exercise"])
    beyond = nodes.container("", paragraph(30), classes=["exercise"])
    doc = page(paragraph(9), on_slide, paragraph(20),  # the slide's exercise and its answer: core
               beyond, cell(), paragraph(40),            # practice: the box, its starter, its answer
               nodes.container("", paragraph(1), classes=["exercise", "dropdown"]))  # also practice
    exercises = reading.practice(doc)
    assert count(doc, skip=tuple(exercises)) == Reading(words=1 + 9 + 10 + 20)
    assert sum((count(n) for n in exercises), Reading()) == Reading(words=71, cells=1)


def test_a_printed_output_is_read_and_the_code_that_printed_it_is_a_cell():
    printed = nodes.literal_block(text="tensor([0.25, 0.75]) torch.Size([2])")
    r = count(page(cell("print(p, p.shape)", outputs=[printed])))
    assert (r.words, r.cells) == (1 + 3, 1)  # the title, the output
    hidden = count(page(cell("print(p)", hide_mode="output", outputs=[printed])))
    assert hidden.words == 1  # the title only
