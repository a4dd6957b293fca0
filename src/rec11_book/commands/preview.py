"""Preview while editing: save a page, and the browser shows it rebuilt about a second later.

    python -m rec11_book.commands.preview [--book .] [--port 8000] [--host 127.0.0.1]

(``make preview``.) Serves ``_build/html`` at http://HOST:PORT, watches the pages
(``book/``), ``_config.yml``, ``_toc.yml`` and the package (``src/rec11``), and on each
save rebuilds and reloads the open tab. It is the same build as ``make build`` (Jupyter
Book's ``build -W -n --keep-going``, the same execution cache, the same ``_build``), so
switching between the two rebuilds nothing, and a warning is printed but still lets the
page update. Figures are exported to ``figures/`` by ``make build`` only.

A save that changes what a page's code reads (a code cell, the package, ``_config.yml``)
runs the pages that need it side by side before the build, as ``make build`` does, and
prints why each runs ("book/vae.md: executing (the cell at line 120 changed), ...",
``rec11_book.shared.why``). A prose edit skips that check's cost: the saved page's code is
compared with what it read at its last run, and nothing else is looked at.

Why it is quick: a rebuild after a prose edit is a fraction of a second of Sphinx work,
but a fresh ``sphinx-build`` or ``jupyter-book`` process spends seconds importing
Sphinx, myst-nb, the theme and every extension (sphinx-autobuild starts one per save).
This server imports all of that once, at start, and runs each rebuild in a child forked
from itself, so every rebuild starts warm and still gets a clean Sphinx of its own. After
each rebuild it also imports whatever that child had to import (a theme's styles, Sphinx's
builders: about 200 modules), and compiles the CSS-selector and highlighting patterns a
build compiles on first use, so the next child starts with them done.
Reloading the browser is sphinx-autobuild's (its server, file watcher and injected
script; pinned in requirements.txt), used through ``rec11_book.compat.sphinx_autobuild``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import multiprocessing
import os
import sys
import time
from pathlib import Path

from rec11_book.commands.quickstart import block_slow_imports
from rec11_book.compat.sphinx_autobuild import reloading_site

WATCH = ["book", "_config.yml", "_toc.yml", "src/rec11"]
IGNORE = ["_build", ".cache", "figures", ".venv", "node_modules", ".git", "conf.py", ".pytest_cache"]
# Imported once, before the first build, so that each forked rebuild finds them loaded.
WARM = ["sphinx.application", "sphinx.builders.html", "jupyter_book.cli.main", "jupyter_book.sphinx",
        "myst_nb.sphinx_ext", "myst_parser.sphinx_ext.main", "sphinx_book_theme", "pydata_sphinx_theme",
        "sphinx_external_toc", "sphinx_design", "sphinx_copybutton", "sphinx_togglebutton", "sphinx_thebe",
        "sphinx_comments", "sphinx_exercise", "sphinx_multitoc_numbering", "sphinx_jupyterbook_latex",
        "jupyter_cache.cache.main", "nbclient", "bs4", "PIL.Image", "fontTools.subset",
        "rec11_book.shared.why", "rec11_book.commands.preexecute"]


def warm_up(book: Path) -> float:
    """Import what a build needs, the book's own extensions included; return seconds."""
    import yaml

    start = time.perf_counter()
    block_slow_imports()
    config = yaml.safe_load((book / "_config.yml").read_text()) or {}
    extensions = (config.get("sphinx") or {}).get("extra_extensions") or []
    for name in [*WARM, *extensions]:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # not installed here: the build will say so if the book needs it
    return time.perf_counter() - start


def warm_first_use() -> None:
    """Do once, here, what each rebuild would otherwise redo on first use: compile the
    patterns soupsieve (bs4's CSS selectors) and Pygments (the code cells' highlighting)
    build lazily. Public calls only; the compiled patterns live on in every forked child."""
    import soupsieve
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    soupsieve.compile('div#a.b > p:not(.c) + a[href^="x"] ~ span:nth-child(2n+1), li img[alt]')
    for language in ("ipython3", "python", "text"):  # the code cells', the package's, the outputs'
        try:
            highlight("x = [1, 2]  # c\nprint(x)", get_lexer_by_name(language), HtmlFormatter())
        except ClassNotFound:  # a lexer this environment lacks: nothing to warm
            continue


def warm_page_inputs(book: Path) -> None:
    """Read every page's inputs once, so that the first save's check (``code_edits``) finds the
    package's modules parsed already: ``why`` keeps them while their files stay the same. A page
    that cannot be read here is left to that check, which says what is wrong with it."""
    from rec11_book.shared import why
    from rec11_book.shared.execution import book_config, course_package

    package = course_package(book, book_config(book))
    for page in sorted((book / "book").rglob("*.md")):
        try:
            if "{code-cell}" in page.read_text():
                why.page_inputs(book, page, package)
        except Exception:  # noqa: BLE001 - only a head start; the save's own check reports it
            continue


def import_quietly(names: list[str]) -> int:
    """Import ``names`` (what the last rebuild's child imported); return how many loaded.
    A name that fails to import is skipped: the next child imports it, as before. The book's
    own code (``rec11``, ``rec11_book``) is left to each child: it is what an instructor edits
    while the preview runs, and a module imported here would stay as it was at that moment."""
    loaded = 0
    for name in names:
        if name in sys.modules or name == "__main__" or name.split(".")[0] in ("rec11", "rec11_book"):
            continue
        try:
            importlib.import_module(name)
            loaded += 1
        except Exception:  # noqa: BLE001 - e.g. a module the blocked imports refuse
            continue
    return loaded


