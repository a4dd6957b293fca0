"""Build the book strictly, then export its figures.

    python -m rec11_book.commands.build [--book DIR] [--out DIR] [--figures DIR]

First trains every model the pages will ask for, two at a time on two cores
(``rec11.models``, one training thread each), then runs the pages the execution cache
lacks, two at a time, into that cache (``rec11_book.commands.preexecute``). Then runs
``jupyter-book build`` with warnings as errors (``-W``), nitpicky references
(``-n``) and ``--keep-going`` so that one run lists every problem, each with its
file and line. Execution errors stop the build too (``nb_execution_raise_on_error``
in ``_config.yml``). Afterwards every named figure is written to the figures folder
as SVG and PNG, and a one-line summary says how many pages executed and how many
came from the cache. A model trained while the pages ran (one that ``rec11.models``
does not list) is named, so it can be added there.

A build that finds everything as the last passing build left it (``unchanged``) stops there:
that build's checks hold for the same inputs, and Sphinx would read nothing and write nothing.
One that finds only prose changed since (``pages_may_run``) skips the pages-ahead step, which
would look up every page in the cache to run none.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import NamedTuple

from rec11.chapter import load_substitutions, toc_pages
from rec11.models import MODULES, stamp, stamp_modules
from rec11_book.commands import preexecute
from rec11_book.compat.jsonschema import block_optional_imports
from rec11_book.compat.myst_nb import cell_failure
from rec11_book.compat.nbclient import cell_source_header
from rec11_book.compat.nbclient import failed_cells as failed_cells_in
from rec11_book.compat.pyzmq import kernel_shutdown_error
from rec11_book.compat.sphinx import logged_warnings
from rec11_book.extensions import executions
from rec11_book.shared import why
from rec11_book.shared.execution import book_config, built_commit, cache_path, course_package, package_hash
from rec11_book.shared.figures import FigureError, publish
from rec11_book.shared.pagefacts import page_modules
from rec11_book.shared.pages import FAILED_PAGES, QUIET_TRAINING


def jupyter_book() -> list[str]:
    """Jupyter Book's command line, without the waits that are not the book's (rec11_book.commands.quickstart)."""
    return [sys.executable, "-m", "rec11_book.commands.quickstart"]


def model_modules(book: Path) -> list[str]:
    """The ``rec11`` model modules the book's pages import: whose models to train first."""
    imported = set()
    for page in (book / "book").rglob("*.md") if (book / "book").is_dir() else ():
        imported |= page_modules(page.read_text())
    return [m for m in MODULES if m in imported]


def models_ready(book: Path, modules: list[str]) -> bool:
    """Whether every model of ``modules`` is in the book's model cache for this code, seed and
    threads: ``rec11.models``'s stamp, read here without starting a Python or importing torch."""
    with contextlib.chdir(book):  # the model cache is the book's (rec11.sources.cache_dir)
        # the code hash kept per state of the package (shared.execution): no module parsed twice
        code = package_hash(book, stamp_modules(modules), course_package(book, book_config(book)))
        return stamp(modules, code).is_file()


def train_models(book: Path) -> int:
    """Train the pages' models side by side (``python -m rec11.models``) before the pages run."""
    modules = model_modules(book)
    if not modules or models_ready(book, modules):
        return 0
    env = {**os.environ, QUIET_TRAINING: "1"}
    return subprocess.run([sys.executable, "-m", "rec11.models", "--modules", *modules], check=False, cwd=book,
                          env=env).returncode


# Lines a build prints that tell a reader nothing: a kernel's note on its local ports,
# Jupyter Book copying its own sources over themselves, and Sphinx's invitation to report
# a bug for what is a page's error (rec11's own summary names the page and line).
NOISE = re.compile(r"Kernel is running over TCP without encryption|will overwrite data|"
                   r"Please also report this if it was a user error|A bug report can be filed|"
                   r"github\.com/sphinx-doc/sphinx/issues")


ANSI = re.compile(r"\x1b\[[0-9;]*m")

# A kernel that is shut down while it still answers its control channel (nbclient stops it after
# a failing cell) can log an error of its own, with a traceback (kernel_shutdown_error). Under
# load it reached a reader beside the page's own traceback (a fresh-clone test run of 527fe0d,
# two copies side by side). It says nothing about the page, so the block is dropped: its first
# line, then its traceback's lines, up to and including the exception's own line.
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b")

# The log text read below is the tools' (their warnings and a failing cell's report), read
# through rec11_book.compat: Sphinx's warning lines, myst-nb's "Executing notebook failed",
# nbclient's report of the cell. The summary of which pages ran reads no log (executions).


