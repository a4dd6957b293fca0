"""Browser tests: the built site in Debian's Chromium, live code on a local Jupyter server.

The session builds the book once in Jupyter-server mode (the same build as ``make
build``, with ``REC11_LIVE_CODE_*`` pointing Live Code at a local server), serves
the HTML from 127.0.0.1 the way GitHub Pages does (gzip for text), and starts a
``jupyter server`` with a token. Every browser context blocks and records each
request that leaves 127.0.0.1 unless ``ALLOWED_OFF_SITE`` lists it.

For tests/browser/test_hub.py the session also builds the book for a JupyterHub
(``hub: true``, no token), serves it from its own origin, and starts a real JupyterHub
(jupyterhub 6.1.1, configurable-http-proxy 5.3.0 from ``node_modules/.bin``) set up
as deploy/jupyterhub/README.md tells a hub's admins (see hub_support.py).

Knobs for working on the tests (none is needed in CI):

* ``REC11_BROWSER_BOOK=DIR``: build this book instead of the repository (for example
  a scratch copy whose toc lists only the pages that build today);
* ``REC11_BROWSER_SITE=DIR``: reuse a site built earlier into ``DIR`` (the ``--out``
  of a Jupyter-server-mode build); the server's port and token are read from it;
* ``REC11_HUB_SITE=DIR``: the same for the hub-mode build (the hub then listens on the
  port written in its pages).

Browser tests are never skipped: Chromium or npm files missing is an error, and with
``CI=true`` any skip in ``tests/browser`` is reported as a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from browser_support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LOCAL_HOSTS,
    REPORT,
    Kernels,
    OffSite,
    book_dir,
    site_config,
    start_jupyter,
)
from run_support import SHARED, keep_running, shared

# Static files, gzipped as GitHub Pages serves them: the same server `make bench` measures with.
from rec11_tools.pagespeed import serve

# --- timings and page weights, printed after the run as a report --------------------

def pytest_sessionfinish(session):
    """Hand this process's tables to the run's report (tests/conftest.py prints them, from
    every pytest-xdist worker)."""
    name = getattr(session.config, "workerinput", {}).get("workerid", "main")
    (Path(os.environ[SHARED]) / f"report-{name}.json").write_text(json.dumps(REPORT))


# --- CI: a skipped browser test is a failed one ------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        report.outcome = "failed"
        report.longrepr = f"browser test skipped in CI, which counts as a failure: {report.longrepr}"


# --- the site, its web server and the Jupyter server ---------------------------------------


@pytest.fixture(scope="session")
def built_site(request) -> dict:
    """{html, server_url, token}: the book built with Live Code on a local Jupyter server."""
    reuse = os.environ.get("REC11_BROWSER_SITE")
    if reuse:
        html = Path(reuse) / "_build" / "html"
        config = site_config(html)
        assert config["source"] == "jupyter-server", f"{reuse} was built for {config['source']}, not jupyter-server"
        return {"html": html, "server_url": config["server"]["url"], "token": config["server"]["token"]}
    return request.getfixturevalue("built_book")  # tests/conftest.py: one build per session


@pytest.fixture(scope="session")
def site(built_site) -> str:
    """The base URL of the built site, served from 127.0.0.1 as GitHub Pages serves it (gzip)."""
    with serve(built_site["html"]) as base:
        yield base


@pytest.fixture(scope="session")
def jupyter_server(built_site):
    """A `jupyter server` where the built pages expect it, serving the book's folder: one for
    the run, started by the first worker that needs it, stopped when the run ends."""
    url = urlparse(built_site["server_url"])
    assert url.hostname in LOCAL_HOSTS, f"the site points live code at {built_site['server_url']}, not 127.0.0.1"
    with shared("jupyter-server") as folder:
        if not (folder / "jupyter-server.pid").exists():
            cmd = [str(Path(sys.executable).with_name("jupyter-server")), "--no-browser",
                   "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={url.port}", "--ServerApp.port_retries=0",
                   f"--IdentityProvider.token={built_site['token']}", f"--ServerApp.root_dir={book_dir()}",
                   # as docs/live-code.md tells an instructor (allow_origin=SITE_ORIGIN): each
                   # worker serves the site from a port of its own on 127.0.0.1
                   r"--ServerApp.allow_origin_pat=http://127\.0\.0\.1:[0-9]+", "--allow-root"]
            status = f"{built_site['server_url']}api/status?token={built_site['token']}"
            # its kernels run at the build's seed: they load the models the build trained
            seed = {"REC11_SEED": str(built_site["seed"])} if "seed" in built_site else {}
            proc = start_jupyter(cmd, status, folder / "jupyter-server.log", "jupyter server", timeout=60,
                                 cwd=book_dir(), env={**os.environ, **seed}, start_new_session=True)
            keep_running(proc, "jupyter-server")
    return built_site["server_url"]


# --- the browser ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser():
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser):
    """A fresh browser context (no cache, no storage) that blocks off-site requests.

    The test fails at teardown if anything tried to leave 127.0.0.1.
    """
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    off_site, kernels = OffSite(), Kernels.of(ctx)
    ctx.route("**/*", off_site)
    ctx.on("page", lambda page: page.on("websocket", off_site.websocket))
    ctx.off_site = off_site
    yield ctx
    ctx.close()
    kernels.shut_down()  # closing a page runs no pagehide, so nothing else would
    assert not off_site.blocked, f"off-site requests (not in ALLOWED_OFF_SITE): {off_site.blocked}"




# --- a real JupyterHub (tests/browser/test_hub.py) -----------------------------------------


@pytest.fixture(scope="session")
def hub_site(request, tmp_path_factory) -> dict:
    """The book built for a JupyterHub (``hub: true``, no token: each reader pastes one).

    {html, hub_url}. The hub's port is chosen here, because the build writes its URL into
    the pages. ``REC11_HUB_SITE=DIR`` reuses a hub-mode build made earlier into ``DIR``.
    """
    from rec11_tools.previewtime import free_port

    reuse = os.environ.get("REC11_HUB_SITE")
    if reuse:
        html = Path(reuse) / "_build" / "html"
        config = site_config(html)
        assert config["server"]["hub"], f"{reuse} was not built for a JupyterHub"
        return {"html": html, "hub_url": config["server"]["url"]}
    from rec11_tools.robustness import commit_seed

    built_book = request.getfixturevalue("built_book")  # only here: a reused hub site needs no book build
    book = book_dir()
    out = tmp_path_factory.mktemp("hub-book")
    # The pages as the session's book ran them (its seed, its execution cache, the same model
    # cache): only Live Code's settings differ, so nothing runs or trains again.
    shutil.copytree(built_book["out"] / "_build" / ".jupyter_cache", out / "_build" / ".jupyter_cache")
    hub_url = f"http://127.0.0.1:{free_port()}/"
    env = {**os.environ, "REC11_SEED": str(commit_seed(book)[0]), "REC11_LIVE_CODE_SOURCE": "jupyter-server",
           "REC11_LIVE_CODE_URL": hub_url, "REC11_LIVE_CODE_TOKEN": "", "REC11_LIVE_CODE_HUB": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "rec11_book.commands.build", "--book", str(book), "--out", str(out),
         "--figures", str(out / "figures")],
        check=False, capture_output=True, text=True, timeout=2400, env=env)
    assert result.returncode == 0, f"the hub-mode book did not build:\n{(result.stdout + result.stderr)[-6000:]}"
    return {"html": out / "_build" / "html", "hub_url": hub_url}


@pytest.fixture(scope="session")
def hub_book_site(hub_site) -> str:
    """The hub-mode site, served from 127.0.0.1 (its own origin, as GitHub Pages is)."""
    with serve(hub_site["html"]) as base:
        yield base


@pytest.fixture(scope="session")
def hub(hub_site, hub_book_site, tmp_path_factory):
    """JupyterHub 6.1.1 + configurable-http-proxy 5.3.0 on 127.0.0.1 (see hub_support.py)."""
    from hub_support import Hub

    port = urlparse(hub_site["hub_url"]).port
    origin = hub_book_site.rstrip("/")
    running = Hub(tmp_path_factory.mktemp("jupyterhub"), port, origin).start()
    yield running
    running.stop()
