"""A page's MyST markdown becomes plain Markdown that any notebook tool renders."""

from plainmd_support import SITE, context

from rec11_book.shared.plainmd import convert, has_answers


def test_slides_unwrap_and_instructor_notes_go():
    text = (":::{slide}\nThe KL is a **gap**.\n:::\n\nProse.\n\n"
            ":::{instructor-note}\n:slide: KL\n:minutes: 3\n\nSay it twice.\n:::\n")
    out = convert(text, context()[0])
    assert out == "The KL is a **gap**.\n\nProse."


def test_labels_and_comments_go_and_links_point_at_the_published_pages():
    text = ("(sec-vae)=\n## The VAE\n\n% a note to ourselves\n"
            "See [the details](sec-kl), [the other page](../other.md#loss) and [PyTorch](https://pytorch.org).\n"
            "Also [the page below](sub/page.md) spans\n[two\nlines](sec-kl).")
    out = convert(text, context()[0])
    assert "(sec-vae)=" not in out and "% a note" not in out
    assert "[the details](https://example.github.io/book/book/details.html#sec-kl)" in out
    assert "[the other page](https://example.github.io/book/other.html#loss)" in out
    assert "[PyTorch](https://pytorch.org)" in out
    assert "[the page below](https://example.github.io/book/book/sub/page.html)" in out
    assert "[two\nlines](https://example.github.io/book/book/details.html#sec-kl)" in out


def test_exercises_become_headings_and_solutions_go_to_the_answers_notebook():
    text = ("## Exercises\n\n::::{exercise}\n:label: ex-a\n\n:::{slide}\nWhy $\\sqrt{d_k}$?\n:::\n::::\n\n"
            ":::{solution} ex-a\n:class: dropdown\n\nBecause **variance**.\n:::\n\nNext.")
    out = convert(text, context()[0])
    # a folded answer is in view in Colab and VS Code: the reader's notebook has none
    assert out == "## Exercises\n\n### Exercise 1\n\nWhy $\\sqrt{d_k}$?\n\nNext."
    answers = convert(text, context(answers=True)[0])
    assert ("### Exercise 1\n\nWhy $\\sqrt{d_k}$?\n\n#### Answer to Exercise 1\n\nBecause **variance**.\n\nNext."
            in answers)
    assert ":::" not in answers and "{" + "solution}" not in answers


def test_admonitions_become_quotes_and_dropdowns_details():
    out = convert(":::{note}\nOne line.\n\nTwo.\n:::\n\n:::{tip} Read this\n:class: dropdown\n\nHidden.\n:::",
                  context()[0])
    assert out.startswith("> **Note**\n>\n> One line.\n>\n> Two.")
    assert "<details>\n<summary>Read this</summary>\n\nHidden.\n\n</details>" in out


def test_roles_facts_and_glue_are_filled_in():
    ctx, problems = context(glue=lambda key: {"text/plain": "0.25"} if key == "kl" else {})
    out = convert("KL {glue:text}`kl:.1f` by {{ final_date }}; {handout}`the handout`.", ctx)
    assert out == "KL 0.2 by Tue 12/1; [the handout](https://example.github.io/book/handout.pdf)."
    assert problems == []


def test_the_relation_a_sentence_states_goes():
    ctx, problems = context()
    out = convert("The final ({{ final_date }}) is the first day back{states}`final_date is first_day_back`.", ctx)
    assert out == "The final (Tue 12/1) is the first day back." and problems == []


def test_the_solutions_notebook_role_links_the_answers_or_is_reported():
    ctx, problems = context(solutions_url=SITE + "_sources/book/page-solutions.ipynb")
    out = convert("See {solutions-notebook}`the answers`.", ctx)
    assert out == "See [the answers](https://example.github.io/book/_sources/book/page-solutions.ipynb)."
    ctx, problems = context()  # a page with no worked answers
    convert("Intro.\n\nSee {solutions-notebook}`the answers`.", ctx, first_line=5)
    assert problems == [(7, "{solutions-notebook}: this page has no worked answers to link to")]


def test_code_blocks_are_left_as_written():
    text = "Before.\n\n```python\nx = {glue:text}`kl`  # [a](b.md)\n```\n"
    assert convert(text, context()[0]) == "Before.\n\n```python\nx = {glue:text}`kl`  # [a](b.md)\n```"