def readable(lines):
    """The build's lines without ``NOISE``, without a kernel's own error as it is shut down
    (``kernel_shutdown_error``), and without the frames of the execution machinery
    that precede a failing cell's own traceback (which stays, once): myst-nb's warning prints
    nbclient's own frames (jupyter-cache, asyncio, nbclient) before the cell's source and
    traceback, and those frames say nothing about the page."""
    machinery = kernel_error = False
    for line in lines:
        plain = ANSI.sub("", line)
        if kernel_error:
            if plain.startswith(("Traceback (most recent call last)", " ", "\t")):
                continue
            kernel_error = False
            if EXCEPTION_LINE.match(plain):
                continue  # the block's last line
        if kernel_shutdown_error(plain):
            kernel_error = True
            continue
        if machinery:
            header = cell_source_header(line, plain)
            if header is None:
                continue
            machinery = False
            line = header
        elif cell_failure(plain):
            machinery = True
        if not NOISE.search(line):
            yield line


def build(book: Path, out: Path, extra: tuple[str, ...] = (), training_log: Path | None = None) -> tuple[int, str]:
    """Run the strict build; return (exit code, everything it printed but ``readable`` drops)."""
    cmd = [*jupyter_book(), "build", str(book), "--path-output", str(out), "-W", "-n", "--keep-going", *extra]
    env = {**os.environ, **({"REC11_TRAINING_LOG": str(training_log)} if training_log else {})}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    for line in readable(proc.stdout):  # stream, so a long build shows progress
        sys.stdout.write(line)
        lines.append(line)
    return proc.wait(), "".join(lines)


def warnings(log: str) -> list[str]:
    """``file:line: message`` for each Sphinx warning or error the build printed, once each, in
    order (a cell's failure is left to ``failed_cells``, which finds its line in the page)."""
    found = []
    for where, message in logged_warnings(ANSI.sub("", log)):
        if cell_failure(message):
            continue
        text = f"{where}: {message}" if where else message
        if text not in found:
            found.append(text)
    return found


def pages_named(problems: list[str], book: Path) -> set[str]:
    """The docnames of the pages ``file:line: message`` problems name (for the next build to
    read again)."""
    names = set()
    for problem in problems:
        path = Path(problem.split(":", 1)[0]).resolve()
        if path.suffix == ".md" and path.is_relative_to(book):
            names.add(path.relative_to(book).with_suffix("").as_posix())
    return names


def failed_cells(log: str) -> list[str]:
    """``file:line: error`` for each cell that raised, with the line of the page it is on.

    nbclient reports the failing cell's source and the line within the cell; this
    finds that cell in the markdown page, so the message points at the page's line.
    """
    messages = []
    for path, source, trace in failed_cells_in(ANSI.sub("", log)):
        path = Path(path)
        errors = re.findall(r"^(\w+(?:Error|Exception|Interrupt)\b.*)$", trace, re.M)
        in_cell = re.search(r"line (\d+)", trace)
        line = "?"
        if path.is_file() and source.strip():
            text = path.read_text()
            at = text.find(source.strip())  # the whole cell: a first line alone may repeat
            at = at if at >= 0 else text.find(source.strip().splitlines()[0])
            if at >= 0:
                line = text.count("\n", 0, at) + (int(in_cell[1]) if in_cell else 1)
        messages.append(f"{path}:{line}: a code cell raised {errors[-1] if errors else 'an error'}")
    return messages


# what the last passing build read and wrote, in its doctrees folder (``unchanged``)
LAST_PASSED = "last-passing-build.json"
# not inputs: Python's bytecode, tools' caches, the retraining runs' work, version control
NOT_READ = {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis",
            "mutants", os.path.join(".cache", "robustness")}
# set by this command itself, before the pages run
OWN_SETTINGS = {"REC11_TRAINING_LOG", QUIET_TRAINING}


class State(NamedTuple):
    """What a build starts from (``build_state``)."""

    whole: str  # a digest of everything: equal means a build would start where the last one ended
    besides_pages: str  # the same digest without the book's markdown files
    pages: dict[str, str]  # each markdown file of the book: its size and modification time


