"""Run pages and record every claim they assert, held or not, instead of stopping at the first.

    python -m rec11_tools.claims [--json OUT] [PAGE.md ...]    # default: every page in _toc.yml

A page protects each sentence about a trained model with ``claim(value, op, threshold,
message)`` (``rec11.claims``), and each exact fact with ``assert condition, message``.
Run in the build, the first false one stops the page. Here each page runs in a kernel of its
own (forked, as in the build, from one process that imported torch and pyplot) where neither stops it:
``claim`` records its value and threshold and goes on (``$REC11_CLAIMS_RECORD_ONLY``), and
``assert`` statements are rewritten (an IPython AST transformer) to record whether they
held, so one false claim does not hide the next; a cell that raises for another reason is
recorded and the page goes on too.
Pages run in the order given, sharing the model cache (``$REC11_CACHE_DIR``), as in a
build. The robustness matrix (``rec11_tools.robustness``) runs this once per variant.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

# Run in the kernel before the page's first cell.
SOFT_ASSERTS = '''
import ast as _rec11_ast
import os as _rec11_os

_rec11_os.environ["REC11_CLAIMS_RECORD_ONLY"] = "1"  # rec11.claims.claim records, never raises

_rec11_claims = []


def _rec11_claim(held, message):
    _rec11_claims.append({"message": str(message), "held": bool(held)})


class _Rec11SoftAsserts(_rec11_ast.NodeTransformer):
    active = True  # off for a cell that raises on purpose (tag raises-exception)

    def visit_Assert(self, node):
        self.generic_visit(node)
        if not self.active:
            return node
        message = node.msg or _rec11_ast.Constant(_rec11_ast.unparse(node.test))
        call = _rec11_ast.Call(_rec11_ast.Name("_rec11_claim", _rec11_ast.Load()),
                               [node.test, message], [])
        return _rec11_ast.copy_location(_rec11_ast.Expr(call), node)


_rec11_soft = _Rec11SoftAsserts()
get_ipython().ast_transformers.append(_rec11_soft)
'''
# the asserts' records, then claim()'s (value, op, threshold too) if the page made any
REPORT = ("import json as _rec11_json, sys as _rec11_sys; print(_rec11_json.dumps(_rec11_claims + getattr("
          "_rec11_sys.modules.get('rec11.claims'), 'RECORD', [])))")
ENVIRONMENT = ("import json as _rec11_json, torch as _rec11_torch; print(_rec11_json.dumps("
               "{'capability': _rec11_torch.backends.cpu.get_cpu_capability(), "
               "'torch': _rec11_torch.__version__}))")


def _stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


def run_page(page: Path, timeout: int = 1800, fork_server: str | None = None) -> dict:
    """{claims: [{message, held[, value, op, threshold]}], errors: [{line, error}], glued: {name: text}, seconds}.

    One page, in a kernel of its own (forked from ``fork_server`` if the page imports torch or matplotlib, as the
    build runs it: ``rec11_book.shared.warmkernels``), with soft asserts; ``glued`` holds the
    page's glued values.
    """
    import nbformat
    from nbclient import NotebookClient

    from rec11_book.shared import warmkernels
    from rec11_book.shared.execution import kernel_sockets, page_notebook
    from rec11_book.shared.pages import parse_cells

    nb = page_notebook(page, fingerprint=False)  # as the build reads it, without its bookkeeping
    lines = [line for line, _, _ in parse_cells(page.read_text())]
    code = [c for c in nb.cells if c.cell_type == "code"]
    cell_line = {id(c): (lines[i] if i < len(lines) else 0) for i, c in enumerate(code)}
    cells = [nbformat.v4.new_code_cell(SOFT_ASSERTS)]
    for cell in nb.cells:
        on_purpose = "raises-exception" in cell.metadata.get("tags", [])
        if on_purpose:  # its assert is meant to fail, as in the build
            cells.append(nbformat.v4.new_code_cell("_rec11_soft.active = False"))
        cells.append(cell)
        if on_purpose:
            cells.append(nbformat.v4.new_code_cell("_rec11_soft.active = True"))
    nb.cells = [*cells, nbformat.v4.new_code_cell(REPORT)]
    start = time.perf_counter()
    forked = fork_server if warmkernels.imports_preloaded([c.source for c in code]) else None
    with kernel_sockets() as sockets:  # retrainings run side by side: no shared ports
        NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(page.parent)}},
                       **warmkernels.client_settings(forked, sockets.get("config"))).execute()
    errors, glued = [], {}
    for cell in code:
        for out in cell.outputs:
            record = out.get("metadata", {}).get("scrapbook", {})
            text = out.get("data", {}).get(record.get("mime_prefix", "") + "text/plain")
            if record.get("name") and text is not None:
                glued[record["name"]] = text[:200]
            if out.get("output_type") == "error" and "raises-exception" not in cell.metadata.get("tags", []):
                errors.append({"line": cell_line[id(cell)], "error": f"{out['ename']}: {out['evalue']}"[:300]})
    report = _stdout(nb.cells[-1]).strip().splitlines()
    claims = json.loads(report[-1]) if report else []
    return {"claims": claims, "errors": errors, "glued": glued, "seconds": time.perf_counter() - start}


def environment() -> dict:
    """What the kernels of this process run on: torch's CPU capability and version."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", ENVIRONMENT], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None) -> int:
    from rec11.sources import book_root
    from rec11_book.shared import warmkernels
    from rec11_tools.run_pages import book_pages

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path, help="MyST pages (default: every page in _toc.yml)")
    parser.add_argument("--json", type=Path, help="write {environment, pages: {page: result}} here")
    args = parser.parse_args(argv)
    root = book_root()
    if root is None:
        sys.exit("rec11_tools.claims: run it inside the book (no _config.yml above this folder)")
    pages = [p.resolve() for p in args.pages] or book_pages(root)
    results = {"environment": environment(), "pages": {}}
    with warmkernels.fork_server(wanted=len(pages) > 1) as server:
        failed = run_pages(pages, root, results, server, args.json)
    return 1 if failed else 0


def run_pages(pages: list[Path], root: Path, results: dict, server: str | None, out: Path | None) -> int:
    """Run each page, print what it claimed, and keep its result in ``results`` (written to
    ``out`` after each page, so that a stopped run keeps what it did); returns how many
    claims were false and cells failed."""
    failed = 0
    for page in pages:
        name = page.relative_to(root).as_posix()
        result = results["pages"][name] = run_page(page, fork_server=server)
        false = [c["message"] for c in result["claims"] if not c["held"]]
        failed += len(false) + len(result["errors"])
        print(f"{name}: {len(result['claims'])} claims, {len(false)} false, {len(result['errors'])} errors,"
              f" {result['seconds']:.0f} s", flush=True)
        for message in false:
            print(f"  false: {message}", flush=True)
        for error in result["errors"]:
            print(f"  {name}:{error['line']}: {error['error']}", flush=True)
        if out:
            out.write_text(json.dumps(results, indent=1))
    return failed


if __name__ == "__main__":
    sys.exit(main())
