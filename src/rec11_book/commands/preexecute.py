"""Run the pages side by side before Sphinx reads them, into the cache Sphinx reads.

Jupyter Book executes a page while Sphinx reads it, one page after another, so on two
cores a cold build leaves one core idle for most of its execution. Before the build,
this runs every page the execution cache does not hold yet, ``jobs`` at a time, the way
myst-nb would run it: the same notebook (read from the MyST page with the book's parser
settings, the dependency-fingerprint cell of ``rec11_book.extensions.fingerprints`` appended), in
the page's folder, with the book's timeout. What succeeds goes into jupyter-cache under
the hash myst-nb will look up, so Sphinx finds it there and only renders. A page that
fails is left out of the cache: the build then runs it again itself and reports the
error as it always does, with the page and line. So this can make a build faster, never
different.

Sphinx-side code: no torch here (each page's kernel imports what the page imports).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path

import yaml

from rec11.chapter import toc_pages
from rec11_book.compat.jupyter_cache import execute_notebook
from rec11_book.compat.myst_nb import default_cache_folder
from rec11_book.compat.myst_nb import page_notebook as read_page_notebook
from rec11_book.extensions.fingerprints import PACKAGE_SRC, stamp, with_fingerprint
from rec11_book.shared import why

# What every kernel prints once and no reader needs: ipykernel's note on its local TCP ports.
KERNEL_NOISE = re.compile(r"Kernel is running over TCP without encryption")


@contextmanager
def quiet_kernels():
    """Hold what the kernels print to stderr, and pass on all but ``KERNEL_NOISE`` after."""
    with tempfile.TemporaryFile() as held:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(held.fileno(), 2)  # the kernels inherit file descriptor 2
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            for line in held.read().decode(errors="replace").splitlines():
                if line.strip() and not KERNEL_NOISE.search(line):
                    print(line, file=sys.stderr)


def book_config(root: Path) -> dict:
    return yaml.safe_load((root / "_config.yml").read_text()) or {}


def parser_config(config: dict):
    """The MyST settings myst-nb reads the pages with (``parse:`` in ``_config.yml``)."""
    from myst_parser.config.main import MdParserConfig

    parse = config.get("parse", {}) or {}
    return MdParserConfig(enable_extensions=set(parse.get("myst_enable_extensions", [])))


def page_notebook(root: Path, page: Path, md_config, config: dict | None = None):
    """The notebook myst-nb builds from ``page``, fingerprint cell included."""
    text = page.read_text()
    if "{code-cell}" in text:
        text = with_fingerprint(text, stamp(root, course_package(root, config or {}), text))
    return read_page_notebook(text, md_config, page)


def course_package(root: Path, config: dict) -> Path | None:
    """The course package's sources in the book (``rec11_package_src`` under ``sphinx: config:``,
    as the build reads it; default ``src/rec11``), or None where there are none: the installed
    package is read instead, as ``pages.package_dir`` does inside Sphinx."""
    where = ((config.get("sphinx") or {}).get("config") or {}).get("rec11_package_src") or PACKAGE_SRC
    return root / where if (root / where).is_dir() else None


def cache_path(root: Path, out: Path, config: dict) -> Path:
    """Where myst-nb keeps its cache: ``execute: cache:``, else ``_build/.jupyter_cache``."""
    where = ((config.get("execute") or {}).get("cache") or "").strip()
    return (root / where) if where else default_cache_folder(out / "_build")


def run(root: Path, out: Path, jobs: int = 2, log=print) -> dict[str, list[str]]:
    """Execute and cache every page the cache lacks; returns {"ran", "failed", "cached"}."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    config = book_config(root)
    execute = config.get("execute") or {}
    if execute.get("execute_notebooks", "auto") != "cache":
        return {"ran": [], "failed": [], "cached": []}
    timeout = execute.get("timeout", 30)
    md_config = parser_config(config)
    folder = cache_path(root, out, config)
    cache = get_cache(str(folder))
    pages = [root / f"{name}.md" for name in toc_pages(root)]
    todo, cached = [], []
    for page in pages:
        if not page.is_file() or "{code-cell}" not in page.read_text():
            continue
        nb = page_notebook(root, page, md_config, config)
        try:
            cache.match_cache_notebook(nb)
            cached.append(page)
        except KeyError:
            todo.append((page, nb))
    # the longest first, so that the last page to finish is a short one
    todo.sort(key=lambda item: -len(item[0].read_text()))
    # what each page to run reads now, and why it runs: what differs from its last run
    package = course_package(root, config)
    last_run = why.load(folder)
    inputs, reasons = {}, {}
    for page, _ in todo:
        name = page.relative_to(root).as_posix()
        inputs[name] = why.page_inputs(root, page, package)
        reasons[name] = why.reasons(last_run.get(name), inputs[name])

    def execute_one(page: Path, nb):
        because = "; ".join(reasons[page.relative_to(root).as_posix()])
        log(f"{page}: executing ({because}), side by side before the build")
        return execute_notebook(nb, cwd=str(page.parent), timeout=timeout)

    ran, failed = [], []
    start = time.perf_counter()
    with quiet_kernels(), ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = {pool.submit(execute_one, page, nb): (page, nb) for page, nb in todo}
        for future in as_completed(futures):
            page, nb = futures[future]
            name = page.relative_to(root).as_posix()
            result = future.result()
            if result.err is not None:
                failed.append(name)  # the build runs it again and reports it
                log(f"rec11: {name} failed before the build; the build runs it again to report it")
                continue
            # one thread writes the cache's database
            cache.cache_notebook_bundle(CacheBundleIn(nb, str(page), data={"execution_seconds": result.time}),
                                        check_validity=False, overwrite=True)
            ran.append(name)
            last_run[name] = inputs[name]
            log(f"{page}: Executed notebook in {result.time:.2f} seconds")
    if todo:
        why.save(folder, last_run, reasons)
        log(f"rec11: {len(ran)} page(s) ran {jobs} at a time in {time.perf_counter() - start:.1f} s,"
            f" {len(cached)} already cached")
    return {"ran": sorted(ran), "failed": sorted(failed),
            "cached": sorted(p.relative_to(root).as_posix() for p in cached)}
