"""Broken inputs fail the build, and the message names the file (and the line)."""

import datetime
import re
import shutil

import pytest
import yaml
from build_support import budget_notes

from rec11_book.extensions import facts

pytestmark = pytest.mark.build

GOOD_CELL = """
```{code-cell} ipython3
print("fine")
```
"""


def failed_with(result, *needles):
    """The build failed, and its last line names the problem: where (the first needle) and the
    rest of what the needles say; a teaching assistant reads that line first."""
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("rec11: the build FAILED"), f"the last line is not the verdict: {last!r}"
    assert re.search(r"\S+\.(md|yml):\d*:? ", last), f"the last line names no file and line: {last!r}"
    # the last line names the first problem; with one problem, it is this one
    where = last if "more above)" not in last else output
    for needle in needles:
        assert needle in where, f"{needle!r} not in {'the last line' if where is last else 'the output'}:" \
                                f" {last!r}\n{output[-3000:]}"


def test_a_cell_that_raises_names_the_page_and_line(mini_book):
    page = mini_book.page("broken", """
        # Broken

        ```{code-cell} ipython3
        x = 1
        y = x / 0
        ```
        """)
    mini_book.toc("broken")
    line = page.read_text().splitlines().index("y = x / 0") + 1
    result = mini_book.build()
    failed_with(result, f"broken.md:{line}: a code cell raised ZeroDivisionError")
    # the cell's traceback once: not again in Jupyter Book's re-raise, nor nbclient's own frames
    output = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)
    assert len(re.findall(r"^-+> 2 y = x / 0$", output, re.M)) == 1, output
    assert output.count("Traceback (most recent call last)") == 1, output


def test_a_dangling_reference_names_the_page_and_line(mini_book):
    page = mini_book.page("index", "# Home\n\nSee {ref}`no-such-label`.\n" + GOOD_CELL)
    mini_book.toc("index")
    line = page.read_text().splitlines().index("See {ref}`no-such-label`.") + 1
    failed_with(mini_book.build(), f"index.md:{line}", "no-such-label")


def test_a_toc_entry_that_points_nowhere_names_the_entry(mini_book):
    mini_book.page("index", "# Home\n" + GOOD_CELL)
    mini_book.toc("index", "missing-page")
    failed_with(mini_book.build(), "book/missing-page")


FIGURE_CELL = """
# Figures

```{{code-cell}} ipython3
---
mystnb:
  figure:
    name: a-line
    caption: A line.
{image}---
from rec11.style import setup_page
setup_page()
import matplotlib.pyplot as plt
plt.plot([0, 1], [0, 1])
plt.show()
```
"""


def test_a_figure_without_alt_text_names_the_page_and_line(mini_book):
    page = mini_book.page("figs", FIGURE_CELL.format(image=""))
    mini_book.toc("figs")
    failed_with(mini_book.build(), "figs.md:", "no alt text")
    assert page.is_file()


def test_a_figure_whose_alt_text_is_a_file_name_fails(mini_book):
    mini_book.page("figs", FIGURE_CELL.format(image="  image:\n    alt: a-line.png\n"))
    mini_book.toc("figs")
    failed_with(mini_book.build(), "figs.md:", "only a file name")


def test_a_figure_with_alt_text_builds_and_is_exported(mini_book):
    alt = "A straight line rising from the bottom left to the top right."
    mini_book.page("figs", FIGURE_CELL.format(image=f"  image:\n    alt: {alt}\n"))
    mini_book.toc("figs")
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    html = (mini_book.path / "_build" / "html" / "book" / "figs.html").read_text()
    assert f'alt="{alt}"' in html
    assert (mini_book.path / "figures" / "a-line.png").stat().st_size > 1000
    assert (mini_book.path / "figures" / "a-line.svg").read_text().lstrip().startswith(("<?xml", "<svg"))

    # Rebuilt from the execution cache alone (myst-nb then writes notebooks without
    # outputs), the figures must still be exported.
    for gone in ["figures", "_build/html", "_build/.doctrees", "_build/jupyter_execute"]:
        shutil.rmtree(mini_book.path / gone)
    result = mini_book.build()
    assert result.returncode == 0 and "0 page(s) executed" in result.stdout, result.stdout[-2000:]
    assert (mini_book.path / "figures" / "a-line.png").stat().st_size > 1000


