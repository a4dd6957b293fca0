"""The kernel source set in _config.yml, through the script students get.

The site under test is built for a local Jupyter server. These tests load one of
its pages, then swap in the live-code JSON the build would write for the other
settings (computed by rec11_book.extensions.livecode from the real _config.yml), so the same
static/livecode/ modules runs:

* Binder: Live Code asks the BinderHub from `launch_buttons.binderhub_url` to build
  `repository.url` at `repository.branch`, and says so. (There is no internet here:
  that one request is expected, blocked and checked.)

A JupyterHub (``hub: true``) is tested against a real one: tests/browser/test_hub.py.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
import yaml
from browser_support import OffSite, book_dir, page_url, pages_with_code, status_text

from rec11_book.extensions import livecode

pytestmark = pytest.mark.browser

PAGE = pages_with_code(book_dir())[0]


def use_source(page, source: dict) -> None:
    """Give the loaded page the live-code JSON the build would write for `source`.

    (The page itself is the one the site serves: a document served by the test
    instead would count as a public page, which Chromium forbids to call 127.0.0.1.)
    """
    page.evaluate("""(source) => {
        const el = document.getElementById('rec11-live-code-config');
        const config = JSON.parse(el.textContent);
        delete config.binder;
        delete config.server;
        el.textContent = JSON.stringify(Object.assign(config, source));
    }""", source)


def book_settings(**override) -> dict:
    """rec11_live_code as the build resolves it from the real _config.yml, with `override`."""
    config = yaml.safe_load((book_dir() / "_config.yml").read_text())
    theme = {"launch_buttons": config.get("launch_buttons", {}),
             "repository_url": config["repository"]["url"], "repository_branch": config["repository"]["branch"]}
    block = config["sphinx"]["config"].get("rec11_live_code", {})
    return livecode.resolve({**block, **override}, environ={}, theme_options=theme)


def test_binder_source_asks_the_configured_binderhub(browser, site):
    settings = book_settings(source="binder")
    repo = settings["repository_url"].split("github.com/")[1]
    build_url = f"{settings['binderhub_url']}/build/gh/{repo}/{settings['ref']}"
    context = browser.new_context()
    off_site = OffSite()
    context.route("**/*", off_site)
    try:
        page = context.new_page()
        page.goto(page_url(site, PAGE))
        use_source(page, livecode.source_config(settings))
        page.click(".dropdown-launch-buttons > button.dropdown-toggle")
        page.click(".dropdown-launch-buttons .btn-launch-thebe")
        page.wait_for_function("window.rec11LiveCode.state === 'failed'", timeout=60_000)
        host = urlparse(settings["binderhub_url"]).netloc
        assert f"on {host} ({repo}, {settings['ref']})" in status_text(page), status_text(page)
        # the one expected off-site request: Binder's build stream, blocked here
        assert off_site.blocked and all(url.startswith(build_url) for url in off_site.blocked), off_site.blocked
    finally:
        context.close()
