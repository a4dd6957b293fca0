"""Shared by the browser tests and their fixtures (conftest.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from rec11.chapter import toc_pages
from rec11_book.commands.handout import CHROMIUM, CHROMIUM_ARGS  # noqa: F401  (re-exported: the browser the handout prints with)

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# Requests that may leave 127.0.0.1. Everything the site needs is served by the site.
ALLOWED_OFF_SITE: tuple[str, ...] = ()
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def book_dir() -> Path:
    return Path(os.environ.get("REC11_BROWSER_BOOK") or ROOT).resolve()


def site_pages(book: Path) -> list[str]:
    """The toc's pages, in order, that exist (the build skips entries with no file yet)."""
    return [page for page in toc_pages(book) if (book / f"{page}.md").is_file()]


def pages_with_code(book: Path) -> list[str]:
    """Toc pages whose source has a code cell that reaches the page."""
    found = []
    for page in site_pages(book):
        text = (book / f"{page}.md").read_text()
        cells = re.findall(r"^```{code-cell}[^\n]*\n(.*?)^```", text, re.M | re.S)
        if any("remove-cell" not in cell.split("\n\n")[0] for cell in cells):
            found.append(page)
    return found


REPORT: dict[str, dict[str, dict]] = {"live code": {}, "page weight": {}, "lighthouse": {}, "print": {},
                                      "slides": {}, "toggles that needed a second click": {}}


def site_config(html: Path) -> dict:
    """The live-code JSON the build wrote into the first page that has it."""
    for path in sorted(html.rglob("*.html")):
        match = re.search(r'<script id="rec11-live-code-config" type="application/json">(.*?)</script>',
                          path.read_text())
        if match:
            return json.loads(match[1])
    raise AssertionError(f"no page in {html} has a live-code configuration")


class Kernels:
    """The kernels a browser context's pages open, shut down when the test is done with them.

    A reader who leaves a page shuts its kernel down from the page's ``pagehide`` handler
    (livecode/session.js). A test closes its pages without unloading them, so no handler runs,
    and each Live Code test left a kernel running: 64 at once, 16 GB of memory, by the middle
    of one test run (2026-12-06), enough to stall a second run beside it. This shuts each one
    down through the server's REST API, with the token its websocket carried.
    """

    _CHANNELS = re.compile(r"^(?P<base>.*/api/kernels/[0-9a-f-]{36})/channels$")

    def __init__(self):
        self.urls: dict[str, str] = {}  # kernel URL -> its token

    @classmethod
    def of(cls, context) -> Kernels:
        """The kernels every page of ``context`` (a Playwright browser context) opens from now on."""
        kernels = cls()
        context.on("page", lambda page: page.on("websocket", kernels.websocket))
        return kernels

    def websocket(self, ws):
        url = urlparse(ws.url)
        found = self._CHANNELS.match(url._replace(query="").geturl())
        token = parse_qs(url.query).get("token", [""])[0]
        if found and token:
            base = found["base"].replace("ws://", "http://", 1).replace("wss://", "https://", 1)
            self.urls[base] = token

    def shut_down(self) -> None:
        """DELETE each kernel. One already gone (404), or a server a test stopped, is fine."""
        for url, token in self.urls.items():
            request = urllib.request.Request(url, method="DELETE", headers={"Authorization": f"token {token}"})
            try:
                urllib.request.urlopen(request, timeout=30).close()
            except urllib.error.HTTPError as error:
                if error.code != 404:
                    raise
            except OSError:  # the server is gone, and its kernels with it
                continue


class OffSite:
    """Blocks every request that leaves 127.0.0.1 (unless allowed) and records it."""

    def __init__(self):
        self.blocked: list[str] = []
        self.allowed: list[str] = []

    def websocket(self, ws):
        """Websockets bypass routing; one that leaves 127.0.0.1 is recorded as blocked."""
        if urlparse(ws.url).hostname not in LOCAL_HOSTS:
            self.blocked.append(ws.url)

    def __call__(self, route):
        url = route.request.url
        scheme = urlparse(url).scheme
        host = urlparse(url).hostname
        if scheme in {"data", "blob"} or host in LOCAL_HOSTS:
            route.continue_()
        elif any(url.startswith(prefix) for prefix in ALLOWED_OFF_SITE):
            self.allowed.append(url)
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("blockedbyclient")


