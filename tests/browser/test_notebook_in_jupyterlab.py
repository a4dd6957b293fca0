"""A downloaded notebook reads as its page does in a JupyterLab that knows nothing of MyST.

A student opens the download in their own JupyterLab (or VS Code, or Colab): no jupytext
and no MyST extension. This starts JupyterLab with jupytext switched off, opens two
downloads and reads what is on screen: no fences, roles, labels or instructor notes, and
the page's text, links and math rendered.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from browser_support import jupyter_process

from rec11_tools.previewtime import free_port

pytestmark = pytest.mark.browser

NOTEBOOKS = ["book/index.ipynb", "book/attention.ipynb"]
RAW = re.compile(r":::|```\{|\{[a-z][\w:-]*\}`|^\([\w-]+\)=$|\{\{|instructor-note|\]\(sec-", re.M)


@pytest.fixture
def plain_lab(tmp_path, built_book):
    """JupyterLab on 127.0.0.1 serving copies of the downloads, jupytext off, nothing windowed."""
    config, settings = tmp_path / "config", tmp_path / "settings"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"jupyterlab-jupytext": True}}))
    (config / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"jupyterlab_jupytext": False}}}))
    tracker = settings / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    # Every cell in the page, so that the whole notebook can be read at once.
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    root = tmp_path / "downloads"
    for name in NOTEBOOKS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(built_book["html"] / "_sources" / name, root / name)
    port, token = free_port(), secrets.token_hex(16)
    bin_dir = Path(sys.executable).parent
    cmd = [str(bin_dir / "jupyter-lab"), "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           f"--LabApp.user_settings_dir={settings}", "--allow-root", "--LabApp.news_url=",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    env = {"JUPYTER_CONFIG_DIR": str(config), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    base = f"http://127.0.0.1:{port}/"
    with jupyter_process(cmd, f"{base}api/status?token={token}", tmp_path / "lab.log", "jupyter lab",
                         env={**os.environ, **env}):
        yield base, token


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_download_shows_no_myst_markup(browser, plain_lab, built_book, name):
    base, token = plain_lab
    page = browser.new_page()
    try:
        extensions = page.request.get(f"{base}lab/api/extensions?token={token}").json()
        enabled = [e["name"] for e in extensions if e.get("enabled") and not e.get("is_local", False)]
        assert not [e for e in enabled if "jupytext" in e or "myst" in e], enabled
        page.goto(f"{base}lab/tree/{name}?token={token}")
        cells = nbformat.read(built_book["html"] / "_sources" / name, as_version=4).cells
        written = [c for c in cells if c.cell_type == "markdown"]
        rendered = ".jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown"
        page.locator(rendered).first.wait_for(timeout=90_000)
        try:  # every markdown cell rendered, and its math typeset (no TeX left waiting)
            page.wait_for_function(
                """([selector, count]) => document.querySelectorAll(selector).length >= count
                   && document.querySelectorAll(selector + ' mjx-container').length > 0
                   && !document.querySelector('.jp-Notebook mjx-container:empty')""",
                arg=[rendered, len(written)], timeout=30_000)
        except Exception as err:
            count = page.locator(rendered).count()
            raise AssertionError(f"{name}: after 30 s, {count} of {len(written)} markdown cells rendered,"
                                 f" {page.locator(rendered + ' mjx-container').count()} formulas typeset") from err
        shown = page.locator(rendered).all_inner_texts()
        text = "\n".join(shown)
        assert len(shown) == len(written) and len(text) > 1000, \
            f"{name}: {len(shown)} of {len(written)} markdown cells rendered: {text[:300]!r}"
        raw = RAW.search(text)
        assert not raw, f"{name}: raw MyST on screen: {text[max(0, raw.start() - 80):raw.end() + 80]!r}"
        assert page.locator(".jp-RenderedMarkdown mjx-container, .jp-RenderedMarkdown .MathJax").count() > 0, \
            f"{name}: no math rendered"
        links = page.locator(".jp-RenderedMarkdown a[href]").evaluate_all("els => els.map(e => e.href)")
        assert links and all(link.startswith(("https://", "http://127.0.0.1")) for link in links), links
        assert page.locator(".jp-Notebook .jp-CodeCell").count() > 3
    finally:
        page.close()
