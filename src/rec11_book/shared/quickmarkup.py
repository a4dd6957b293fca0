"""The ``{quick-check}`` markup, read: one parser, for the page's form and the download's text.

``quickcheck`` renders a check in the page from :func:`parse`'s result, and ``plainmd``
prints the same result in a notebook download; neither reads the directive's options
itself. See ``quickcheck`` for the markup. Sphinx-free.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

LABEL = "Check yourself:"


@dataclass(frozen=True)
class Check:
    prompt: str
    answer: str
    choices: tuple[str, ...] = ()
    tolerance: float | None = None
    hint: str = ""

    @property
    def kind(self) -> str:
        if self.choices:
            return "choice"
        return "number" if number(self.answer) is not None else "text"


def number(text: str) -> float | None:
    """A number as a student may type it: 0.73, -1e-3, 1/64; else None."""
    text = text.strip().replace("\u2212", "-")
    try:
        if re.fullmatch(r"-?\d+\s*/\s*\d+", text):
            top, bottom = text.split("/")
            return int(top) / int(bottom)
        return float(text)
    except (ValueError, ZeroDivisionError):
        return None


def glued_text(data: dict) -> str | None:
    """The text of a glued value (its ``text/plain``; a glued string without its quotes)."""
    text = data.get("text/plain")
    if text is None:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, str) else text


def parse(argument: str, options: dict, hint: str, glue=lambda key: {}) -> Check:
    """A quick check from its directive; ``ValueError`` says what is wrong with it."""
    prompt = argument.strip()
    if not prompt:
        raise ValueError("quick-check: the prompt (the directive's argument) is missing")
    answer, key = options.get("answer"), options.get("answer-glue")
    if (answer is None) == (key is None):
        raise ValueError("quick-check: give exactly one of :answer: and :answer-glue:")
    if key is not None:
        answer = glued_text(glue(key.strip()))
        if answer is None:
            raise ValueError(f"quick-check: no glued value {key.strip()!r} on this page (:answer-glue:)")
    answer = str(answer).strip()
    if not answer:
        raise ValueError("quick-check: the answer is empty")
    choices = tuple(c.strip() for c in str(options.get("choices", "")).split("|") if c.strip())
    if options.get("choices") is not None and len(choices) < 2:
        raise ValueError("quick-check: :choices: needs at least two, separated by |")
    if choices and answer not in choices:
        raise ValueError(f"quick-check: the answer {answer!r} is not one of the choices {list(choices)}")
    tolerance = options.get("tolerance")
    if tolerance is not None:
        tolerance = number(str(tolerance))
        if tolerance is None or tolerance < 0 or number(answer) is None or choices:
            raise ValueError("quick-check: :tolerance: is a number, for a numeric answer")
    return Check(prompt, answer, choices, tolerance, hint.strip())
