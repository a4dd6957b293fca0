"""{quick-check}: what the directive accepts, and what it refuses with a reason."""

import pytest

from rec11_book.shared.quickmarkup import number, parse


def test_kinds_and_answers():
    assert parse("How many bits?", {"answer": "6"}, "").kind == "number"
    assert parse("Shape?", {"answer": "(2, 3, 5, 4)"}, "").kind == "text"
    choice = parse("Which?", {"choices": "NaN | zeros", "answer": "NaN"}, "A hint.")
    assert choice.kind == "choice" and choice.choices == ("NaN", "zeros") and choice.hint == "A hint."
    glued = parse("p?", {"answer-glue": "p"}, "", glue=lambda key: {"text/plain": "0.731"})
    assert glued.answer == "0.731" and glued.kind == "number"
    assert parse("w?", {"answer-glue": "w"}, "", glue=lambda key: {"text/plain": "'fell'"}).answer == "fell"


def test_numbers_as_students_type_them():
    assert number("1/64") == 1 / 64 and number("\u22120.5") == -0.5 and number("6") == 6
    assert number("(2, 3)") is None and number("fell") is None and number("1/0") is None


@pytest.mark.parametrize("argument, options, message", [
    ("", {"answer": "1"}, "the prompt"),
    ("p?", {}, "exactly one of :answer: and :answer-glue:"),
    ("p?", {"answer": "1", "answer-glue": "x"}, "exactly one"),
    ("p?", {"answer-glue": "missing"}, "no glued value 'missing'"),
    ("p?", {"choices": "a | b", "answer": "c"}, "not one of the choices"),
    ("p?", {"choices": "a", "answer": "a"}, "at least two"),
    ("p?", {"answer": "fell", "tolerance": "0.1"}, ":tolerance: is a number, for a numeric answer"),
])
def test_what_is_refused(argument, options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(argument, options, "")