def test_what_cannot_be_rendered_is_reported_with_its_line():
    ctx, problems = context()
    convert("Intro.\n\n:::{mystery}\nBody.\n:::\n\nSee {term}`ELBO` and {glue:text}`nope`.", ctx, first_line=40)
    assert (42, "the notebook download cannot render the {mystery} directive") in problems
    assert (46, "the notebook download cannot render the {term} role") in problems
    assert any(line == 46 and "nope" in message for line, message in problems)


def test_agenda_and_literalinclude(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("import os\n\n\ndef f(x):\n    return x + 1\n\n\ndef g():\n    pass\n")
    (tmp_path / "book").mkdir()
    ctx, problems = context(book=tmp_path, agenda=lambda doc, slides: f"| agenda of {doc} {slides} |")
    out = convert("```{agenda}\n:slides:\n```\n\n```{literalinclude} ../src/m.py\n:pyobject: f\n```", ctx)
    assert out == "| agenda of book/page True |\n\n```python\ndef f(x):\n    return x + 1\n```"
    assert problems == []


def test_literalinclude_of_a_method(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("class A:\n    def f(self):\n        return 1\n\n    def g(self):\n"
                                          "        return 2\n")
    (tmp_path / "book").mkdir()
    ctx, problems = context(book=tmp_path)
    out = convert("```{literalinclude} ../src/m.py\n:pyobject: A.g\n```", ctx)
    assert out == "```python\n    def g(self):\n        return 2\n```" and problems == []
    convert("```{literalinclude} ../src/m.py\n:pyobject: A.h\n```", ctx)
    assert problems == [(1, "literalinclude: no A.h in ../src/m.py")]


def test_math_blocks_lose_their_myst_labels():
    text = "$$\na = b\n$$ (softmax)\n\n```{math}\n:label: two\n\nc &= d\n```\n\n```{code-block} python\nx = 1\n```"
    assert convert(text, context()[0]) == "$$\na = b\n$$\n\n$$\nc &= d\n$$\n\n```python\nx = 1\n```"


def test_quick_checks_become_a_prompt_and_a_collapsed_answer():
    text = (":::{quick-check} Which axis does the softmax run over?\n:choices: dim=-2 | dim=-1\n:answer: dim=-1\n"
            "The keys are the last axis.\n:::\n\n"
            ":::{quick-check} The shape of $QK^T$?\n:answer-glue: shape\n:::\n")
    out = convert(text, context(glue=lambda key: {"text/plain": "(2, 3)"} if key == "shape" else {})[0])
    assert "**Check yourself:** Which axis does the softmax run over?\n\n- dim=-2\n- dim=-1" in out
    assert "<summary>Answer</summary>\n\ndim=-1\n\nThe keys are the last axis." in out
    assert "**Check yourself:** The shape of $QK^T$?" in out and "`(2, 3)`" in out
    ctx, problems = context()
    convert(":::{quick-check} Shape?\n:answer-glue: nowhere\n:::\n", ctx, first_line=7)
    assert problems == [(7, "quick-check: no glued value 'nowhere' on this page (:answer-glue:)")]


def test_a_gated_solution_goes_across_cells_and_stands_under_a_heading_in_the_answers():
    cells = ["::::{exercise}\n:label: ex-a\n\nQuestion.\n::::\n",
             "Before.\n\n```{solution-start} ex-a\n:class: dropdown\n```\n\nThe fix is one line.\n",
             "It prints Right.\n\n```{solution-end}\n```\n\n::::{exercise}\n:label: ex-b\n\nNext.\n::::\n"]
    ctx, problems = context()
    out = [convert(cells[0], ctx), convert(cells[1], ctx)]
    assert out[1] == "Before."
    assert ctx.solution == "Answer to Exercise 1", "the code cells that follow go too"
    out.append(convert(cells[2], ctx))
    assert out[2] == "## Exercise 2\n\nNext." and ctx.solution is None
    ctx, problems = context(answers=True)
    out = [convert(cell, ctx) for cell in cells]
    assert out[1] == "Before.\n\n### Answer to Exercise 1\n\nThe fix is one line."
    assert out[2] == "It prints Right.\n\n## Exercise 2\n\nNext."
    assert problems == []
    assert has_answers(cells[1]) and not has_answers(cells[0] + cells[2])
