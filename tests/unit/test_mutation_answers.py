"""tests/mutation/answers.py holds the worked answers of book/exercises.md as the page writes them.

``make mutants`` measures the checks by mutating answers.py; if it drifted from the page's
solution cells, the measure would be of some other code. Each function is compared as
source text, comments included, with one allowed difference: mutmut leaves decorated
functions alone, so a decorator on the page is written in answers.py as
``name = decorator(name)`` right after the ``def``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "exercises.md"
ANSWERS = ROOT / "tests" / "mutation" / "answers.py"
NAMES = {"attention", "split_heads", "merge_heads", "padding_mask", "generate",
         "surprisal", "reparameterize", "vae_loss", "diffusion_loss"}

SOLUTION = re.compile(r"```\{solution-start\}.*?```\{solution-end\}", re.DOTALL)
CODE_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)\n```", re.DOTALL)


def solution_cells(page: str) -> list[str]:
    """The code of every code cell between a solution-start and its solution-end."""
    cells = [cell for block in SOLUTION.findall(page) for cell in CODE_CELL.findall(block)]
    return [re.sub(r"\A(:[^\n]*\n)+\n?", "", cell) for cell in cells]  # less ":tags:" lines


def functions(code: str) -> dict[str, tuple[list[str], str]]:
    """{name: (decorators, the def's source without them)} of the top-level functions;
    ``name = deco(name)`` after a def counts as the decorator ``deco``."""
    lines = code.splitlines()
    found: dict[str, tuple[list[str], str]] = {}
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef):
            body = "\n".join(lines[node.lineno - 1:node.end_lineno])
            found[node.name] = ([ast.unparse(d) for d in node.decorator_list], body)
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)
              and [ast.unparse(a) for a in node.value.args] == [node.targets[0].id]
              and node.targets[0].id in found):
            decorators, body = found[node.targets[0].id]
            found[node.targets[0].id] = ([*decorators, ast.unparse(node.value.func)], body)
    return found


def test_every_solution_function_is_in_answers_as_the_page_writes_it():
    page: dict[str, tuple[list[str], str]] = {}
    for cell in solution_cells(PAGE.read_text()):
        page.update(functions(cell))
    answers = functions(ANSWERS.read_text())
    assert NAMES <= set(page), f"the page's solution cells lack {sorted(NAMES - set(page))}"
    assert set(answers) == NAMES
    for name in sorted(NAMES):
        assert answers[name] == page[name], (
            f"tests/mutation/answers.py's {name} differs from book/exercises.md's worked "
            "answer: copy the page's function into answers.py")


def test_a_changed_answer_is_noticed():
    """The comparison is of the text: one changed character is a difference."""
    code = ANSWERS.read_text()
    changed = functions(code.replace("dim=-1)                     # rows", "dim=-2)                     # rows"))
    assert changed["attention"] != functions(code)["attention"]
    assert functions("@torch.no_grad()\ndef f(x):\n    return x\n")["f"] == \
        functions("def f(x):\n    return x\n\n\nf = torch.no_grad()(f)\n")["f"]
