"""The mutants of answers.py that no check can refuse, because they are right answers.

Each entry names the function, the text mutmut changes and what it changes it to, and why
the mutant computes what the answer computes. ``make mutants`` (tests/mutation/report.py)
counts a surviving mutant as equivalent only when its one changed line is an entry here;
any other survivor fails the run. tests/unit/test_mutation_equivalent.py builds each
mutant from answers.py and runs it beside the answer on inputs Hypothesis draws.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ANSWERS = Path(__file__).with_name("answers.py")


@dataclass(frozen=True)
class Equivalent:
    function: str
    original: str  # text on one line of the function
    mutant: str    # what the mutant writes there instead
    reason: str


EQUIVALENT = [
    Equivalent("attention", 'float("-inf")', 'float("-INF")',
               "float() reads 'inf' in any case: float('-INF') is the same number, "
               "so outputs and gradients are the same bits."),
    Equivalent("generate", "float('-inf')", "float('-INF')",
               "float() reads 'inf' in any case: the same fill, the same draws."),
    Equivalent("generate", "torch.softmax(logits, dim=-1)", "torch.softmax(logits, dim=+1)",
               "logits is model(context)[:, -1, :], always two-dimensional (N, V), so "
               "dim=+1 is dim=-1: the same probabilities, the same draws."),
    Equivalent("reparameterize", "return mu + torch.exp(0.5 * logvar) * eps",
               "return mu - torch.exp(0.5 * logvar) * eps",
               "mu - sigma * eps is the answer with -eps for eps, and -eps ~ N(0, I) as eps "
               "is: z and its gradients to mu and logvar have the same joint distribution, "
               "so z is as right a sample of N(mu, sigma^2). A check that refused it would "
               "refuse right answers that draw their noise another way."),
]


def function_source(code: str, name: str) -> tuple[int, int]:
    """(start, end) character offsets of top-level function ``name`` in ``code``."""
    lines = code.splitlines(keepends=True)
    node = next(n for n in ast.parse(code).body
                if isinstance(n, ast.FunctionDef) and n.name == name)
    start = sum(len(line) for line in lines[:node.lineno - 1])
    return start, start + sum(len(line) for line in lines[node.lineno - 1:node.end_lineno])


def mutated_source(entry: Equivalent, code: str | None = None) -> str:
    """answers.py with the entry's one change made; it must occur once in the function."""
    code = ANSWERS.read_text() if code is None else code
    start, end = function_source(code, entry.function)
    body = code[start:end]
    if body.count(entry.original) != 1:
        raise ValueError(f"{entry.original!r} is not once in answers.{entry.function}")
    return code[:start] + body.replace(entry.original, entry.mutant) + code[end:]


def load(code: str) -> dict:
    """The namespace of a module with this source."""
    namespace: dict = {"__name__": "answers_mutant"}
    exec(compile(code, str(ANSWERS), "exec"), namespace)  # our own file
    return namespace


def matches(function: str, removed: str, added: str) -> Equivalent | None:
    """The entry a surviving mutant is, from its diff: the function it is in, the line it
    removed and the line it added (both stripped); None when it is none of them."""
    for entry in EQUIVALENT:
        if (entry.function == function and entry.original in removed
                and removed.replace(entry.original, entry.mutant) == added):
            return entry
    return None