def page_url(site: str, docname: str) -> str:
    return f"{site}{docname}.html"


# Every axe rule runs (best-practice, experimental and deprecated ones too), except the
# AAA rule below: the book's target is WCAG 2.1 AA. It would fail on the theme's link
# blue (4.78:1) and on the code-highlighting colours (about 6.8:1), which meet AA
# (4.5:1) but not AAA (7:1).
AXE_RULES_OFF = {"color-contrast-enhanced": "WCAG 1.4.6 Contrast (Enhanced) is level AAA"}


def run_axe(page, quiet_ms: int = 500) -> list[dict]:
    """axe-core (pinned in package-lock.json) with every rule on but AXE_RULES_OFF, once the
    page has had ``quiet_ms`` without DOM changes (0 for a page without the book's theme)."""
    assert AXE.is_file(), f"{AXE} is missing: run `npm ci`"
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(
        """async ([off, quietMs]) => {
            // Judge the page as it will stay. The theme makes a wide output a tab stop 300 ms
            // after it arrives (a debounced MutationObserver): wait for half a second without
            // changes (at most 10 s). Then wait out fades: a hidden cell opening fades its
            // content in, and mid-fade text is paler than it will be.
            if (quietMs > 0) await new Promise(resolve => {
                const done = () => { observer.disconnect(); clearTimeout(cap); resolve(); };
                let quiet = setTimeout(done, quietMs);
                const observer = new MutationObserver(() => {
                    clearTimeout(quiet); quiet = setTimeout(done, quietMs);
                });
                observer.observe(document.body, {subtree: true, childList: true, characterData: true});
                const cap = setTimeout(done, 10_000);
            });
            // (a fade or a transition ends within seconds; reveal.js's control hint loops
            // for 100 s and a spinner forever: those are not waited for)
            await Promise.all(document.getAnimations()
                .filter(a => a.effect && a.effect.getComputedTiming().endTime - (a.currentTime || 0) <= 5_000)
                .map(a => a.finished.catch(() => null)));
            const rules = Object.fromEntries(axe.getRules().map(r => [r.ruleId, {enabled: !off.includes(r.ruleId)}]));
            const result = await axe.run(document, {rules, resultTypes: ['violations']});
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, tags: v.tags, help: v.help,
                nodes: v.nodes.map(n => ({target: n.target, html: n.html.slice(0, 300),
                                          summary: n.failureSummary}))}));
        }""",
        [sorted(AXE_RULES_OFF), quiet_ms],
    )