def build_state(book: Path, out: Path, figures: Path, environ: dict) -> State:
    """A digest of everything a build reads and writes: every file under the book's folder, the
    output folder and the figures (path, size, modification time; not bytecode or tools' caches),
    the npm install's stamp, the execution cache wherever ``_config.yml`` puts it, the installed
    packages (their folder changes when one is added or removed), the commit, this Python and
    the ``REC11_*`` settings. Two equal digests mean a build would start from the same state.
    The book's markdown files (not the site's copies of them) are also kept apart, for
    ``pages_may_run``."""
    roots = {book.resolve(), out.resolve(), figures.resolve(), cache_path(book, out).resolve()}
    site = (out / "_build").resolve()
    seen, pages = [], {}
    for root in sorted(r for r in roots if not any(other in r.parents for other in roots)):  # each file once
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in NOT_READ
                             and os.path.relpath(os.path.join(folder, d), root) not in NOT_READ)
            in_site = Path(folder) == site or site in Path(folder).parents
            for name in sorted(files):
                path = os.path.join(folder, name)
                if name in (LAST_PASSED, executions.RECORD):  # what the last build did, not what it read
                    continue
                with contextlib.suppress(OSError):
                    st = os.stat(path)
                    if name.endswith(".md") and not in_site:
                        pages[path] = f"{st.st_size}:{st.st_mtime_ns}"
                    else:
                        seen.append(f"{path}\0{st.st_size}\0{st.st_mtime_ns}")
    for path in (book / "node_modules" / ".installed", Path(sysconfig.get_paths()["purelib"])):
        with contextlib.suppress(OSError):
            seen.append(f"{path.resolve()}\0{path.stat().st_mtime_ns}")
    settings = sorted((k, v) for k, v in environ.items()
                      if (k.startswith("REC11_") or k == "GITHUB_SHA") and k not in OWN_SETTINGS)
    seen += [built_commit(book, ""), sys.executable, json.dumps(settings)]
    besides_pages = hashlib.sha256("\n".join(seen).encode()).hexdigest()
    whole = hashlib.sha256("\n".join([besides_pages, *(f"{p}\0{s}" for p, s in pages.items())]).encode())
    return State(whole.hexdigest(), besides_pages, pages)


def last_passed(out: Path) -> dict:
    """What the last build into ``out`` recorded when it passed: its ``state`` (``State.whole``),
    ``besides_pages`` and ``pages``; {} if it did not pass, or left no record this can read."""
    with contextlib.suppress(OSError, ValueError):
        record = json.loads((out / "_build" / ".doctrees" / LAST_PASSED).read_text())
        return record if isinstance(record, dict) else {}
    return {}


def unchanged(out: Path, state: State) -> bool:
    """Whether the last build into ``out`` passed and left everything as ``state`` finds it."""
    return last_passed(out).get("state") == state.whole


def pages_may_run(book: Path, out: Path, state: State, last: dict) -> bool:
    """Whether the pages-ahead step (``preexecute.run``, 2 s to find that no page needs to run)
    may find a page to run. Not when only markdown files changed since the last build passed
    (every page with code was then in the execution cache, which has not changed since) and no
    page with code among them reads other code than at its last run (``why``). A page whose
    code draws the session plan reads every page's instructor notes, so it is asked too. A
    wrong answer costs time, never a different page: Sphinx runs a page the cache lacks."""
    if last.get("besides_pages") != state.besides_pages:
        return True
    edited = {Path(path) for path, stat in state.pages.items() if last.get("pages", {}).get(path) != stat}
    if not edited:
        return False
    root = book.resolve()
    with_code = [root / f"{name}.md" for name in toc_pages(root)]
    planned = {root / name for name, inputs in why.load(cache_path(root, out.resolve())).items() if inputs.get("notes")}
    return bool(preexecute.code_changed(root, out.resolve(), [p for p in with_code if p in edited or p in planned]))


def remove_stale_handouts(book: Path, html: Path) -> list[Path]:
    """Delete the handout PDFs (``make handout``'s) that are older than a page the build wrote,
    so that ``_build/html`` never offers a PDF of pages that have changed since."""
    name = str(load_substitutions(book).get("handout", ""))
    if not name.endswith(".pdf") or not html.is_dir():
        return []
    pdfs = [p for p in (html / name, html / f"{name[:-4]}-instructor.pdf") if p.is_file()]
    newest = max((p.stat().st_mtime for p in (html / "book").rglob("*.html")), default=0)  # the pages
    stale = [p for p in pdfs if p.stat().st_mtime < newest]
    for pdf in stale:
        pdf.unlink()
    return stale


