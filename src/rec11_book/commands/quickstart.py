"""Start a build without the waits that have nothing to do with the book.

A prose edit rebuilds one page in well under a second; before this module, the build
spent most of its 8-12 s getting started (profiled with cProfile and ``-X importtime``):

1. **An import that compiles 39 grammars.** Jupyter Book imports ``jsonschema`` for its
   ``_config.yml`` schema, and ``jsonschema`` imports the optional ``rfc3987_syntax``
   package when it is installed, which builds 39 Lark parsers at import: about 2 s,
   every build. It only serves the ``iri`` formats of a *format checker*, and Jupyter
   Book validates without one, so ``python -m rec11_book.commands.quickstart`` (Jupyter Book's
   own command line, otherwise unchanged) runs with that import made to fail, as if the
   package were not installed. ``rec11_book.commands.build`` and the preview start this way.
2. **A walk through node_modules and .venv.** ``sphinx-external-toc`` (with
   ``only_build_toc_files``) globs ``**/*.md``, ``**/*.ipynb`` ... through the whole
   book folder, ``node_modules`` and ``.venv`` included (tens of thousands of entries,
   about 0.9 s), to exclude every file the toc does not list. The Sphinx extension
   ``rec11_book.extensions.tocwalk`` makes that walk skip folders that ``exclude_patterns``
   already excludes: files in them are dropped either way, so the result is the same.
3. **The interpreter's teardown.** Once the build has returned, Python spent 1.5 to 2 s
   (on a busy machine) freeing what the build held (the environment's documents, Sphinx's
   and the theme's modules) one object at a time: more than writing a changed page takes. Every
   file the build wrote is closed by then. ``python -m rec11_book.commands.quickstart``
   runs Python's exit handlers (``atexit``: logging, temporary folders, ...) as usual,
   then leaves without the teardown (``_leave_without_teardown``).
4. **Python's cyclic garbage collector, every 700 objects.** A build allocates a few
   hundred thousand long-lived objects (modules, the pickled environment), and with
   Python 3.11's default thresholds the collector ran about 600 times in a prose edit,
   five of them over everything, for about a sixth of the process's time. Collecting
   every ``GC_THRESHOLDS[0]`` new objects instead runs it a few dozen times, none of
   them full. Garbage waits longer between runs: a build of every page peaked at
   165 MiB instead of 161.

None of these imports torch or any model code.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

from rec11_book.compat.jsonschema import block_optional_imports
from rec11_book.compat.jupyter_book import reraised


def block_slow_imports() -> None:
    """Make ``jsonschema``'s slow optional import fail, as if its package were not installed."""
    block_optional_imports()


GC_THRESHOLDS = (10_000, 10, 10)  # Python's defaults: (700, 10, 10)


def main(argv: list[str] | None = None) -> int:
    """``jupyter-book ARGS``, started without the slow imports."""
    block_slow_imports()
    gc.set_threshold(*GC_THRESHOLDS)
    from jupyter_book.cli.main import main as jupyter_book

    sys.argv = ["jupyter-book", *(sys.argv[1:] if argv is None else argv)]
    try:
        jupyter_book()
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except RuntimeError as err:
        if not reraised(err):
            raise
        # Sphinx has printed the exception and where its traceback is saved; Jupyter Book's
        # re-raise would print the whole chain again: a failing cell's traceback twice
        print("jupyter-book: the build stopped on the error above", file=sys.stderr)
        return 1
    return 0


_exit_code: list[int] = []  # main()'s code, once it has returned


def _leave_without_teardown() -> None:
    """The last exit handler: flush the output and end the process with main()'s code. Registered
    before main() runs, so every handler registered during the build runs before it (atexit
    runs handlers last-registered first). If main() raised, Python exits its own way."""
    if not _exit_code:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader went away: Python exits with 120 when it cannot flush
        os._exit(120)
    os._exit(_exit_code[0])


if __name__ == "__main__":
    atexit.register(_leave_without_teardown)
    _exit_code.append(main())
    sys.exit(_exit_code[0])