def test_an_unnamed_figure_cannot_be_exported(mini_book):
    page = mini_book.page("figs", """
        # Figures

        ```{code-cell} ipython3
        ---
        mystnb:
          image:
            alt: A straight line rising from the bottom left to the top right.
        ---
        import matplotlib.pyplot as plt
        plt.plot([0, 1], [0, 1])
        plt.show()
        ```
        """)
    mini_book.toc("figs")
    line = page.read_text().splitlines().index("import matplotlib.pyplot as plt") + 1
    failed_with(mini_book.build(), f"figs.md:{line}", "this code cell draws a figure without a name",
                "Fix: give the cell `mystnb: figure: name:`")


def test_notes_over_the_budget_name_the_note_and_count_every_failure(mini_book):
    page = mini_book.page("index", "# Home\n\n" + budget_notes(attention=49) + GOOD_CELL)
    mini_book.toc("index")
    note = next(i for i, ln in enumerate(page.read_text().splitlines(), 1) if ln == ":slide: Attention") - 1
    result = mini_book.build()
    # the block (49 against 42) and the session (90 against session_minutes 80): two failures
    failed_with(result, f"index.md:{note}: session budget", "'attention'", "49", "budget_attention is 42",
                "Fix:", "(1 more above)")
    output = result.stdout + result.stderr
    assert re.search(rf"rec11: \S+index\.md:{note}: session budget: .* add up to 90 min, but session_minutes "
                     r"is 80 \(_config\.yml:\d+;.* this note is the longest, 49 min, then ", output), output[-3000:]


def test_a_malformed_instructor_note_names_the_page_and_line(mini_book):
    page = mini_book.page("index", "# Home\n\n:::{instructor-note}\n:slide: A\n:minutes: five\n:block: close\n\n"
                                   "Text\n:::\n")
    mini_book.toc("index")
    line = page.read_text().splitlines().index(":::{instructor-note}") + 1
    failed_with(mini_book.build(), f"index.md:{line}", ":minutes: must be a number")



def test_the_sessions_blocks_come_from_the_course_facts_and_a_block_typo_names_the_nearest(mini_book):
    """Another recitation's blocks are other budget_<block> lines in _config.yml: a note's
    :block: is checked against them, and a typo fails at the note's line with the nearest."""
    config = mini_book.path / "_config.yml"
    text = config.read_text()
    budget = re.search(r"^ *budget_attention:.*?(?=^ *budget_slack:)", text, re.M | re.S)[0]
    config.write_text(text.replace(budget, "    budget_intro: 30\n    budget_practice: 50\n"))
    page = mini_book.page("index", "# Home\n\n:::{instructor-note}\n:slide: A\n:minutes: 30\n:block: intro\n\n"
                                   "Say it.\n:::\n\n:::{instructor-note}\n:slide: B\n:minutes: 50\n"
                                   ":block: practise\n\nSay it.\n:::\n")
    mini_book.toc("index")
    line = page.read_text().splitlines().index(":slide: B")
    failed_with(mini_book.build(), f"index.md:{line}", "the session's blocks, intro, practice",
                "Fix: write :block: practice")


GLUED_FIGURE = """
# Figures

```{{code-cell}} ipython3
from myst_nb import glue
glue("slope", 2.0, display=False)
```

```{{code-cell}} ipython3
---
mystnb:
  figure:
    name: a-line
    caption: {caption}
  image:
    alt: {alt}
---
from rec11.style import setup_page
setup_page()
import matplotlib.pyplot as plt
plt.plot([0, 1], [0, 2])
plt.show()
```
"""


def test_alt_text_and_captions_take_numbers_from_the_run(mini_book):
    alt = "A straight line rising with slope {glue:text}`slope:.1f` from the origin."
    caption = "A line of slope {glue:text}`slope:.2f`."
    mini_book.page("figs", GLUED_FIGURE.format(alt=alt, caption=caption))
    mini_book.toc("figs")
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    html = (mini_book.path / "_build" / "html" / "book" / "figs.html").read_text()
    assert 'alt="A straight line rising with slope 2.0 from the origin."' in html
    assert "A line of slope 2.00" in re.sub(r"<[^>]+>", "", html)


