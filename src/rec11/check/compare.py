"""A check for any exercise: the student's function beside the right one, on cases they did not pick.

A new page's exercise needs no module of its own to be checked::

    from rec11.check.compare import Case, compare

    def cases():  # smallest first: the first that differs is the smallest counterexample
        g = torch.Generator().manual_seed(0)
        return [Case(lambda: (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0])), "2 values"),
                Case(lambda: (torch.randn(3, 5, generator=g), torch.randn(3, 5, generator=g)),
                     "a 3 x 5 batch")]

    compare(mse, right_mse, cases(), what="the mean squared error",
            mistakes={"sum": (lambda p, t: ((p - t) ** 2).sum(),
                              "you sum the squared errors; the mean divides by how many there are.")})

The verdict follows the exercises' checks (``rec11.check.core``): *Right* only when every
case agrees (values within float tolerance, and the gradient reaching each input whose
``requires_grad`` is set); a mistake is named only when it fits every case exactly and
differs from the right answer somewhere; otherwise the first case that differs, with the
entry. Every call runs under a fixed seed, and autograd's switch is put back as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import torch

from rec11.check.core import (
    GRAD_LEAK,
    Case,
    Verdict,
    first_difference,
    gradient_difference,
    gradients,
    named,
    raised,
    right,
    run,
    wrong,
)

__all__ = ["Case", "Verdict", "compare"]


def _fresh(args: tuple) -> tuple:
    """A copy of a case's arguments, so that nothing one call does to them reaches the next."""
    return tuple(a.detach().clone().requires_grad_(a.requires_grad) if torch.is_tensor(a) else copy.deepcopy(a)
                 for a in args)


def _leaves(args: tuple) -> list:
    """The arguments a gradient should reach: tensors that require one."""
    return [a for a in args if torch.is_tensor(a) and a.requires_grad]


def compare(fn: Callable, reference: Callable, cases: Sequence[Case], what: str,
            mistakes: dict[str, tuple[Callable, str]] | None = None) -> Verdict:
    """Run ``fn`` and ``reference`` on every case; *Right*, a named mistake, or the first difference.

    ``mistakes`` maps a name to (the mistaken function, the sentence that names it and
    says what to try). ``what`` completes "Right: ..." and names the function in messages.
    """
    if not cases:
        raise ValueError("compare: no cases. Fix: give at least one Case, smallest first")
    mistakes = mistakes or {}
    student, want, inputs = [], [], []
    first_wrong = None  # (where, the difference or the exception)
    for k, case in enumerate(cases):
        args = case.make()
        where = f"case {k} ({case.about})"
        got = run(fn, _fresh(args))
        if got.grad_leaked:
            return wrong({"grad": GRAD_LEAK})
        expected = run(reference, _fresh(args)).value
        student.append(got.error if got.error is not None else got.value)
        want.append(expected)
        inputs.append(_fresh(args))
        if first_wrong is not None:
            continue
        if got.error is not None:
            first_wrong = (where, got.error)
            continue
        difference = first_difference(got.value, expected)
        if difference is None and _leaves(args):
            theirs, ours = _fresh(args), _fresh(args)
            names = [f"argument {i}" for i, a in enumerate(args) if torch.is_tensor(a) and a.requires_grad]
            their_grads = run(lambda *a: gradients(fn(*a), _leaves(a)), theirs).value
            difference = gradient_difference(their_grads, gradients(reference(*ours), _leaves(ours)), names)
        if difference is not None:
            first_wrong = (where, difference)
    if first_wrong is None:
        return right(what)
    variants = [([name], mistake) for name, (mistake, _) in mistakes.items()]
    found = named(student, variants, inputs, want)
    if found:
        return wrong({name: mistakes[name][1] for name in found})
    where, difference = first_wrong
    if isinstance(difference, Exception):
        return raised(difference, where)
    return wrong({"differs": f"on {where}, {difference}. Try your function on that input."})
