"""Live code on a real JupyterHub: the book built with ``hub: true``, a reader's token, their server.

The hub is JupyterHub 6.1.1 with configurable-http-proxy 5.3.0 on 127.0.0.1, the
dummy authenticator and local-process servers running the book's own environment,
configured the way deploy/jupyterhub/README.md tells a hub's admins (hub_support.py).
A reader's API token is made through the hub's API, as the hub's Token page makes it.

* a reader pastes a token; Live Code starts that reader's server and runs a cell that
  imports the package; two readers get two servers;
* a wrong or an expired token: a message that says so and a button to paste another;
* a slow spawn: the seconds and the hub's progress are shown until the server is up;
* a refused kernel connection (a hub whose servers refuse tokens on websockets, as
  JupyterHub 5+ does unless JUPYTERHUB_ALLOW_TOKEN_IN_URL is set): reported within seconds;
* the server stopped mid-session (as the idle culler does): the page says so, "Start it
  again" starts it, and cells run again without a reload.
"""

from __future__ import annotations

import time
import uuid

import pytest
from browser_support import (
    CELLS,
    FIND_CELLS,
    REPORT,
    book_dir,
    first_editable,
    page_url,
    pages_with_code,
    status_text,
    type_and_run,
    wait_output,
)
from hub_support import SLOW_SPAWN

# one worker of make test's two: the hub and its hub-mode build are made once
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("hub")]

PAGE = pages_with_code(book_dir())[0]
SETTLE = 120_000  # ms: a server's start and a kernel's set-up cells on a busy 2-core machine
REPORT.setdefault("hub", {})
IMPORT_CELL = "import os, rec11; print('server of', os.environ['JUPYTERHUB_USER'], 'has', rec11.__name__)"