def test_alt_text_that_pastes_a_missing_number_names_the_page(mini_book):
    alt = "A straight line rising with slope {glue:text}`gradient:.1f` from the origin."
    mini_book.page("figs", GLUED_FIGURE.format(alt=alt, caption="A line."))
    mini_book.toc("figs")
    failed_with(mini_book.build(), "figs.md:", "alt text pastes 'gradient'")


def test_a_caption_that_pastes_a_missing_number_names_the_page(mini_book):
    caption = "A line of slope {glue:text}`gradient:.2f`."
    alt = "A straight line rising from the bottom left to the top right."
    mini_book.page("figs", GLUED_FIGURE.format(alt=alt, caption=caption))
    mini_book.toc("figs")
    failed_with(mini_book.build(), "figs.md:", "gradient")


def test_a_going_further_page_adds_to_its_core_page_reading_time(mini_book):
    mini_book.page("index", "# Home\n\n" + " ".join(["word"] * 399) + "\n\n```{agenda}\n```\n")
    mini_book.page("core", "# Core\n\n" + " ".join(["word"] * 599) + "\n" + GOOD_CELL)
    (mini_book.path / "book" / "further").mkdir()
    mini_book.page("further/core", "# More\n\n" + " ".join(["word"] * 1199) + "\n")
    (mini_book.path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/index\nchapters:\n  - file: book/core\n"
        "    sections:\n      - file: book/further/core\n")
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    html = lambda name: (mini_book.path / "_build" / "html" / "book" / f"{name}.html").read_text()
    # 600 words and one visible code cell: 3 min 10 s; the going-further page: 1,200 words, 6 min
    assert "Reading time 3 min · going further 6 min more" in html("core")
    assert "Going further · reading time 6 min" in html("further/core")
    assert "The chapter's core reads in about 5 min; the going-further pages add 6 min" in html("index")


def test_a_shown_cell_that_needs_a_removed_cell_names_the_page_and_line(mini_book):
    page = mini_book.page("live", """
        # Live

        ```{code-cell} ipython3
        :tags: [remove-cell]

        answer = 42
        ```

        ```{code-cell} ipython3
        print(answer)
        ```
        """)
    mini_book.toc("live")
    line = page.read_text().splitlines().index("print(answer)") + 1
    failed_with(mini_book.build(), f"live.md:{line}", "reads answer, which only a `remove-cell` cell defines")


def test_a_quick_check_that_cannot_be_checked_names_the_page_and_line(mini_book):
    page = mini_book.page("checks", """
        # Checks

        ```{code-cell} ipython3
        from rec11.glue import glue
        glue("bits", 6.0, display=False)
        ```

        :::{quick-check} How many bits?
        :answer-glue: bitz
        :::

        :::{quick-check} Which axis?
        :choices: dim=0 | dim=1
        :answer: dim=-1
        :::
        """)
    mini_book.toc("checks")
    lines = page.read_text().splitlines()
    glue_line = lines.index(":::{quick-check} How many bits?") + 1
    choice_line = lines.index(":::{quick-check} Which axis?") + 1
    failed_with(mini_book.build(), f"checks.md:{glue_line}", "no glued value 'bitz' on this page",
                f"checks.md:{choice_line}", "the answer 'dim=-1' is not one of the choices")


