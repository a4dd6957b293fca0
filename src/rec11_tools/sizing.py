"""Size a JupyterHub for a class: N students' kernels at once, each running the pages' cells.

    python -m rec11_tools.sizing                      # N = 1, 2, 4, 8; writes deploy/jupyterhub/sizing.json
    python -m rec11_tools.sizing --n 1 2 --pages book/attention book/vae --out /tmp/s.json

A *student* is one process that goes through the core pages in the book's order the way
Live Code does: a fresh kernel per page (Live Code starts one session per page), every
code cell of the page run in order, the models loaded from the model cache, one thread
(``REC11_THREADS=1``, ``OMP_NUM_THREADS=1``, as a hub's kernel with a one-core limit).
N students start at the same moment. For every page and student this records:

* ``peak_mb``: the kernel's peak resident memory (it and its children, sampled every 50 ms);
* ``cpu_s``: the kernel's CPU seconds (user + system) from start to the page's last cell;
* ``first_output_s``: seconds from asking for the kernel to the first cell output, which is
  what a student waits for after clicking Live Code, on a busy machine;
* ``wall_s``: seconds for the whole page.

and, once, ``server_mb``: the resident memory of an idle Jupyter server with this
environment's extensions, which is what a reader's single-user server adds to its kernels.

The load average before and after each round is recorded with the results: the numbers
are only as quiet as the machine was. ``rec11_tools.hubsize`` turns the results into the
per-user memory limit and guarantee and the class-size table (docs/live-code.md, deploy guide).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from rec11.chapter import toc_pages

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "deploy" / "jupyterhub" / "sizing.json"
ONE_THREAD = {"REC11_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def core_pages(book: Path) -> list[str]:
    """The toc's core pages that students open (not book/further/, not the instructor's), in order."""
    pages = []
    for page in toc_pages(book):
        path = book / f"{page}.md"
        if ("/further/" not in page and page != "book/instructor" and path.is_file()
                and "```{code-cell}" in path.read_text()):
            pages.append(page)
    return pages


def run_page(path: Path) -> dict:
    """Run one page as a student's kernel would; measure memory, CPU and time to first output."""
    import psutil
    from nbclient import NotebookClient

    from rec11_book.shared.execution import page_notebook

    nb = page_notebook(path, fingerprint=False)  # as the build reads it, without its bookkeeping
    client = NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    peak, pid, done = [0], [None], threading.Event()

    def family():
        proc = psutil.Process(pid[0])
        return [proc, *proc.children(recursive=True)]

    def watch():
        while not done.is_set():
            try:
                peak[0] = max(peak[0], sum(p.memory_info().rss for p in family()))
            except (psutil.Error, TypeError, ValueError):
                pass
            done.wait(0.05)

    start = time.perf_counter()
    first_output = None
    watcher = threading.Thread(target=watch, daemon=True)
    with client.setup_kernel():
        pid[0] = client.km.provisioner.process.pid
        watcher.start()
        kernel_s = time.perf_counter() - start
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            client.execute_cell(cell, index)
            if first_output is None and cell.get("outputs"):
                first_output = time.perf_counter() - start
        cpu = 0.0
        for proc in family():
            times = proc.cpu_times()
            cpu += times.user + times.system
        done.set()
    return {"peak_mb": round(peak[0] / 2**20, 1), "cpu_s": round(cpu, 2), "kernel_s": round(kernel_s, 2),
            "first_output_s": round(first_output if first_output is not None else time.perf_counter() - start, 2),
            "wall_s": round(time.perf_counter() - start, 2)}


def server_mb(settle: float = 5.0) -> float:
    """Resident memory of an idle Jupyter server with this environment's extensions (a
    reader's single-user server is that server plus JupyterHub's extension)."""
    import secrets
    import socket
    import urllib.request

    import psutil

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(8)
    proc = subprocess.Popen([str(Path(sys.executable).with_name("jupyter-server")), "--no-browser",
                             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
                             f"--IdentityProvider.token={token}", "--allow-root"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        time.sleep(settle)
        return round(psutil.Process(proc.pid).memory_info().rss / 2**20, 1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def student(book: Path, pages: list[str]) -> dict:
    return {page: run_page(book / f"{page}.md") for page in pages}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def round_of(n: int, book: Path, pages: list[str]) -> dict:
    """N students at once; each is its own process (and its own kernels)."""
    env = {**os.environ, **ONE_THREAD}
    before = load()
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "rec11_tools.sizing", "--student", "--book", str(book),
                               "--pages", *pages], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(n)]
    results = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"sizing: a student's run failed (exit {proc.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return {"n": n, "load_before": before, "load_after": load(), "wall_s": round(time.perf_counter() - start, 1),
            "students": results}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--book", type=Path, default=ROOT)
    parser.add_argument("--pages", nargs="+", default=None, help="default: the core pages with code, in order")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--student", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--add-server", action="store_true", help="only measure the server; add it to --out")
    args = parser.parse_args(argv)
    book = args.book.resolve()
    pages = args.pages or core_pages(book)
    if args.student:
        print(json.dumps(student(book, pages)))
        return 0
    if args.add_server:
        result = json.loads(args.out.read_text())
        result["server_mb"] = server_mb()
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        return 0
    import platform

    server = server_mb()
    rounds = []
    for n in args.n:
        print(f"sizing: {n} student(s) at once, {len(pages)} pages each …", file=sys.stderr, flush=True)
        rounds.append(round_of(n, book, pages))
        print(f"sizing:   {rounds[-1]['wall_s']} s, load {rounds[-1]['load_before']} -> {rounds[-1]['load_after']}",
              file=sys.stderr, flush=True)
    result = {"machine": {"cores": os.cpu_count(), "python": platform.python_version(),
                          "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())},
              "threads": ONE_THREAD, "pages": pages, "server_mb": server, "rounds": rounds}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"sizing: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