def foreign_package(book: Path) -> str | None:
    """Why this build would run another checkout's code, or None.

    In a checkout (``pyproject.toml`` and ``src/`` beside the pages), ``rec11`` and
    ``rec11_book`` must be imported from that ``src/``. A ``.venv`` copied or moved from
    another checkout keeps editable installs that point back there, and would build the
    pages with that code.
    """
    import rec11
    import rec11_book

    if not (book / "pyproject.toml").is_file():
        return None
    for package in (rec11, rec11_book):
        local = (book / "src" / package.__name__).resolve()
        imported = Path(package.__file__).resolve().parent
        if local.is_dir() and imported != local:
            return (f"rec11: this build would run {package.__name__} from {imported}, not from this"
                    f" checkout's {local} (the .venv was made in another folder). Fix: rm -rf .venv,"
                    " then make build again.")
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=Path("."), help="folder with _config.yml and _toc.yml")
    parser.add_argument("--out", type=Path, default=None, help="build output root (default: the book folder)")
    parser.add_argument("--figures", type=Path, default=None, help="figure export folder (default: BOOK/figures)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="pages run side by side before the build (default: 2, or 1 on one core)")
    args = parser.parse_args(argv)
    # jupyter-cache, which the pages-ahead step imports, imports jsonschema: 1.8 s of grammars
    # for format checks nothing here runs (the Sphinx child blocks them too: commands.quickstart)
    block_optional_imports()
    problem = foreign_package(args.book.resolve())
    if problem:
        print(problem, file=sys.stderr)
        return 1
    out = args.out or args.book
    figures = args.figures or args.book / "figures"
    start = time.perf_counter()
    environ = dict(os.environ)  # before this command sets its own
    state = build_state(args.book, out, figures, environ)
    if unchanged(out, state):
        executions.forget(out / "_build" / ".doctrees")  # this build ran no page
        print(f"rec11: nothing changed since the last build passed (pages, code, settings, caches and"
              f" the site are as it left them); {time.perf_counter() - start:.1f} s")
        return 0
    last = last_passed(out)  # read before it goes: pages_may_run compares with it
    record = out / "_build" / ".doctrees" / LAST_PASSED
    record.unlink(missing_ok=True)
    if train_models(args.book) != 0:
        print("rec11: training the pages' models FAILED (python -m rec11.models); see above", file=sys.stderr)
        return 1
    training_log = out / "_build" / "models-trained-by-pages.jsonl"
    training_log.unlink(missing_ok=True)
    training_log.parent.mkdir(parents=True, exist_ok=True)
    # the pages' kernels inherit both, before the build as in it (rec11_book.extensions.notebooks)
    os.environ["REC11_TRAINING_LOG"] = str(training_log)
    os.environ.setdefault(QUIET_TRAINING, "1")
    ahead_log: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        ahead_log.append(line)

    doctrees = out / "_build" / ".doctrees"
    executions.forget(doctrees)
    if pages_may_run(args.book, out, state, last):
        ahead = preexecute.run(args.book.resolve(), out.resolve(), jobs=args.jobs, log=say)
    else:
        say("rec11: only prose changed since the last build passed; no page runs before the build")
        preexecute.nothing_ran(args.book.resolve(), out.resolve())
        ahead = {"ran": [], "failed": [], "cached": []}
    code, log = build(args.book, out, training_log=training_log)
    log = "\n".join(ahead_log) + "\n" + log
    # the pages run before Sphinx, as docnames; Sphinx then found them in the cache
    executions.add_ahead(doctrees, [Path(name).with_suffix("").as_posix() for name in ahead["ran"]])
    if training_log.is_file():
        names = [json.loads(line)["name"] for line in training_log.read_text().splitlines()]
        print(f"rec11: {len(names)} model(s) trained one at a time while the pages ran ({', '.join(names)}):"
              " list them in rec11.models.book_models to train them side by side first")
    summary = executions.summary(doctrees)
    seconds = time.perf_counter() - start
    print(
        f"\nrec11: {len(summary['executed'])} page(s) executed {summary['executed']} "
        f"({len(ahead['ran'])} of them side by side before the build), "
        f"{len(summary['cached'])} from the cache; {seconds:.1f} s"
    )
    failed = doctrees / FAILED_PAGES
    if code != 0:
        problems = failed_cells(log) + warnings(log)
        failed.parent.mkdir(parents=True, exist_ok=True)
        failed.write_text("\n".join(sorted(pages_named(problems, args.book.resolve()))) + "\n")
        for message in problems:
            print(f"rec11: {message}", file=sys.stderr)
        reports = out / "_build" / "html" / "reports"
        if reports.is_dir():
            print(f"rec11: the execution reports are in {reports}", file=sys.stderr)
        first = problems[0] if problems else f"exit {code}; see the output above"
        more = f" ({len(problems) - 1} more above)" if len(problems) > 1 else ""
        print(f"rec11: the build FAILED{more}: {first}", file=sys.stderr)  # the last line: where, and the fix
        return code
    try:
        written = publish(out / "_build", figures)
    except FigureError as err:
        failed.parent.mkdir(parents=True, exist_ok=True)
        failed.write_text("\n".join(sorted(pages_named([str(err)], args.book.resolve()))) + "\n")
        print(f"rec11: the build FAILED: {err}", file=sys.stderr)
        return 1
    failed.unlink(missing_ok=True)
    print(f"rec11: exported {len(written)} figure files to {figures}")
    stale = remove_stale_handouts(args.book, out / "_build" / "html")
    if stale:
        print(f"rec11: removed {', '.join(p.name for p in stale)}, older than the pages; "
              "make handout prints them again")
    state = build_state(args.book, out, figures, environ)
    # "state" as before the pages were kept apart: an older checkout reads this record too
    record.write_text(json.dumps({"state": state.whole, "besides_pages": state.besides_pages, "pages": state.pages}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