def test_the_number_rule_names_each_breach_with_its_line_and_fix(mini_book):
    page = mini_book.page("nums", """
        # Numbers

        ```{code-cell} ipython3
        from rec11.glue import glue
        glue("small", 0.024, display=False)
        glue("spare", 1.5, display=False)
        ```

        The model reaches 0.9998 of the best accuracy.

        No word moves by more than {glue:text}`small:.2f` bits.
        """)
    mini_book.toc("nums")
    lines = page.read_text().splitlines()
    typed = lines.index("The model reaches 0.9998 of the best accuracy.") + 1
    spare = next(i for i, line in enumerate(lines, 1) if '"spare"' in line)
    bound = lines.index("No word moves by more than {glue:text}`small:.2f` bits.") + 1
    result = mini_book.build()
    failed_with(result, f"nums.md:{spare}: the page glues 'spare'", "Fix:")
    output = result.stdout + result.stderr
    assert f"nums.md:{typed}: the number 0.9998 is typed" in output, output[-3000:]
    assert f"nums.md:{bound}: 'more than 0.02' is false" not in output, "0.02 < 0.024: that bound holds"
    # Sphinx re-reads only changed files: the page that failed is read again until it is fixed
    failed_with(mini_book.build(), f"nums.md:{spare}: the page glues 'spare'")
    page.write_text(page.read_text().replace("more than", "at most"))
    output = (lambda r: r.stdout + r.stderr)(mini_book.build())
    assert f"nums.md:{bound}: 'at most 0.02' is false" in output, output[-3000:]


FINAL_SENTENCE = "The final is on {{ final_date }}, the first day back{states}`final_date is first_day_back`.\n"


def edit_block(mini_book, key: str, value: str | None) -> int:
    """Set (or, with None, delete) the line of _config.yml that starts with ``key``; its line."""
    config = mini_book.path / "_config.yml"
    lines = config.read_text().splitlines(keepends=True)
    line = next(i for i, ln in enumerate(lines) if ln.strip().startswith(key))
    if value is None:
        del lines[line]
    else:
        lines[line] = re.sub(rf"({re.escape(key)}\s*)[^#\n]*", rf"\g<1>{value} ", lines[line], count=1)
    config.write_text("".join(lines))
    return line + 1


def test_a_new_terms_date_that_makes_a_sentence_false_names_the_fact_and_the_sentence(mini_book):
    """Whatever this term's dates: the final a week after the first day back breaks 'the final
    is the first day back', at final_date's line, with the sentence's page and line."""
    page = mini_book.page("index", "# Home\n\n" + FINAL_SENTENCE + GOOD_CELL)
    mini_book.toc("index")
    block = yaml.safe_load((mini_book.path / "_config.yml").read_text())
    back = facts.parse_day(block["parse"]["myst_substitutions"]["first_day_back"], block["year"])
    later = facts.shown(back + datetime.timedelta(days=7))
    line = edit_block(mini_book, "final_date:", later)
    sentence = page.read_text().splitlines().index(FINAL_SENTENCE.strip()) + 1
    failed_with(mini_book.build(), f"_config.yml:{line}: final_date is {later}", f"index.md:{sentence}",
                "'final_date is first_day_back'", "Fix: if final_date is wrong")


def test_a_sentence_whose_relation_the_block_drops_names_its_line(mini_book):
    """The mark renders nothing; a term without the relation (a summer without a recess)
    fails at the sentence that states it."""
    page = mini_book.page("index", "# Home\n\n" + FINAL_SENTENCE + GOOD_CELL)
    mini_book.toc("index")
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    html = (mini_book.path / "_build" / "html" / "book" / "index.html").read_text()
    assert "the first day back." in html and "final_date is first_day_back" not in html
    edit_block(mini_book, "- final_date is first_day_back", None)
    sentence = page.read_text().splitlines().index(FINAL_SENTENCE.strip()) + 1
    failed_with(mini_book.build(), f"index.md:{sentence}: this sentence, 'The final is on {{{{ final_date }}}}, the"
                " first day back', states 'final_date is first_day_back'", "restore the relation")


def test_an_undefined_glue_key_names_the_roles_line_and_the_fix(mini_book):
    page = mini_book.page("index", """
        # Home

        ```{code-cell} ipython3
        from rec11.glue import glue
        glue("slope", 2.0, display=False)
        ```

        A paragraph whose first line is not the role's:
        the slope is {glue:text}`slope:.1f`, and the
        intercept is {glue:text}`intercept:.1f` here.
        """)
    mini_book.toc("index")
    line = page.read_text().splitlines().index("intercept is {glue:text}`intercept:.1f` here.") + 1
    result = mini_book.build()
    failed_with(result, f"index.md:{line}: ", "'intercept'",
                "Fix: glue('intercept', value, display=False) in a remove-cell of this page")
    assert "use `path::key`" not in result.stdout + result.stderr