def code_edits(book: Path, changed: list[Path]) -> bool:
    """Whether a save may ask pages to run again: anything saved outside ``book/`` (the package,
    ``_config.yml``, ``_toc.yml``), or a page whose code the execution cache has no outputs
    for. A prose edit is neither. Quick test first: the page's code as it read at its last run
    (``why``); only where that differs (or was never kept: a page the build itself ran) is the
    cache asked, as ``preexecute`` asks it, and a page it holds is recorded as run."""
    from jupyter_cache import get_cache

    from rec11_book.commands.preexecute import code_changed, uncached
    from rec11_book.shared import why
    from rec11_book.shared.execution import book_config, cache_path, parser_config

    pages = [Path(p) for p in changed if Path(p).suffix == ".md" and Path(p).is_relative_to(book / "book")]
    if len(pages) < len(changed):
        return True
    config = book_config(book)
    folder = cache_path(book, book, config)
    for name, inputs in code_changed(book, book, pages).items():
        if uncached(get_cache(str(folder)), book / name, book, config, parser_config(config)) is not None:
            return True
        why.remember(folder, name, inputs)  # the cache's outputs are of this code: the next save is quick
    return False


def rebuild(book: str, ahead: bool = False, imported=None) -> int:
    """One build, as ``make build`` runs it (without the figure export); in a forked child.
    ``ahead``: first run the pages the cache lacks side by side, saying why each runs.
    ``imported``: a pipe's end, sent the names of the modules this build had to import."""
    from jupyter_book.cli.main import main as jupyter_book

    before = set(sys.modules)

    start = time.perf_counter()
    if ahead:
        from rec11_book.commands import preexecute

        preexecute.run(Path(book), Path(book), log=lambda line: print(f"preview: {line}", flush=True))
    try:
        jupyter_book(["build", book, "-W", "-n", "--keep-going", "--quiet"], standalone_mode=False)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except Exception as err:  # noqa: BLE001 - a broken page must not stop the preview
        print(f"preview: the build failed: {err}", file=sys.stderr)
        code = 1
    print(f"preview: rebuilt in {time.perf_counter() - start:.1f} s"
          + ("" if code == 0 else " (with warnings or errors above)"), flush=True)
    if imported is not None:
        imported.send(sorted(set(sys.modules) - before))
        imported.close()
    return code


class Rebuilder:
    """sphinx-autobuild's change callback: rebuild in a child forked from this warm process."""

    def __init__(self, book: Path):
        self.book = str(book)
        self.fork = multiprocessing.get_context("fork")

    def __call__(self, *, changed_paths=()):
        if changed_paths:
            names = ", ".join(str(Path(p).relative_to(self.book)) if str(p).startswith(self.book) else str(p)
                              for p in list(changed_paths)[:3])
            print(f"preview: changed {names}", flush=True)
        # the first build, and any save that changes what a page's code reads, runs pages ahead
        ahead = not changed_paths or code_edits(Path(self.book), [Path(p) for p in changed_paths])
        # the warm modules' objects go to the collector's permanent generation: the child's
        # collections then skip them, and do not copy every page of memory they sit on
        gc.collect()
        gc.freeze()
        receive, send = self.fork.Pipe(duplex=False)
        child = self.fork.Process(target=rebuild, args=(self.book, ahead, send))
        child.start()
        send.close()
        try:
            learned = receive.recv()  # the child's imports, sent as it ends
        except EOFError:
            learned = []  # it died before sending: nothing learned this time
        child.join()
        receive.close()
        # after the build, so the save that started it waits for none of this
        import_quietly(learned)
        if not changed_paths:
            warm_page_inputs(Path(self.book))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=Path("."))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-initial-build", action="store_true")
    args = parser.parse_args(argv)
    book = args.book.resolve()
    if "fork" not in multiprocessing.get_all_start_methods():
        print("rec11 preview: this system cannot fork a process (Windows), which the preview's fast"
              " rebuilds need. Instead: run `make build` after each edit and open"
              " _build/html/index.html, or use WSL, Linux or macOS.", file=sys.stderr)
        return 2
    os.chdir(book)

    import uvicorn

    print(f"preview: imported Sphinx and the book's extensions in {warm_up(book):.1f} s", flush=True)
    warm_first_use()
    rebuilder = Rebuilder(book)
    html = book / "_build" / "html"
    html.mkdir(parents=True, exist_ok=True)
    if not args.no_initial_build:
        rebuilder()
    watch = [book / p for p in WATCH if (book / p).exists()]

    def pages_of(paths: list[Path]) -> list[Path]:
        """The pages a save rewrote: the tab reloads as soon as they are written again, and the
        rest of the build (slide deck, notebook downloads) finishes behind it."""
        return [html / p.relative_to(book).with_suffix(".html") for p in paths
                if p.suffix == ".md" and p.is_relative_to(book / "book")]

    url_host = f"{args.host}:{args.port}"
    app = reloading_site(html, watch, [str(book / p) for p in IGNORE],
                         [r".*\.swp$", r".*~$", r".*\.#.*", r".*/\.ipynb_checkpoints/.*"],
                         rebuilder, pages_of, url_host)
    print(f"preview: serving http://{url_host}/ ; watching {', '.join(WATCH)} (Ctrl+C stops)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
