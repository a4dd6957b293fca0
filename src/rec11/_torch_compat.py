"""The course code's one use of a private torch function, and why a student's kernel needs it.

The course code imports nothing of the book's build, so this module keeps the build's form
(``rec11_book.compat``): each function's docstring ends with what it relies on, the package
and version it was checked against, and the public alternative, and :data:`RELIANCES` names
its probe. The build's table of reliances (docs/architecture.md) reads it from here, and
``tests/unit/test_compat.py`` runs the probe against the installed torch.
"""

from __future__ import annotations


def deterministic_algorithms() -> None:
    """Make torch use deterministic algorithms (or raise where it has none), as
    ``torch.use_deterministic_algorithms(True)`` does, without its other job.

    Why a student's kernel needs it: every page calls ``rec11.style.setup_page()`` first, and
    the public function also sets ``torch._inductor.config.deterministic``, which imports
    torch's compiler: one to two seconds before a kernel's first cell runs (torch 2.13 on a
    2-core machine), on every page, for a flag nothing in the book reads (no page compiles).
    Training code, which builds an optimiser and so imports the compiler anyway, calls the
    public function.

    Relies on: ``torch._C._set_deterministic_algorithms(mode)``, the call that
    ``torch.use_deterministic_algorithms`` makes after setting the compiler's flag; the
    switch ``torch.are_deterministic_algorithms_enabled()`` then reports.
    Package: torch. Checked against: 2.13.0.
    Public alternative: ``torch.use_deterministic_algorithms(True)`` (``warn_only=True`` too
    imports the compiler), a second or two slower to start each page's kernel.
    """
    import torch

    torch._C._set_deterministic_algorithms(True)


def _probe_deterministic_algorithms() -> list[str]:
    import inspect

    import torch

    missing = [] if callable(getattr(torch._C, "_set_deterministic_algorithms", None)) else [
        "torch._C._set_deterministic_algorithms"]
    source = inspect.getsource(torch.use_deterministic_algorithms)
    if "_C._set_deterministic_algorithms(mode" not in source:
        missing.append("torch.use_deterministic_algorithms calls _C._set_deterministic_algorithms(mode, ...)")
    return missing


# {function: its probe}, for rec11_book.compat's table and tests/unit/test_compat.py
RELIANCES = {deterministic_algorithms: _probe_deterministic_algorithms}
