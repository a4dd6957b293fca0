"""The notebooks a reader downloads keep the build's outputs, even after a cached rebuild,
and run top to bottom in a fresh kernel."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from rec11.book.notebooks import FINGERPRINT, GLUE_RECORD, GLUE_ROLE, executed_notebooks

pytestmark = pytest.mark.build


@pytest.fixture(scope="module")
def rebuilt(built_book, tmp_path_factory, root) -> Path:
    """The book built again into a new folder with only the execution cache kept: every
    page is taken from the cache, the case in which myst-nb writes notebooks without
    outputs. Returns the new ``_build`` folder."""
    out = tmp_path_factory.mktemp("rebuilt")
    shutil.copytree(built_book["out"] / "_build" / ".jupyter_cache", out / "_build" / ".jupyter_cache")
    result = subprocess.run(
        [sys.executable, "-m", "rec11.book.build", "--book", str(root), "--out", str(out),
         "--figures", str(out / "figures")],
        capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert re.search(r"rec11: 0 page\(s\) executed \[\], [1-9]\d* from the cache", result.stdout), \
        result.stdout[-2000:]
    return out / "_build"


def downloads(build: Path) -> dict[Path, Path]:
    """{page path in the book (.md): its .ipynb download} for every executed page."""
    sources = build / "html" / "_sources"
    return {rel: (sources / rel).with_suffix(".ipynb") for rel, _ in executed_notebooks(build)}


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_each_download_has_the_outputs_the_page_rendered(rebuilt):
    rendered = dict(executed_notebooks(rebuilt))
    assert rendered, "no executed pages"
    for rel, path in downloads(rebuilt).items():
        assert path.is_file(), f"{rel}: the page offers no notebook download"
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        page_cells = [c for c in code_cells(rendered[rel]) if not c.source.startswith(FINGERPRINT)]
        assert [c.source for c in code_cells(nb)] == [c.source for c in page_cells], rel
        for cell, page_cell in zip(code_cells(nb), page_cells):
            shown = [o for o in page_cell.outputs if not any(k.startswith(GLUE_RECORD) for k in o.get("data", {}))]
            assert len(cell.outputs) == len(shown), f"{rel}: outputs lost in the cell {cell.source[:60]!r}"
        assert any(c.outputs for c in code_cells(nb)), f"{rel}: the download has no outputs"


def test_downloads_carry_nothing_of_the_build(rebuilt):
    for rel, path in downloads(rebuilt).items():
        nb = nbformat.read(path, as_version=4)
        assert not any(c.source.startswith(FINGERPRINT) for c in nb.cells), f"{rel}: fingerprint cell"
        assert "source_map" not in nb.metadata, rel
        for cell in code_cells(nb):
            for output in cell.outputs:
                kinds = set(output.get("data", {}))
                assert not any(k.startswith(GLUE_RECORD) for k in kinds), f"{rel}: a glue record"
                assert not {"image/png", "image/svg+xml"} <= kinds, f"{rel}: a figure in two formats"
        text = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert not GLUE_ROLE.search(text), f"{rel}: an unfilled glue role {GLUE_ROLE.search(text)[0]}"
        assert "{{" not in text, f"{rel}: an unfilled course fact"


def test_downloads_run_top_to_bottom_in_a_fresh_kernel(rebuilt, root):
    for rel, path in downloads(rebuilt).items():
        nb = nbformat.read(path, as_version=4)
        # From the page's own folder, as the page ran, with the models from the cache.
        client = NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str((root / rel).parent)}})
        client.execute()
        errors = [o for c in code_cells(nb) if "raises-exception" not in c.metadata.get("tags", [])
                  for o in c.outputs if o.output_type == "error"]
        assert not errors, f"{rel}: {errors[0].ename}: {errors[0].evalue}"