def reader(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


class Prompts:
    """Answers the token prompt from a list (the last answer repeats), and records what it asked."""

    def __init__(self, page, *answers: str):
        self.asked: list[str] = []
        self.answers = list(answers)
        page.on("dialog", self.answer)

    def answer(self, dialog):
        self.asked.append(dialog.message)
        dialog.accept(self.answers.pop(0) if len(self.answers) > 1 else self.answers[0])


def click_live_code(page) -> None:
    page.click(".dropdown-launch-buttons > button.dropdown-toggle")
    page.click(".dropdown-launch-buttons .btn-launch-thebe")


def wait_state(page, *states: str, timeout: int = SETTLE) -> dict:
    page.wait_for_function("(states) => window.rec11LiveCode && states.includes(window.rec11LiveCode.state)",
                           arg=list(states), timeout=timeout)
    return page.evaluate("window.rec11LiveCode")


def seconds(live: dict, start: str, end: str) -> float:
    return (live["timings"][end] - live["timings"][start]) / 1000


def action(page, label: str):
    return page.locator(".rec11-live-actions button.rec11-live-action", has_text=label)


def start_reader(context, site: str, token: str):
    page = context.new_page()
    prompts = Prompts(page, token)
    page.goto(page_url(site, PAGE))
    click_live_code(page)
    live = wait_state(page, "ready", "failed")
    assert live["state"] == "ready", f"live code failed: {live['error']}; status: {status_text(page)}"
    return page, prompts, live


def test_readers_paste_tokens_and_each_runs_the_package_on_their_own_server(browser, hub, hub_book_site):
    rows = {}
    servers = {}
    contexts = []
    try:
        for name in (reader("ada"), reader("bo")):
            context = browser.new_context()
            contexts.append(context)
            page, prompts, live = start_reader(context, hub_book_site, hub.new_token(name))
            assert len(prompts.asked) == 1 and "JupyterHub at 127.0.0.1" in prompts.asked[0], prompts.asked
            assert "hub/token" in prompts.asked[0], prompts.asked  # where to make one
            assert "JupyterHub at 127.0.0.1" in status_text(page), status_text(page)
            cell = first_editable(page.evaluate(FIND_CELLS))
            type_and_run(page, cell, IMPORT_CELL)
            run_s = wait_output(page, cell["i"], f"server of {name} has rec11")
            servers[name] = hub.server_url(name)
            # leaving the page shuts its kernel down: a reader holds one kernel, not one per page
            token = prompts.answers[0]
            assert hub.kernels(name, token), "no kernel running while the page is open"
            page.goto("about:blank")
            deadline = time.monotonic() + 15
            while hub.kernels(name, token):
                assert time.monotonic() < deadline, "the page's kernel outlived the page"
                time.sleep(0.5)
            rows[name.split("-")[0]] = {"click→editor (server up)": f"{seconds(live, 'click', 'editor'):.2f} s",
                                        "click→kernel": f"{seconds(live, 'click', 'kernel'):.2f} s",
                                        "click→set-up done": f"{seconds(live, 'click', 'ready'):.2f} s",
                                        "typed cell→output": f"{run_s:.2f} s"}
        first, second = servers
        assert servers[first] and servers[second] and servers[first] != servers[second], servers
        assert servers[first].endswith(f"/user/{first}/") and servers[second].endswith(f"/user/{second}/")
    finally:
        for context in contexts:
            context.close()
    for who, row in rows.items():
        REPORT["hub"][f"{PAGE} ({who}: new server)"] = row


def test_a_wrong_or_expired_token_says_so_and_takes_another(context, hub, hub_book_site):
    name = reader("cy")
    expired = hub.new_token(name, expires_in=1)
    good = hub.new_token(name)
    deadline = time.monotonic() + 15
    while hub.accepts(expired):  # it expires a second after it was made
        assert time.monotonic() < deadline, "the hub still takes a token that expired 15 s ago"
        time.sleep(0.2)
    page = context.new_page()
    prompts = Prompts(page, "not-a-token", expired, good)
    page.goto(page_url(hub_book_site, PAGE))
    click_live_code(page)

    for attempt in ("a wrong token", "an expired token"):
        live = wait_state(page, "failed", "ready", timeout=60_000)
        assert live["state"] == "failed" and live["problem"] == "token", (attempt, live)
        text = status_text(page)
        assert "did not accept your token" in text and "expired" in text and "Token page" in text, text
        again = action(page, "Paste a new token")
        assert again.is_visible(), f"{attempt}: no way to paste another token"
        assert page.evaluate("Object.keys(sessionStorage).length") == 0, "a refused token was kept"
        again.click()
    live = wait_state(page, "ready", "failed")
    assert live["state"] == "ready", status_text(page)
    assert len(prompts.asked) == 3, prompts.asked
    assert page.evaluate("Object.values(sessionStorage)") == [good]
    cell = first_editable(page.evaluate(FIND_CELLS))
    type_and_run(page, cell, IMPORT_CELL)
    wait_output(page, cell["i"], f"server of {name} has rec11")


def test_a_slow_spawn_shows_progress_until_the_server_is_up(context, hub, hub_book_site):
    name = reader("slow")
    page = context.new_page()
    Prompts(page, hub.new_token(name))
    page.goto(page_url(hub_book_site, PAGE))
    seen = []
    click_live_code(page)
    deadline = time.monotonic() + SETTLE / 1000
    while page.evaluate("window.rec11LiveCode.state") not in {"ready", "failed"}:
        assert time.monotonic() < deadline, f"not ready; status: {status_text(page)}"
        text = status_text(page)
        if not seen or seen[-1] != text:
            seen.append(text)
        page.wait_for_timeout(250)
    live = page.evaluate("window.rec11LiveCode")
    assert live["state"] == "ready", status_text(page)
    progress = [t for t in seen if "starting your server on 127.0.0.1" in t]
    counted = sorted({int(t.split(" … ")[1].split(" s")[0]) for t in progress})
    # the seconds count up while the server starts (SLOW_SPAWN s), one status each second or so
    assert counted and counted[-1] >= SLOW_SPAWN - 2 and len(counted) >= SLOW_SPAWN // 2, seen
    assert any("minute or two" in t for t in progress), progress
    # and what the hub itself says about the start (its progress events)
    assert any("Spawning server" in t or "Server requested" in t for t in progress), progress


def test_a_refused_kernel_connection_is_reported_within_seconds(context, hub, hub_book_site):
    """A hub whose servers refuse the token on websockets (no JUPYTERHUB_ALLOW_TOKEN_IN_URL)."""
    name = reader("strict")
    token = hub.new_token(name)
    page = context.new_page()
    Prompts(page, token)
    page.goto(page_url(hub_book_site, PAGE))
    click_live_code(page)
    live = wait_state(page, "failed", "ready")
    assert live["state"] == "failed" and live["problem"] == "websocket", live
    text = status_text(page)
    for words in ("refused the connection to your kernel", "Tell your instructor", "JUPYTERHUB_ALLOW_TOKEN_IN_URL"):
        assert words in text, text
    assert action(page, "Try again").is_visible()
    # from the kernel's creation (the server was up) to the message
    log = hub.log_text()
    assert "Couldn't authenticate WebSocket connection" in log, "the hub's server did not refuse the websocket"
    took = seconds(live, "became starting", "became failed")
    assert took < 20, f"the refusal took {took:.1f} s to be reported (server start included)"
    REPORT["hub"][f"{PAGE} (refused websocket)"] = {"click→editor (server up)": "—", "click→kernel": "—",
                                                    "click→set-up done": f"message after {took:.2f} s",
                                                    "typed cell→output": "—"}
    # the kernel nobody can use is shut down, not left running
    deadline = time.monotonic() + 15
    while hub.kernels(name, token):
        assert time.monotonic() < deadline, f"kernels left running: {hub.kernels(name, token)}"
        time.sleep(0.5)


def test_a_server_stopped_mid_session_can_be_started_again_without_a_reload(context, hub, hub_book_site):
    name = reader("dee")
    page, _, _ = start_reader(context, hub_book_site, hub.new_token(name))
    cells = page.evaluate(FIND_CELLS)
    cell = first_editable(cells)
    type_and_run(page, cell, "print('before', 6 * 7)")
    wait_output(page, cell["i"], "before 42")

    hub.stop_server(name)  # what the idle culler does
    stopped_at = time.monotonic()
    live = wait_state(page, "stopped", "lost", "failed", timeout=60_000)
    noticed = time.monotonic() - stopped_at
    assert live["state"] == "stopped" and live["problem"] == "stopped", (live, status_text(page))
    assert "has stopped" in status_text(page), status_text(page)
    assert action(page, "Start it again").is_visible()
    assert noticed < 20, f"the stop was noticed after {noticed:.1f} s"

    # running a cell now says why nothing happens, instead of waiting forever
    box = page.locator(CELLS).nth(cell["i"])
    box.locator(".thebe-run-button").click()
    wait_output(page, cell["i"], "not connected to a kernel")

    start = time.monotonic()
    action(page, "Start it again").click()
    live = wait_state(page, "ready", "failed", "stopped")
    assert live["state"] == "ready", status_text(page)
    restarted = time.monotonic() - start
    assert hub.server_url(name), "the server was not started again"
    type_and_run(page, {**cell, "hidden": False}, "print('after', 6 * 7)")  # its code is shown already
    run_s = wait_output(page, cell["i"], "after 42")
    REPORT["hub"][f"{PAGE} (server stopped by the culler)"] = {
        "click→editor (server up)": "—", "click→kernel": f"stop noticed in {noticed:.1f} s",
        "click→set-up done": f"'Start it again'→ready {restarted:.2f} s",
        "typed cell→output": f"{run_s:.2f} s"}


def test_a_kernel_killed_for_memory_is_restarted_and_the_page_says_so(context, hub, hub_book_site):
    """Over its memory limit a kernel is killed; the server restarts it. The page says what was lost."""
    name = reader("eve")
    page, _, _ = start_reader(context, hub_book_site, hub.new_token(name))
    cell = first_editable(page.evaluate(FIND_CELLS))
    type_and_run(page, cell, "import os; os.kill(os.getpid(), 9)  # as the kernel's memory limit would")
    page.wait_for_function("document.querySelector('.rec11-live-status').innerText.includes('was restarted')",
                           timeout=60_000)
    assert "run out of memory" in status_text(page)
    # the cell's code, put back, runs again in the new kernel (the cells above it first)
    page.locator(CELLS).nth(cell["i"]).locator(".rec11-reset-cell").click()
    type_and_run(page, {**cell, "hidden": False}, "print('again', 6 * 7)")
    wait_output(page, cell["i"], "again 42")
