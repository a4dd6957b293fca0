"""Run the pages side by side before Sphinx reads them, into the cache Sphinx reads.

Jupyter Book executes a page while Sphinx reads it, one page after another, so on two
cores a cold build leaves one core idle for most of its execution. Before the build,
this runs every page the execution cache does not hold yet, ``jobs`` at a time, the way
myst-nb would run it: the same notebook (read from the MyST page with the book's parser
settings, the dependency fingerprint of ``rec11_book.extensions.fingerprints`` in its kernelspec), in
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

from rec11.chapter import toc_pages
from rec11_book.compat.jupyter_cache import execute_notebook
from rec11_book.shared import warmkernels, why
from rec11_book.shared.execution import (
    book_config,
    cache_path,
    course_package,
    kernel_sockets,
    page_notebook,
    parser_config,
    timeout,
)

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


def uncached(cache, page: Path, root: Path, config: dict, md_config):
    """The notebook the execution cache keys ``page`` on (fingerprint included), if the cache
    has no outputs for it; None if it has."""
    nb = page_notebook(page, root, config, md_config)
    try:
        cache.match_cache_notebook(nb)
    except KeyError:
        return nb
    return None


def code_changed(root: Path, out: Path, pages: list[Path]) -> dict[str, dict]:
    """{name: its inputs now} for each of ``pages`` with code whose code reads other inputs than
    at its last run here, or has no record of one (``why``): the quick test before the cache
    is asked, which costs its database and each page's notebook."""
    config = book_config(root)
    last_run, package = why.load(cache_path(root, out, config)), course_package(root, config)
    found = {}
    for page in pages:
        if not page.is_file() or "{code-cell}" not in page.read_text():
            continue
        name, inputs = page.relative_to(root).as_posix(), why.page_inputs(root, page, package)
        if why.differ(last_run.get(name), inputs):
            found[name] = inputs
    return found


def nothing_ran(root: Path, out: Path) -> None:
    """Record that this build ran no page before it: no older build's reasons stay beside the cache."""
    folder = cache_path(root, out)
    why.save(folder, why.load(folder), {})


def run(root: Path, out: Path, jobs: int = 2, log=print) -> dict[str, list[str]]:
    """Execute and cache every page the cache lacks; returns {"ran", "failed", "cached"}."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    config = book_config(root)
    execute = config.get("execute") or {}
    if execute.get("execute_notebooks", "auto") != "cache":
        return {"ran": [], "failed": [], "cached": []}
    seconds = timeout(config)
    md_config = parser_config(config)
    folder = cache_path(root, out, config)
    cache = get_cache(str(folder))
    pages = [root / f"{name}.md" for name in toc_pages(root)]
    todo, cached = [], []
    for page in pages:
        if not page.is_file() or "{code-cell}" not in page.read_text():
            continue
        nb = uncached(cache, page, root, config, md_config)
        if nb is None:
            cached.append(page)
        else:
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

    # a page whose code imports torch or matplotlib gets a kernel forked from a process that
    # imported them once
    warm = {page for page, nb in todo
            if warmkernels.imports_preloaded([cell.source for cell in nb.cells if cell.cell_type == "code"])}

    def execute_one(page: Path, nb, server: str | None):
        because = "; ".join(reasons[page.relative_to(root).as_posix()])
        log(f"{page}: executing ({because}), side by side before the build")
        with kernel_sockets() as sockets:  # two kernels start at once: no shared ports
            client = warmkernels.client_settings(server if page in warm else None, sockets.get("config"))
            return execute_notebook(nb, cwd=str(page.parent), timeout=seconds, **client)

    ran, failed = [], []
    start, forked_before = time.perf_counter(), len(warmkernels.FORKED)
    with quiet_kernels(), warmkernels.fork_server(log, wanted=len(warm) > 1) as server, \
            ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = {pool.submit(execute_one, page, nb, server): (page, nb) for page, nb in todo}
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
    why.save(folder, last_run, reasons)  # this build's reasons, none when nothing ran: never an older build's
    if todo:
        forked = len(warmkernels.FORKED) - forked_before
        log(f"rec11: {len(ran)} page(s) ran {jobs} at a time in {time.perf_counter() - start:.1f} s,"
            f" {len(cached)} already cached; {forked} kernel(s) forked from one that had imported torch and pyplot")
    return {"ran": sorted(ran), "failed": sorted(failed),
            "cached": sorted(p.relative_to(root).as_posix() for p in cached)}