def test_a_directive_typo_names_the_nearest_directive(mini_book):
    page = mini_book.page("index", "# Home\n\n:::{slid}\nThe point.\n:::\n" + GOOD_CELL)
    mini_book.toc("index")
    line = page.read_text().splitlines().index(":::{slid}") + 1
    failed_with(mini_book.build(), f"index.md:{line}: ", "'slid'", "did you mean {slide}?", "Fix:")


PLAN = """---
jupytext:
  text_representation: {extension: .md, format_name: myst, format_version: 0.13}
kernelspec: {display_name: Python 3, language: python, name: python3}
audience: instructors
---

# Plan

```{code-cell} ipython3
from rec11 import notes
from rec11.sources import book_root
total = sum(n.minutes for n in notes.collect(book_root()))
print(f"notes add up to {total:g} minutes")
```
"""


def test_a_failed_build_leaves_the_deck_and_the_plan_as_they_were(mini_book):
    mini_book.page("index", "# Home\n\n" + budget_notes(attention=42) + GOOD_CELL)
    (mini_book.path / "book" / "plan.md").write_text(PLAN)
    mini_book.toc("index", "plan")
    html = mini_book.path / "_build" / "html"
    deck, plan = html / "slides" / "index.html", html / "book" / "plan.html"
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    before = deck.read_bytes(), plan.read_bytes()
    assert b"notes add up to 83 minutes" in before[1] and b"Say it." in before[0]

    page = mini_book.path / "book" / "index.md"
    page.write_text(page.read_text().replace(":minutes: 42", ":minutes: 49"))
    failed_with(mini_book.build(), "index.md:", "session budget", "49")
    assert (deck.read_bytes(), plan.read_bytes()) == before, "a failed build rewrote the deck or the plan"

    # fixed, the next build writes both again, from the notes as they are now
    page.write_text(page.read_text().replace(":minutes: 49", ":minutes: 40"))
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert b"notes add up to 81 minutes" in plan.read_bytes()
    assert b"40 min" in deck.read_bytes() and b"42 min" not in deck.read_bytes()


NAMED_FIGURE = """
```{{code-cell}} ipython3
---
mystnb:
  figure:
    name: {name}
    caption: A line.
  image:
    alt: A straight line rising from the bottom left to the top right.
---
from rec11.style import setup_page
import matplotlib.pyplot as plt
setup_page()
plt.plot([0, 1], [0, {slope}])
plt.show()
```
"""


def test_a_figure_problem_fails_before_the_deck_the_plan_or_figures_are_written(mini_book):
    """Two cells with one figure name: the build fails at the second's line, and the deck,
    the session plan and figures/ stay as the last good build left them."""
    mini_book.page("index", "# Home\n\n" + budget_notes(attention=42) + NAMED_FIGURE.format(name="line", slope=1))
    (mini_book.path / "book" / "plan.md").write_text(PLAN)
    mini_book.toc("index", "plan")
    html, figures = mini_book.path / "_build" / "html", mini_book.path / "figures"
    kept = [html / "slides" / "index.html", html / "book" / "plan.html", figures / "line.svg", figures / "line.png"]
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    before = [p.read_bytes() for p in kept]

    page = mini_book.path / "book" / "index.md"
    page.write_text(page.read_text().replace(":minutes: 42", ":minutes: 41")
                    + NAMED_FIGURE.format(name="line", slope=2))
    line = page.read_text().splitlines().index("plt.plot([0, 1], [0, 2])") - 2  # the cell's first line of code
    failed_with(mini_book.build(), f"index.md:{line}", "figure name 'line' is already used at book/index.md:",
                "Fix: give one of the two cells another name")
    assert [p.read_bytes() for p in kept] == before, "a failed build rewrote the deck, the plan or a figure"

    first, second = page.read_text().rsplit("name: line", 1)  # the second cell gets a name of its own
    page.write_text(first + "name: steeper" + second)
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert sorted(p.name for p in figures.iterdir()) == ["line.png", "line.svg", "steeper.png", "steeper.svg"]
    assert b"41 min" in kept[0].read_bytes()
