"""Run pages' code cells outside Sphinx, timing each cell and watching the kernel's memory.

    python -m rec11_tools.run_pages [--json] [PAGE.md ...]     # default: every page in _toc.yml

Two users:

* Binder's ``postBuild`` runs every page once, so that the models the pages train are
  in the model cache before any student opens a page: a live cell then loads a model
  instead of training it. Running the pages themselves (rather than a list of configs)
  means the cache holds exactly the models the pages ask for.
* The benchmark (``rec11_tools.bench``) runs each page pinned to one core, to measure
  what a student's kernel experiences.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path


def run_page(page: Path, timeout: int = 900) -> list[dict]:
    """Execute every code cell of a MyST page in a fresh kernel, in its own folder.

    Returns one row per code cell: its index, wall seconds, the kernel's peak resident
    memory so far (MB, the kernel and its children) and the cell's first line. A cell
    that raises stops the run with nbclient's CellExecutionError.
    """
    import psutil
    from nbclient import NotebookClient

    from rec11_book.shared.execution import kernel_sockets, page_notebook

    nb = page_notebook(page, fingerprint=False)  # as the build reads it, without its bookkeeping
    peak, kernel_pid, done = [0], [None], threading.Event()

    def watch():  # sample the kernel's memory every 50 ms: a cell's peak can be brief
        while not done.is_set():
            try:
                proc = psutil.Process(kernel_pid[0]) if kernel_pid[0] else None
                if proc:
                    rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(True))
                    peak[0] = max(peak[0], rss)
            except psutil.Error:
                pass
            done.wait(0.05)

    rows = []
    watcher = threading.Thread(target=watch, daemon=True)
    with kernel_sockets() as sockets:  # other runs may start kernels beside this one: no shared ports
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(page.parent)}}, **sockets)
        with client.setup_kernel():
            kernel_pid[0] = client.km.provisioner.process.pid
            watcher.start()
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                start = time.perf_counter()
                client.execute_cell(cell, index)
                lines = cell.source.strip().splitlines()
                rows.append({"cell": index, "seconds": time.perf_counter() - start, "peak_mb": peak[0] / 2**20,
                             "first_line": lines[0][:60] if lines else ""})
    done.set()
    return rows


def book_pages(root: Path) -> list[Path]:
    """Every page in ``_toc.yml`` order that has code cells."""
    from rec11.chapter import toc_pages

    pages = [root / f"{p}.md" for p in toc_pages(root)]
    return [p for p in pages if "{code-cell}" in p.read_text()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help="MyST pages (default: every page in _toc.yml)")
    parser.add_argument("--json", action="store_true", help="print one JSON object {page: rows}")
    args = parser.parse_args(argv)
    if args.pages:
        pages = args.pages
    else:
        from rec11.sources import book_root

        root = book_root()
        if root is None:
            sys.exit("rec11_tools.run_pages: run it inside the book (no _config.yml above this folder)")
        pages = book_pages(root)
    results = {}
    for page in pages:
        if "{code-cell}" not in page.read_text():
            continue
        start = time.perf_counter()
        results[str(page)] = run_page(page.resolve())
        if not args.json:
            print(f"{page}: {len(results[str(page)])} cells in {time.perf_counter() - start:.1f} s", flush=True)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