def describe(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        for node in v["nodes"][:5]:
            lines.append(f"    {node['target']}: {node['html'][:160]}")
            lines.append(f"      {node['summary'][:300]}".replace("\n", " "))
    return "\n".join(lines)


# --- live code, as a student starts and uses it ---------------------------------------------

READY_TIMEOUT = 120_000   # ms: kernel start and the page's set-up cells, on a busy 2-core machine
RUN_TIMEOUT = 240_000     # ms: running a cell may first run every cell above it

CELLS = "article div.cell"
FIND_CELLS = """() => [...document.querySelectorAll('article div.cell')].map((c, i) => ({
    i,
    init: c.classList.contains('tag_thebe-init'),
    raises: c.classList.contains('tag_raises-exception'),
    live: !!c.querySelector('.thebe-cell'),
    hidden: !!c.querySelector('details:not([open]) .thebe-cell'),
    figure: !!c.querySelector('.cell_output img'),
}))"""


def start_live_code(page) -> dict:
    """Click rocket -> Live Code; wait for the kernel and the set-up cells; return timings in s."""
    page.click(".dropdown-launch-buttons > button.dropdown-toggle")
    page.click(".dropdown-launch-buttons .btn-launch-thebe")
    return wait_ready(page)


def wait_ready(page) -> dict:
    page.wait_for_function("['ready', 'failed'].includes(window.rec11LiveCode && window.rec11LiveCode.state)",
                           timeout=READY_TIMEOUT)
    live = page.evaluate("window.rec11LiveCode")
    assert live["state"] == "ready", f"live code failed: {live['error']}; status: {status_text(page)}"
    t = live["timings"]
    return {"kernel": (t["kernel"] - t["click"]) / 1000, "ready": (t["ready"] - t["click"]) / 1000}


def status_text(page) -> str:
    return page.inner_text(".rec11-live-status")


def output_text(page, i: int) -> str:
    return page.locator(CELLS).nth(i).locator(".cell_output").text_content() or ""


def wait_output(page, i: int, text: str) -> float:
    """Seconds until cell i's output contains `text`."""
    start = time.perf_counter()
    page.wait_for_function(
        "([i, text]) => document.querySelectorAll('article div.cell')[i]"
        "  .querySelector('.cell_output').innerText.includes(text)",
        arg=[i, text], timeout=RUN_TIMEOUT)
    return time.perf_counter() - start


def first_editable(cells) -> dict:
    """The first cell a student would edit: visible if any is, else the first hidden one."""
    candidates = [c for c in cells if c["live"] and not c["init"] and not c["raises"]]
    return next((c for c in candidates if not c["hidden"]), candidates[0])


TOGGLE_STATE = """cell => [...cell.querySelectorAll('details')].map(d => {
    const s = d.querySelector(':scope > summary').getBoundingClientRect();
    const hit = document.elementFromPoint(s.x + s.width / 2, s.y + s.height / 2);
    return {open: d.open, summary: [s.x, s.y, s.width, s.height].map(Math.round),
            under_its_centre: hit && hit.outerHTML.slice(0, 120)};
})"""


def reveal(box, cell: dict, wait_ms: int = 10_000) -> None:
    """Open the "Show code cell" toggle of a cell whose code is hidden, as a student would,
    and wait for its run button to show.

    CI twice found a toggle still closed 30 s after its click (further/diffusion at one
    seed; never when the tests were rerun, alone or all together). A student whose click
    did nothing clicks again: so does this, once, and the report's "toggles" table keeps
    what the page showed after the first click, so that the cause can be found."""
    if not cell["hidden"]:
        return
    run_button = box.locator(".thebe-run-button").first
    for attempt in (1, 2):
        box.locator("details:not([open]) > summary").first.click()
        try:
            run_button.wait_for(state="visible", timeout=wait_ms)
            return
        except Exception as error:
            state = box.evaluate(TOGGLE_STATE)
            if attempt == 2:
                raise AssertionError(f"cell {cell['i']}: two clicks on its 'Show code' toggle did not show "
                                     f"its code: {state}") from error
            if all(toggle["open"] for toggle in state):
                raise AssertionError(f"cell {cell['i']}: its 'Show code' toggle opened, yet its code did not "
                                     f"show: {state}") from error
            where = f"{box.page.url.split('/book/', 1)[-1]} cell {cell['i']}"
            REPORT["toggles that needed a second click"][where] = {"after the first click": str(state)[:300]}


# Loaded: the load event has fired, every image the page has asked for is complete (lazy
# ones load when scrolled to), the fonts are in, and the page's math, if MathJax is there
# (only a live output loads it), is typeset. Each condition is its own entry, so that a
# deadline names the one still false.
SETTLED = {
    "the load event": "document.readyState === 'complete'",
    "every image asked for": "[...document.images].every(i => i.loading === 'lazy' && !i.currentSrc"
                             " || i.complete)",
    "the fonts": "document.fonts.status === 'loaded'",
}
# Checked from here, at an interval: Playwright's wait_for_function polls inside the page,
# on animation frames (a page that paints nothing, or a machine too busy to produce frames,
# may run no frame callback for seconds) or on the page's timers, and a page with JavaScript
# turned off runs no timers: it is looked at once, and if it had not settled by then the
# wait runs out with every condition true (CI failed so on book/generation without
# JavaScript, twice).
POLL_S = 0.1


def settle(page, timeout: float = 20_000) -> None:
    """Wait until the page has loaded what it asked for (``SETTLED``), then until MathJax,
    if the page loaded it, has typeset; the deadline's error names each condition still
    false and the images still loading."""
    everything = " && ".join(f"({js})" for js in SETTLED.values())
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(f"() => {everything}"):
        if time.monotonic() > deadline:
            still = [name for name, js in SETTLED.items() if not page.evaluate(f"() => {js}")]
            images = page.evaluate("""() => [...document.images]
                .filter(i => !i.complete && !(i.loading === 'lazy' && !i.currentSrc))
                .map(i => i.currentSrc || i.src).slice(0, 5)""")
            raise AssertionError(f"the page did not settle within {timeout / 1000:g} s: still false:"
                                 f" {', '.join(still) or 'none (each was true when read after the deadline)'};"
                                 f" images loading: {images}")
        time.sleep(POLL_S)
    typeset = "() => !window.MathJax || !MathJax.startup || !MathJax.startup.promise"
    if not page.evaluate(typeset):
        try:
            page.evaluate(f"() => Promise.race([MathJax.startup.promise.then(() => true),"
                          f" new Promise((_, no) => setTimeout(() => no(new Error('timeout')), {timeout}))])")
        except Exception as err:
            raise AssertionError(f"the page loaded, but MathJax had not typeset within"
                                 f" {timeout / 1000:g} s") from err


def live_code_loaded(page) -> None:
    """Wait until Live Code's module has run (its state machine is published, idle), so that
    the launch button starts it."""
    page.wait_for_function("window.rec11LiveCode && window.rec11LiveCode.state === 'idle'", timeout=20_000)


def active(page, selector: str) -> bool:
    """Whether the element that has the keyboard's focus matches ``selector``."""
    return page.evaluate("(s) => !!document.activeElement && document.activeElement.matches(s)", selector)


def tab_to(page, selector: str, limit: int) -> int:
    """Press Tab until the focused element matches; return how many presses it took."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if active(page, selector):
            return presses
    raise AssertionError(f"{selector} not reached after {limit} presses of Tab")


def open_page(context, site: str, docname: str):
    """A new tab on the page, loaded (``settle``)."""
    page = context.new_page()
    page.goto(page_url(site, docname))
    settle(page)
    return page


def type_and_run(page, cell: dict, code: str, where: str = "start") -> None:
    """Type ``code`` as a new line of a live cell, at its start or its end, and press its run button."""
    box = page.locator(CELLS).nth(cell["i"])
    reveal(box, cell)
    box.locator(".CodeMirror").click()
    if where == "start":
        page.keyboard.press("Control+Home")
        page.keyboard.type(code)
        page.keyboard.press("Enter")
    else:
        page.keyboard.press("Control+End")
        page.keyboard.press("Enter")
        page.keyboard.press("Shift+Home")
        page.keyboard.type(code)
    box.locator(".thebe-run-button").click()


def start_jupyter(cmd: list[str], status_url: str, log_path: Path, what: str, timeout: float = 90,
                  **popen) -> subprocess.Popen:
    """Start a Jupyter server (or JupyterLab) and return once ``status_url`` answers; fail
    naming the log if it never does."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, **popen)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(status_url, timeout=2):
                return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"{what} did not start; see {log_path}") from None
            time.sleep(0.3)


@contextmanager
def jupyter_process(cmd: list[str], status_url: str, log_path: Path, what: str, timeout: float = 90, **popen):
    """Run a Jupyter server (or JupyterLab) until the block ends (``start_jupyter``)."""
    proc = start_jupyter(cmd, status_url, log_path, what, timeout, **popen)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
