"""What every check shares: the battery of inputs, a guarded run, and the verdict.

A check runs the student's function and the reference side by side on a battery of
inputs that the student did not pick: every axis its own size, rows that differ,
float32 and float64, and, where the function is trained through or samples, gradients
and random draws. The verdict is "Right" only when every case agrees.

When a case disagrees, a check names a mistake only when it is certain: the student's
outputs equal that mistake's outputs on every case of the battery (and the mistake
differs from the right answer on at least one). Otherwise it shows the evidence: the
first case, smallest first, on which the student's function and the reference differ,
and the first entry that differs. ``check.inputs(name, k)`` hands the student that
case, to try their function on.

Why not Hypothesis at run time: a student's kernel installs ``rec11`` alone, and a
verdict must be the same every time the student runs the cell. The battery is fixed
and ordered smallest first, so its first failing case is already its smallest
counterexample. The test suite uses Hypothesis to draw wrong answers the battery was
not built from (tests/unit/test_check_properties.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

# The seed of every student run: not 0 or 1, which a student's own manual_seed may use.
SEED = 52_813


@dataclass
class Verdict:
    """What a check found: ``ok``, the names of the mistakes, and what to tell the student."""

    ok: bool
    lines: list[str]
    mistakes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def __bool__(self) -> bool:
        return self.ok


def right(what: str) -> Verdict:
    return Verdict(True, [f"Right: {what}"])


def wrong(found: dict[str, str]) -> Verdict:
    """found: {mistake name: the sentence that names it and says what to try}."""
    return Verdict(False, [f"Not yet: {line}" for line in found.values()], list(found))


@dataclass
class Case:
    """One input of a battery: ``make()`` returns fresh arguments each time, so that
    nothing one run does to them (an in-place edit, a gradient) reaches the next."""

    make: Callable[[], tuple]
    about: str  # the input in words, e.g. "N=3, T=5, d=12, H=2"


BATTERIES: dict[str, Callable[[], list[Case]]] = {}


def battery(name: str):
    """Register a function that returns check ``name``'s cases, smallest first."""
    def register(cases: Callable[[], list[Case]]):
        BATTERIES[name] = cases
        return cases
    return register


def inputs(name: str, k: int = 0) -> tuple:
    """The arguments of case ``k`` of check ``name``, to try your function on.

    A verdict that shows a counterexample names its case, e.g.
    ``Q, K, V, mask = check.inputs("attention", 3)``.
    """
    return BATTERIES[name]()[k].make()


def case_name(name: str, k: int, case: Case) -> str:
    return f"check.inputs({name!r}, {k}) ({case.about})"


@dataclass
class Run:
    """What one call of a student's function did."""

    value: Any = None
    error: Exception | None = None
    grad_leaked: bool = False  # autograd's global switch differed after the call


def run(fn, args: tuple, seed: int = SEED, **kwargs) -> Run:
    """Call ``fn(*args)`` under a fixed seed, and put autograd's switch back as it was.

    The random state outside is untouched, so a check changes nothing in the notebook.
    """
    grad_before = torch.is_grad_enabled()
    result = Run()
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        try:
            result.value = fn(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - a student's code can raise anything
            result.error = error
        finally:
            result.grad_leaked = torch.is_grad_enabled() != grad_before
            torch.set_grad_enabled(grad_before)
    return result


def raised(error: Exception, where: str, hints: dict[str, str] | None = None) -> Verdict:
    """Not yet: the function raised on a case; the error's first line and a hint if one fits."""
    text = f"{type(error).__name__}: {error}".splitlines()[0][:200]
    hint = next((h for clue, h in (hints or {}).items() if clue in str(error)), None)
    fix = f" ({hint})" if hint else ""
    return wrong({"raised": f"on {where} your function raised {text}{fix}. Try: run it on "
                           "that input and read the line the error points to."})


GRAD_LEAK = ("after your function returned, autograd was still switched off: "
             "torch.set_grad_enabled(False) as a plain statement switches it off for the "
             "rest of the notebook, and the next exercise's training then fails. Try: "
             "decorate the function with @torch.no_grad(), or use "
             "`with torch.no_grad():` around the loop.")


def first_difference(got, want, atol: float = 1e-5, rtol: float = 1e-4) -> str | None:
    """None when ``got`` equals ``want`` within tolerance; else where they first differ."""
    try:
        got = torch.as_tensor(got).detach()
    except (TypeError, ValueError, RuntimeError):
        return f"your result is a {type(got).__name__}, not a tensor"
    want = torch.as_tensor(want).detach()
    if got.shape != want.shape:
        return f"your result has shape {tuple(got.shape)}; the right one has shape {tuple(want.shape)}"
    g, w = got.double(), want.double()
    same = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if bool(same.all()):
        return None
    where = tuple((~same).nonzero()[0].tolist())
    index = "[" + ", ".join(map(str, where)) + "]"
    return f"first at {index}: expected {w[where].item():.4g}, got {g[where].item():.4g}"


def close(got, want, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    return first_difference(got, want, atol, rtol) is None


def named(student: list, variants, args: list[tuple], reference: list,
          same=close) -> list[str] | None:
    """The names of the one mistake whose outputs equal the student's on every case.

    ``variants`` yields (names, function); ``args`` holds each case's arguments. A
    student's output may be the exception their function raised: a mistake then fits
    that case only if it raises too. A mistake counts only if it differs from the
    reference somewhere. When mistakes with
    different names fit with as few names as the simplest, none is certain: None.
    """
    fits = set()
    for names, fn in variants:
        differs = False
        for got, want, case_args in zip(student, reference, args):
            try:
                out = fn(*case_args)
            except Exception as error:  # noqa: BLE001 - a mistake may not run on every shape
                out = error
            if isinstance(got, Exception) or isinstance(out, Exception):
                if not (isinstance(got, Exception) and isinstance(out, Exception)):
                    break  # one raised and the other did not
                differs = True
                continue
            if not same(got, out):
                break
            differs = differs or not same(out, want)
        else:
            if differs:
                fits.add(tuple(names))
    if not fits:
        return None
    fewest = min(len(names) for names in fits)
    simplest = {names for names in fits if len(names) == fewest}
    return list(simplest.pop()) if len(simplest) == 1 else None


def first(result):
    """A function may return ``out`` or ``(out, A)``, as ``rec11.attention`` does."""
    return result[0] if isinstance(result, tuple) else result


def gradients(out, leaves: list, seed: int = 7) -> list | None:
    """d(sum(out * w))/d(leaf) for each leaf, w a fixed random weight of out's shape;
    None for a leaf no gradient reaches. None in all when ``out`` has no path back."""
    if not torch.is_tensor(out) or not out.requires_grad:
        return None
    weight = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed),
                         dtype=torch.float64).to(out.dtype)  # the same numbers in any dtype
    with torch.enable_grad():
        return list(torch.autograd.grad((out * weight).sum(), leaves, allow_unused=True))


def gradient_difference(got: list | None, want: list, names: list[str]) -> str | None:
    """None when every gradient agrees; else which input's gradient differs, and where."""
    if got is None:
        return ("no gradient flows back through your result: it was computed without "
                "autograd (torch.no_grad(), .detach(), .item() or .numpy() inside)")
    for name, g, w in zip(names, got, want):
        if g is None:
            g = torch.zeros_like(w)
        diff = first_difference(g, w, atol=1e-4, rtol=1e-3)
        if diff:
            return f"the gradient reaching {name} differs from the right one, {diff}"
    return None
