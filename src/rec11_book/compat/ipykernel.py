"""What the build relies on in ipykernel (pinned 7.4.0): what ``python -m ipykernel_launcher``
does, for kernels forked from a process that has imported it already
(``rec11_book.shared.warmkernels``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from rec11_book.compat import lacks_text, reliance

KERNEL_MODULE = "ipykernel_launcher"  # the module of the python3 kernel spec's command: python -m ipykernel_launcher


def _launcher_probe() -> list[str]:
    spec = importlib.util.find_spec(KERNEL_MODULE)
    text = Path(spec.origin).read_text() if spec is not None and spec.origin else ""
    needs = ("del sys.path[0]", "from ipykernel import kernelapp as app", "app.launch_new_instance()")
    if not text:
        return [f"{KERNEL_MODULE} is not installed"]
    return [f"{KERNEL_MODULE}: {n!r}" for n in needs if n not in text]


@reliance(probe=lambda: _launcher_probe() + lacks_text("ipykernel", 'int(os.environ.get("JPY_PARENT_PID") or 0)',
                                                       "launch_new_instance = IPKernelApp.launch_instance"))
def launch_kernel_app(start: bool) -> None:
    """Import ipykernel's application; with ``start``, run a kernel with ``sys.argv`` as a fresh
    ``python -m ipykernel_launcher`` would (``sys.path`` already without the working folder).

    Relies on: ``ipykernel_launcher`` removing the working folder from ``sys.path`` (IPython
    adds ``''`` back) and then only calling ``ipykernel.kernelapp.launch_new_instance()``, and
    ``IPKernelApp`` reading its parent's pid (``JPY_PARENT_PID``) when ``kernelapp`` is
    imported, so that a process that imports it before a fork sets that variable first.
    Package: ipykernel. Checked against: 7.4.0.
    Public alternative: running ``ipykernel_launcher`` itself (``runpy``), which would import
    nothing ahead of the fork, the point of forking.
    """
    from ipykernel import kernelapp

    if start:
        kernelapp.launch_new_instance()


@reliance(probe=lambda: lacks_text("ipykernel", 'if not os.environ.get("MPLBACKEND"):',
                                   'os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"'))
def inline_backend() -> str:
    """The matplotlib backend a kernel's own ``import matplotlib`` reads from ``MPLBACKEND``.

    Relies on: ``IPKernelApp`` setting ``MPLBACKEND`` to matplotlib-inline's backend,
    ``module://matplotlib_inline.backend_inline``, when it starts a kernel whose environment
    does not set it, so that a process importing matplotlib before a fork sets the same value
    first (matplotlib reads it once, on import).
    Package: ipykernel. Checked against: 7.4.0.
    Public alternative: none; a kernel's ``%matplotlib inline`` would choose the same backend,
    but only after matplotlib has been imported in that kernel, the cost forking saves.
    """
    return "module://matplotlib_inline.backend_inline"


def launcher_path() -> str:
    """The file a fresh kernel's ``sys.argv[0]`` names."""
    return importlib.util.find_spec(KERNEL_MODULE).origin
