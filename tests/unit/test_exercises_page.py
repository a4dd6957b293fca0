"""The Exercises page holds what the handout promises: seven exercises, each checkable."""

import re

from rec11.chapter import toc_pages

NUMBERS = {"two": 2, "five": 5, "seven": 7}


def test_seven_exercises_each_with_a_quick_check_and_an_answer(root):
    text = (root / "book" / "exercises.md").read_text()
    boxes = re.findall(r"^(:{3,})\{exercise\}\n:label: ([\w-]+)\n(.*?)^\1$", text, re.M | re.S)
    assert len(boxes) == 7, f"book/exercises.md has {len(boxes)} exercises; the handout promises seven"
    for _, label, body in boxes:
        assert ":::{quick-check}" in body, f"{label}: no quick check a student can do without a kernel"
        assert re.search(rf"\{{solution(-start)?\}} {label}\n:class: dropdown", text), f"{label}: no collapsed answer"
        if "{slide}" not in body:  # one of the five beyond the slides: code, checked
            after = text[text.index(f":label: {label}"):]
            after = after[:after.index("{solution-start}")]
            assert re.search(r"^:tags: \[hide-output\]\n\n(.*\n)*?check\.\w+\(\w+\)\n```", after, re.M), \
                f"{label}: no starter cell whose check call's verdict is folded"


def test_pages_that_count_the_exercises_say_seven(root):
    said = {}
    for page in toc_pages(root):
        for word in re.findall(r"\b(two|five|seven)\b(?:\s+\[)?\s*exercises", (root / f"{page}.md").read_text()):
            said.setdefault(page, set()).add(NUMBERS[word])
    assert said.get("book/index") == {7} and said.get("book/where-this-lands") == {7}, said
    assert all(numbers == {7} for numbers in said.values()), said
