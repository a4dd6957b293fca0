"""A page's Binder link opens its MyST source as a notebook in JupyterLab, not as text.

Binder cannot be reached from the test machines, so this runs what the Binder image
does: JupyterLab with jupytext at the version in ``binder/requirements.txt``, configured
by the ``jupytext-config`` line of ``binder/postBuild``, and opens the path a page's
Binder link opens (``lab/tree/book/<page>.md``) in Chromium.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import ROOT, jupyter_process

from rec11_tools.previewtime import free_port

pytestmark = pytest.mark.browser

PAGE = "book/attention.md"


def pin(requirements: Path, name: str) -> str | None:
    match = re.search(rf"^{name}==(\S+)", requirements.read_text(), re.M)
    return match[1] if match else None


def test_binder_pins_the_jupytext_the_tests_use():
    import jupytext

    assert pin(ROOT / "binder" / "requirements.txt", "jupytext") == jupytext.__version__


@pytest.fixture
def lab(tmp_path):
    """JupyterLab on 127.0.0.1, configured by binder/postBuild's jupytext-config line."""
    config_line = next(line for line in (ROOT / "binder" / "postBuild").read_text().splitlines()
                       if line.startswith("jupytext-config "))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    bin_dir = Path(sys.executable).parent
    subprocess.run([str(bin_dir / "jupytext-config"), *config_line.split()[1:]], env=env, check=True)
    # A copy of the page: JupyterLab writes checkpoints beside what it opens.
    root = tmp_path / "repo"
    (root / PAGE).parent.mkdir(parents=True)
    (root / PAGE).write_text((ROOT / PAGE).read_text())
    port, token = free_port(), secrets.token_hex(16)
    cmd = [str(bin_dir / "jupyter-lab"), "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           "--allow-root", "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    base = f"http://127.0.0.1:{port}/"
    with jupyter_process(cmd, f"{base}api/status?token={token}", tmp_path / "lab.log", "jupyter lab", env=env):
        yield base, token


def test_a_page_source_opens_as_a_notebook(browser, lab):
    base, token = lab
    first_cell = re.search(r"^```{code-cell}[^\n]*\n(?::tags:[^\n]*\n)?\n?(.*?)\n", (ROOT / PAGE).read_text(),
                           re.M | re.S)[1]
    page = browser.new_page()
    try:
        page.goto(f"{base}lab/tree/{PAGE}?token={token}")
        notebook = page.locator(".jp-Notebook .jp-CodeCell").first
        notebook.wait_for(timeout=60_000)
        editor = ".jp-Notebook .jp-CodeCell .jp-InputArea-editor"
        page.wait_for_function(f"document.querySelector('{editor}')?.innerText.trim().length > 0",
                               timeout=60_000)  # the editor fills in after the cell appears
        code = page.locator(editor).first.inner_text()
        assert first_cell.strip() in code, f"the notebook's first code cell is not the page's: {code[:200]!r}"
        assert page.locator(".jp-FileEditor").count() == 0, f"{PAGE} also opened as a text file"
    finally:
        page.close()
