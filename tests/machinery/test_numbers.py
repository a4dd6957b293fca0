"""The number rule (rec11_book.extensions.numbers): what it flags, on page sources written for each case."""

import textwrap

from rec11_book.extensions import numbers

FRONT = "---\nkernelspec: {name: python3}\n---\n\n"


def page(body: str, front: str = FRONT) -> str:
    return front + textwrap.dedent(body)


def test_a_typed_result_is_flagged_at_its_line_and_a_setting_the_code_uses_is_not():
    text = page("""\
        # A page

        ```{code-cell} ipython3
        lr = 3e-3
        claim(loss, "<", 0.25, "page: 'below 0.25'")
        ```

        At a learning rate of 0.003 the loss ends below 0.25, at 0.9998 accuracy.
        About 73% of the rows, and 12 heads in 2019.
        """)
    line = text.split("\n").index("At a learning rate of 0.003 the loss ends below 0.25, at 0.9998 accuracy.") + 1
    assert numbers.typed_numbers(text) == [(line, "0.9998"), (line + 1, "73%"), (line + 1, "12")]


def test_a_whole_number_a_run_measured_must_be_glued_and_the_exempt_kinds_stay_typed():
    """"About 18 times" for a measured 17.6 is typed output, as a decimal is; a size the code
    sets is a setting; below 10, years, labels' numbers, dates and powers stay typed."""
    text = page("""\
        ```{code-cell} ipython3
        d_model = 512
        steps = 6000
        ```

        The loss fell about 18 times, and 1,500 steps later 3,000 sentences were read.
        With d_model = 512 and 6,000 steps, two heads and 4 layers, as Vaswani et al. (2017) did.
        Lecture 18 and Exercises 1 and 16 come before the final on 12/1, at a rate of 10⁻³.
        """)
    assert [n for _, n in numbers.typed_numbers(text)] == ["18", "1,500", "3,000"]


def test_a_claims_threshold_may_be_typed_only_in_that_claims_sentence():
    """0.4 bounds one claim: "under 0.4" beside its words passes, and "40 %" elsewhere on the
    page does not (it would be another number typed as if it were a setting)."""
    text = page("""\
        ```{code-cell} ipython3
        claim(share, "<", 0.4, "page.md: 'the thinnest row stays under 0.4'")
        claim(math.log10(gap), ">", math.log10(0.05), "page.md: 'rows that do not sum to 1'")
        ```

        Here the thinnest row stays under 0.4 of the weight.

        The model puts 40 % of it on the answer, and rows that do not sum to 1 are off by 0.05.

        Elsewhere, 0.05 again.
        """)
    lines = text.split("\n")
    where = {ln: i for i, ln in enumerate(lines, 1)}
    assert numbers.typed_numbers(text) == [
        (where["The model puts 40 % of it on the answer, and rows that do not sum to 1 are off by 0.05."], "40%"),
        (where["Elsewhere, 0.05 again."], "0.05"),
    ]


def test_math_code_links_options_and_instructor_notes_are_not_student_prose():
    text = page("""\
        # A page

        The mean is $\\mu = 0.5$, the call `torch.rand(0.3)`, a [link](https://x.org/v0.13/).

        $$
        \\beta = 0.7
        $$

        ```{quick-check} What is it?
        :answer: 0.25
        :tolerance: 0.005
        ```

        :::{instructor-note}
        :slide: One
        The slide says 0.42.
        :::

        ```python
        x = 0.61
        ```
        """)
    assert numbers.typed_numbers(text) == []


def test_captions_and_alt_texts_are_checked():
    text = page("""\
        ```{code-cell} ipython3
        ---
        mystnb:
          figure:
            name: f
            caption: The loss ends near 0.31.
          image:
            alt: A line falling to {glue:text}`end:.2f`, then 0.12.
        ---
        plot()
        ```
        """)
    lines = text.split("\n")
    assert numbers.typed_numbers(text) == [
        (next(i for i, ln in enumerate(lines, 1) if "caption:" in ln), "0.31"),
        (next(i for i, ln in enumerate(lines, 1) if "alt:" in ln), "0.12"),
    ]


def test_a_number_listed_in_the_front_matter_may_be_typed():
    front = '---\nkernelspec: {name: python3}\ntyped_numbers:\n  "99%": the package\'s saturation level\n---\n'
    text = page("More than 99% of the weight, and 98% of it.\n", front)
    assert [n for _, n in numbers.typed_numbers(text)] == ["98%"]


def test_an_unused_glue_key_is_flagged_at_its_call_and_a_family_passes_if_one_member_is_shown():
    text = page("""\
        ```{code-cell} ipython3
        glue("shown", 1.0, display=False)
        glue("forgotten", 2.0, display=False)
        for step in (1, 100):
            glue(f"err_{step}", 0.5, display=False)
        for layer in (0, 1):
            glue(f"kl_{layer}_max", 0.5, display=False)
        for name, value in {"in_a_dict": 3.0}.items():
            glue(name, value, display=False)
        ```

        It is {glue:text}`shown:.1f`, and {glue:text}`err_1:.2f` at step 1.
        """)
    glued = {"shown", "forgotten", "err_1", "err_100", "kl_0_max", "kl_1_max", "in_a_dict"}
    lines = text.split("\n")
    found = numbers.unused_glue(text, glued, numbers.glue_uses(text))
    assert found == [
        (next(i for i, ln in enumerate(lines, 1) if '"forgotten"' in ln), "forgotten"),
        (next(i for i, ln in enumerate(lines, 1) if '"in_a_dict"' in ln), "in_a_dict"),
        (next(i for i, ln in enumerate(lines, 1) if 'f"kl_' in ln), "kl_0_max"),
        (next(i for i, ln in enumerate(lines, 1) if 'f"kl_' in ln), "kl_1_max"),
    ]


def test_glue_uses_reads_roles_quick_checks_and_other_pages_keys():
    text = "{glue:text}`a:.2f` {glue:md}`b` {glue:text}`../page.md::c:.1f`\n:answer-glue: d\n"
    assert numbers.glue_uses(text) == {"a", "b", "../page.md::c", "d"}
    others = {"book/sub/page": text, "book/other": "{glue:text}`page::e` {glue:text}`sub/page::f`"}
    assert numbers.shown_elsewhere("book/page", others) == {"c", "e"}


def glued(**values):
    return {k: {"data": {"text/plain": repr(v)}} for k, v in values.items()}


def test_a_bound_that_rounding_makes_false_is_flagged_and_a_true_one_is_not():
    text = page("""\
        It moves no word by more than 0.3: at most {glue:text}`a:.2f` bits, and above {glue:text}`b:.1f`.
        It stays below {glue:text}`c:.0%`, and more than {glue:text}`d:.2f`.
        """)
    problems = numbers.false_bounds(text, glued(a=0.024, b=0.96, c=0.734, d=0.5))
    assert [(line, p.split(" is false")[0]) for line, p in problems] == [
        (5, "'at most 0.02'"), (5, "'above 1.0'"), (6, "'below 73%'")]
    assert all("Fix:" in p for _, p in problems)


def test_a_value_printed_as_a_round_number_it_is_not_is_a_note():
    text = page("Accuracy {glue:text}`acc:.3f`, loss {glue:text}`loss:.1f`, {glue:text}`share:.0%`.\n")
    problems = numbers.false_bounds(text, glued(acc=0.9998, loss=3.96, share=0.998))
    assert [p.split(" is ")[0] for _, p in problems] == ["note: acc", "note: share"]
    assert numbers.looks_exact("1.000") and numbers.looks_exact("100%") and not numbers.looks_exact("4.0")
