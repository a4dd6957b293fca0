"""Build a book inside the test's own process, as ``make build`` builds it, and keep
the Sphinx application for the test to read.

``build(book)`` runs Jupyter Book's own ``build`` command (``-W -n --keep-going``),
the one ``rec11_book.commands.build`` starts in a subprocess, only without the figure export.
The page's cells still run in kernels of their own (myst-nb and jupyter-cache start
them); what the test saves is a Python start per build (Sphinx, myst-nb, the theme,
every extension imported again: several seconds each), so a test can rebuild a
small book many times.

A build leaves state behind in its process, and a second build in the same process
must start as a fresh ``make build`` would. So each build runs inside ``isolated()``:
docutils' directives, roles and nodes go back to what they were (Jupyter Book's own
``docutils_namespace`` does that), and so do

* Sphinx's default config values: the themes append their folders to the default
  ``templates_path`` list itself, so without this every later build in the process
  has a longer ``templates_path``, a new config hash, and writes every page again:
  exactly what would hide a page that a rebuild fails to write;
* the environment variables (``rec11_book.extensions.notebooks`` sets one for its kernels),
  ``sys.path``, the working folder, and the ``sphinx`` logger (each build points it
  at its own streams and stops it propagating);
* module attributes an extension replaces (``rec11_book.commands.quickstart`` narrows
  sphinx-external-toc's file walk to the first book it sees).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Module attributes that an extension replaces for the rest of its process.
PATCHED = [("sphinx_external_toc.events", "glob")]

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# The pages Sphinx reads and writes, as it logs them (which pages ran or came from the
# cache: the build's own record, rec11_book.extensions.executions).
READ = re.compile(r"^reading sources\.\.\. \[\s*\d+%\] (\S+)$", re.M)
WRITTEN = re.compile(r"^writing output\.\.\. \[\s*\d+%\] (\S+)$", re.M)


@dataclass
class Build:
    """One build: its exit code, everything it printed (no colours), and its Sphinx
    application. Pages are named by docname, ``book/page``."""

    code: int
    log: str
    app: object | None = field(repr=False)

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def read(self) -> set[str]:
        """The pages this build read (again)."""
        return set(READ.findall(self.log))

    @property
    def written(self) -> set[str]:
        """The pages whose HTML this build wrote."""
        return set(WRITTEN.findall(self.log))

    def _docnames(self, kind: str) -> set[str]:
        from rec11_book.extensions import executions

        return set(executions.summary(Path(self.app.doctreedir))[kind])

    @property
    def executed(self) -> set[str]:
        """The pages whose cells ran in a kernel."""
        return self._docnames("executed")

    @property
    def cached(self) -> set[str]:
        """The pages read again whose outputs came from the jupyter cache."""
        return self._docnames("cached")

    def tail(self, chars: int = 4000) -> str:
        return self.log[-chars:]


@contextlib.contextmanager
def isolated():
    """Put back the process state a Sphinx build changes."""
    import importlib
    import logging

    from sphinx.config import Config

    environ, path, cwd = dict(os.environ), list(sys.path), os.getcwd()
    logger = logging.getLogger("sphinx")
    logged = logger.level, logger.propagate, list(logger.handlers)
    defaults = {name: copy.deepcopy(opt.default) for name, opt in Config.config_values.items()
                if isinstance(opt.default, (list, dict, set))}
    saved = []
    for module, name in PATCHED:
        with contextlib.suppress(ImportError):
            mod = importlib.import_module(module)
            saved.append((mod, name, getattr(mod, name)))
    try:
        yield
    finally:
        for name, value in defaults.items():  # in place: the same objects, their old contents
            default = Config.config_values[name].default
            if default != value:
                default.clear()
                (default.extend if isinstance(default, list) else default.update)(value)
        for mod, name, value in saved:
            setattr(mod, name, value)
        logger.setLevel(logged[0])
        logger.propagate, logger.handlers[:] = logged[1], logged[2]
        os.chdir(cwd)
        sys.path[:] = path
        os.environ.clear()
        os.environ.update(environ)


def build(book: Path, out: Path | None = None) -> Build:
    """``jupyter-book build BOOK --path-output OUT -W -n --keep-going``, in this process.

    Returns the exit code, the log (Sphinx's status and warnings, Jupyter Book's
    messages) and the Sphinx application, whose environment the test may read.
    """
    import jupyter_book.sphinx as jb_sphinx
    from jupyter_book.cli.main import main as jupyter_book

    made = []

    class Recorded(jb_sphinx.Sphinx):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    log = io.StringIO()
    argv = ["build", str(book), "--path-output", str(out or book), "-W", "-n", "--keep-going"]
    with isolated(), contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        original, jb_sphinx.Sphinx = jb_sphinx.Sphinx, Recorded
        try:
            jupyter_book(argv, standalone_mode=False)
            code = 0
        except SystemExit as done:  # Jupyter Book exits with Sphinx's status on warnings
            code = done.code if isinstance(done.code, int) else 1
        except Exception as err:  # noqa: BLE001 - an exception in the build: Jupyter Book raises after printing it
            print(f"{type(err).__name__}: {err}", file=log)
            code = 1
        finally:
            jb_sphinx.Sphinx = original
    return Build(code, ANSI.sub("", log.getvalue()), made[-1] if made else None)


def text(html: Path) -> str:
    """A written page's text, tags removed and spaces collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.read_text()))


def budget_notes(attention: float) -> str:
    """Four notes, one per block of the real _config.yml's budget (42, 10, 26, 5; slack 3), each
    after its slide's content; ``attention`` minutes for the first."""
    return "".join(f":::{{slide}}\nSlide {block}.\n:::\n\n:::{{instructor-note}}\n:slide: {block.title()}\n"
                   f":minutes: {minutes:g}\n:block: {block}\n\nSay it.\n:::\n\n"
                   for block, minutes in [("attention", attention), ("generation", 10), ("generative", 26),
                                          ("close", 5)])
