"""The kernel source set in _config.yml, through the script students get.

The site under test is built for a local Jupyter server. These tests load one of
its pages, then swap in the live-code JSON the build would write for the other
settings (computed by rec11.book.livecode from the real _config.yml), so the same
rec11-thebe.js runs:

* Binder: Live Code asks the BinderHub from `launch_buttons.binderhub_url` to build
  `repository.url` at `repository.branch`, and says so. (There is no internet here:
  that one request is expected, blocked and checked.)
* JupyterHub: the reader is asked for a hub API token, which is sent to the hub API,
  kept for the session, and used to find and start the reader's server.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
import yaml
from browser_support import (FIND_CELLS, OffSite, book_dir, first_editable, page_url, pages_with_code,
                             start_live_code, status_text, type_and_run, wait_output)

from rec11.book import livecode

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


def test_jupyterhub_source_asks_for_a_token_and_finds_the_readers_server(context, site, built_site, jupyter_server):
    server, token = built_site["server_url"], built_site["token"]
    settings = {"source": "jupyter-server", "server_url": server, "token": "", "hub": True}
    page = context.new_page()

    calls, started = [], []

    def hub_api(route):  # a JupyterHub whose user server is the test's jupyter server
        request = route.request
        calls.append((request.method, request.url.removeprefix(server), request.headers.get("authorization")))
        cors = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "Authorization"}
        if request.method == "OPTIONS":
            route.fulfill(status=204, headers={**cors, "Access-Control-Allow-Methods": "GET, POST"})
        elif request.method == "POST":
            started.append(True)
            route.fulfill(status=202, headers=cors, body="")
        else:
            route.fulfill(json={"name": "student", "server": "/" if started else None}, headers=cors)

    page.route(f"{server}hub/api/**", hub_api)
    prompts = []
    page.on("dialog", lambda dialog: (prompts.append(dialog.message), dialog.accept(token)))
    page.goto(page_url(site, PAGE))
    use_source(page, livecode.source_config(settings))
    start_live_code(page)

    assert len(prompts) == 1 and "JupyterHub at 127.0.0.1" in prompts[0], prompts
    api = [(method, url, auth) for method, url, auth in calls if method != "OPTIONS"]
    assert api[:2] == [("GET", "hub/api/user", f"token {token}"),
                       ("POST", "hub/api/users/student/server", f"token {token}")], api
    assert api[-1] == ("GET", "hub/api/user", f"token {token}"), api
    assert page.evaluate("Object.values(sessionStorage)") == [token]
    assert "JupyterHub at 127.0.0.1" in status_text(page)
    cell = first_editable(page.evaluate(FIND_CELLS))
    type_and_run(page, cell, "print('hub', 40 + 2)")
    wait_output(page, cell["i"], "hub 42")
