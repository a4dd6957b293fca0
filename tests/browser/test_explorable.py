"""Explorable figures (rec11.explore): a reader on a phone moves the slider by keyboard and by touch.

Every page of the built site with an explorable figure (``class="rec11-explore"`` in its
HTML) is opened in a 390 x 844 phone window with touch. Each figure's control is
reached with Tab and moved with the arrow keys, End and Home through every frame, then
tapped on its track: after each move the ``<img>`` (``src``, ``alt``, loaded), the
input's ``aria-valuetext`` and the ``<output>`` are the frame the input's value names,
the figure does not change size, and the polite live region reads the frame's alt text
once the reader stops. Nothing leaves 127.0.0.1 and the console stays clean.

The page's weight is measured as ``test_page_weight.py`` measures it (bytes
transferred, gzip as the site's server sends them) before any control is touched,
when no frame but the default may have been fetched, and after every control went
through every frame, each frame fetched once (even after a garbage collection between
the first touch and the moves); both numbers are printed in the report. The control
keeps its height whatever the frame, at widths from 320 to 1440 px. axe-core finds
nothing in or around the figures with the controls shown and moved, and nothing
elsewhere on the page but the violations listed in ``KNOWN_ELSEWHERE`` (printed in the
report). Without JavaScript a figure is its default frame and caption, the same size,
with no control to reach; in print, the default frame and the line saying the figure
can be explored online, with no control and no live region. The deck's copies of the
figures (``slides/``) are the default frame alone.

The book must have at least ``MIN_PAGES`` pages with explorable figures. To work on
these tests with a smaller scratch book, set ``REC11_EXPLORE_MIN_PAGES`` (with
``REC11_BROWSER_BOOK`` or ``REC11_BROWSER_SITE``, see conftest.py).
"""

from __future__ import annotations

import os
import re

import pytest
from browser_support import REPORT, book_dir, describe, page_url, run_axe, settle, site_pages, tab_to

from rec11_tools.pagespeed import ENTRIES, MAX_PAGE_BYTES, SCROLL

pytestmark = pytest.mark.browser

MIN_PAGES = int(os.environ.get("REC11_EXPLORE_MIN_PAGES") or 4)
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True,
         "has_touch": True}
ANNOUNCE_TIMEOUT = 5_000  # ms: the script reads the alt text 400 ms after the last change
TABLE = "explorable figures: bytes before / after"
AXE_TABLE = "explorable pages on a phone: known axe violations outside the figures"
REPORT.setdefault(TABLE, {})
REPORT.setdefault(AXE_TABLE, {})

# axe violations on these pages, at 390 px, that are not the explorable figures' and are
# known (none today: wide display math became a tab stop, static/rec11-a11y.js).
KNOWN_ELSEWHERE: dict[str, str] = {}


def known_elsewhere(violation: dict) -> bool:
    where = KNOWN_ELSEWHERE.get(violation["id"])
    return bool(where) and all(where in str(node["target"]) for node in violation["nodes"])


def _source_pages(book) -> list[str]:
    """Toc pages whose source has a code cell calling explore(): the pages to test.

    Tests are parametrized when pytest collects them, before the site is built, so the
    list comes from the sources; ``test_the_book_has_its_explorable_figures`` checks it
    against the built HTML, the list that counts.
    """
    found = []
    for page in site_pages(book):
        text = (book / f"{page}.md").read_text()
        cells = re.findall(r"^```{code-cell}[^\n]*\n(.*?)^```", text, re.M | re.S)
        if any(re.search(r"\bexplore\(", cell) for cell in cells):
            found.append(page)
    return found


PAGES = _source_pages(book_dir())


@pytest.fixture(scope="session")
def explorable_pages(built_site) -> dict[str, list[str]]:
    """Built pages with an explorable figure: {"pages": with its control and frames,
    "stills": with the figure but neither (the deck keeps only the default frame)}."""
    html = built_site["html"]
    found = {"pages": [], "stills": []}
    for path in sorted(html.rglob("*.html")):
        text = path.read_text()
        if 'class="rec11-explore"' in text:
            kind = "pages" if 'class="rec11-explore-frames"' in text else "stills"
            found[kind].append(str(path.relative_to(html).with_suffix("")))
    return found


@pytest.fixture
def phone(browser, context):
    """A phone-sized, touch-screen context behind the same off-site guard as every browser test."""
    ctx = browser.new_context(**PHONE)
    ctx.route("**/*", context.off_site)
    ctx.off_site = context.off_site
    yield ctx
    ctx.close()


# --- the page and its figures ------------------------------------------------------------

STATE = """(id) => {
    const figure = document.getElementById(id);
    const img = figure.querySelector('img');
    const input = figure.querySelector('input[type=range]');
    const box = figure.getBoundingClientRect();
    return {
        value: Number(input.value), default: Number(input.defaultValue),
        min: Number(input.min), max: Number(input.max),
        src: img.src, alt: img.getAttribute('alt'), loaded: img.complete && img.naturalWidth > 0,
        valuetext: input.getAttribute('aria-valuetext'),
        output: figure.querySelector('output').textContent,
        live: figure.querySelector('.rec11-explore-live').textContent,
        height: Math.round(box.height), width: Math.round(box.width),
        frames: JSON.parse(figure.querySelector('.rec11-explore-frames').textContent)
            .map(f => ({...f, src: new URL(f.src, document.baseURI).href})),
    };
}"""
FIGURES = "() => [...document.querySelectorAll('.rec11-explore')].map(f => f.id)"
SHOWS = """([id, src]) => {
    const img = document.getElementById(id).querySelector('img');
    return img.src === src && img.complete && img.naturalWidth > 0;
}"""
FETCHED = """(urls) => {
    const done = new Set(performance.getEntriesByType('resource').map(e => e.name));
    return urls.every(u => done.has(u));
}"""
IN_FIGURE = """(selectors) => selectors.map(s => {
    const node = document.querySelector(s);
    return !node || !!node.closest('figure:has(.rec11-explore), .rec11-explore')
        || node.cloneNode(false).outerHTML.includes('rec11-explore');  // e.g. an id it repeats
})"""
LIVE_READS = "([id, text]) => document.getElementById(id).querySelector('.rec11-explore-live').textContent === text"


class Watched:
    """A page with its console errors, uncaught exceptions and requests recorded from the start."""

    def __init__(self, ctx, site: str, docname: str):
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = page = ctx.new_page()
        page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        page.on("request", lambda r: self.requests.append(r.url))
        page.goto(page_url(site, docname))
        settle(page)

    def figures(self) -> list[str]:
        return self.page.evaluate(FIGURES)

    def state(self, ident: str) -> dict:
        return self.page.evaluate(STATE, ident)


def check_shows_its_value(page, ident: str, before: dict, where: str) -> dict:
    """The image, the alt text, aria-valuetext and the output are the frame at the input's value;
    the frame has loaded; the figure kept its size; the live region reads the alt text."""
    now = page.evaluate(STATE, ident)
    frame = now["frames"][now["value"]]
    assert now["src"] == frame["src"], f"{where}: value {now['value']} shows {now['src']}, not {frame['src']}"
    assert now["alt"] == frame["alt"], f"{where}: value {now['value']}: alt {now['alt']!r}, not {frame['alt']!r}"
    assert now["valuetext"] == frame["text"], f"{where}: aria-valuetext {now['valuetext']!r}, not {frame['text']!r}"
    assert now["output"] == frame["text"], f"{where}: the output says {now['output']!r}, not {frame['text']!r}"
    page.wait_for_function(SHOWS, arg=[ident, frame["src"]], timeout=10_000)
    assert (now["width"], now["height"]) == (before["width"], before["height"]), (
        f"{where}: the figure changed size from {before['width']}x{before['height']} px to "
        f"{now['width']}x{now['height']} px (the text below it moves)")
    if now["value"] != before["value"]:
        try:
            page.wait_for_function(LIVE_READS, arg=[ident, frame["alt"]], timeout=ANNOUNCE_TIMEOUT)
        except Exception:  # noqa: BLE001 - a timeout, reported as what the page shows
            live = page.evaluate(STATE, ident)["live"]
            raise AssertionError(f"{where}: the live region reads {live!r}, not the frame's alt "
                                 f"{frame['alt']!r}") from None
    return page.evaluate(STATE, ident)


def assert_clean(watched: Watched, ctx, docname: str) -> None:
    assert not ctx.off_site.blocked, f"{docname}: off-site requests: {ctx.off_site.blocked}"
    assert not watched.errors, f"{docname}: console errors: {watched.errors}"


# --- the tests ----------------------------------------------------------------------------


def test_the_book_has_its_explorable_figures(explorable_pages):
    """The pages tested below are those of the built site that have an explorable figure."""
    pages = explorable_pages["pages"]
    assert len(pages) >= MIN_PAGES, (
        f"{len(pages)} built page(s) with an explorable figure ({pages}); "
        f"the book should have at least {MIN_PAGES} (REC11_EXPLORE_MIN_PAGES)")
    assert sorted(PAGES) == pages, (
        f"the pages whose source calls explore() ({sorted(PAGES)}) are not the built pages with an "
        f"explorable figure ({pages}): the tests below would miss some")
    stills = [page for page in explorable_pages["stills"] if not page.startswith("slides/")]
    assert not stills, f"explorable figures without their frames, outside the deck: {stills}"


@pytest.mark.parametrize("docname", PAGES)
def test_keyboard_moves_every_slider_through_every_frame(phone, site, docname):
    watched = Watched(phone, site, docname)
    page = watched.page
    figures = watched.figures()
    assert figures, f"{docname}: no explorable figure"
    for ident in figures:
        state = watched.state(ident)
        assert page.locator(f"#{ident} .rec11-explore-control").is_visible(), f"{ident}: the control stays hidden"
        assert state["live"] == "", f"{ident}: the live region speaks before the reader moves anything"
        assert state["max"] == len(state["frames"]) - 1 and state["min"] == 0
        assert state["value"] == state["default"], f"{ident}: starts at {state['value']}, not its default"
        page.locator(f"#{ident}").scroll_into_view_if_needed()  # a lazy default frame loads
        state = check_shows_its_value(page, ident, state, f"{docname} {ident} on load")
        tab_to(page, f"#{ident} input[type=range]", limit=600)  # the figure's slider
        outline = page.locator(f"#{ident} input[type=range]").evaluate(
            "e => e.matches(':focus-visible') && getComputedStyle(e).outlineStyle !== 'none'"
            " && parseFloat(getComputedStyle(e).outlineWidth) >= 2")
        assert outline, f"{ident}: no visible focus outline on the slider reached by Tab"
        n = len(state["frames"])
        keys = ["ArrowRight", "ArrowLeft", "End", "Home"] + ["ArrowRight"] * (n - 1)
        seen = {state["value"]}
        for key in keys:
            expected = {"ArrowRight": state["value"] + 1, "ArrowLeft": state["value"] - 1,
                        "End": n - 1, "Home": 0}[key]
            page.keyboard.press(key)
            state = check_shows_its_value(page, ident, state, f"{docname} {ident} after {key}")
            assert state["value"] == min(max(expected, 0), n - 1), f"{ident}: {key} went to {state['value']}"
            seen.add(state["value"])
        assert seen == set(range(n)), f"{ident}: frames never shown: {sorted(set(range(n)) - seen)}"
    assert_clean(watched, phone, docname)


@pytest.mark.parametrize("docname", PAGES)
def test_a_tap_on_the_track_picks_that_frame(phone, site, docname):
    watched = Watched(phone, site, docname)
    page = watched.page
    for ident in watched.figures():
        state = watched.state(ident)
        n, default = len(state["frames"]), state["value"]
        assert n > 1, f"{ident}: one frame, nothing to explore"
        target = 0 if default >= n / 2 else n - 1  # towards the far end from the default
        target = (target + default) // 2 if abs(target - default) > 1 else target  # not at the very end
        own = {f["src"] for f in state["frames"]} - {state["frames"][default]["src"]}
        assert not own & set(watched.requests), f"{ident}: frames fetched before a touch"
        slider = page.locator(f"#{ident} input[type=range]")
        slider.scroll_into_view_if_needed()
        box = slider.bounding_box()
        # Chromium's thumb is about 16 px wide; its centre runs from 8 px to width - 8 px.
        thumb, step = 16, (box["width"] - 16) / (n - 1)
        x = box["x"] + thumb / 2 + step * target
        page.touchscreen.tap(x, box["y"] + box["height"] / 2)
        state = check_shows_its_value(page, ident, state, f"{docname} {ident} after a tap at frame {target}")
        assert state["value"] != default, f"{ident}: a tap on the track at frame {target} did not move it"
        # Where frames are a few px apart on the track, a tap may land on the next one.
        assert abs(state["value"] - target) <= (0 if step >= 24 else 1), (
            f"{ident}: a tap at frame {target}'s place chose frame {state['value']}")
        page.wait_for_function(FETCHED, arg=sorted(own), timeout=10_000)
    assert_clean(watched, phone, docname)


WIDTHS = (320, 360, 390, 430, 600, 768, 1024, 1280, 1440)  # px: phones to desktops
CONTROL_HEIGHTS = """() => [...document.querySelectorAll('.rec11-explore')].map(f => {
    const input = f.querySelector('input[type=range]');
    const control = f.querySelector('.rec11-explore-control');
    const start = input.value, heights = [];
    for (let k = Number(input.min); k <= Number(input.max); k++) {
        input.value = k;
        input.dispatchEvent(new Event('input'));
        heights.push(Math.round(control.getBoundingClientRect().height));
    }
    input.value = start;
    input.dispatchEvent(new Event('input'));
    return [f.id, heights];
})"""


@pytest.mark.parametrize("docname", PAGES)
def test_the_control_keeps_its_height_at_every_width(browser, phone, site, docname):
    """The value in words changes length from frame to frame; the control must not wrap
    differently for some frames, at any window width, or the text below it would jump."""
    ctx = browser.new_context()
    ctx.route("**/*", phone.off_site)
    try:
        page = ctx.new_page()
        page.goto(page_url(site, docname))
        settle(page)
        moved = []
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            for ident, heights in page.evaluate(CONTROL_HEIGHTS):
                if len(set(heights)) > 1:
                    moved.append(f"{ident} at {width} px: {heights}")
        assert not moved, f"{docname}: the control's height changes with the frame: {moved}"
    finally:
        ctx.close()


@pytest.mark.parametrize("docname", PAGES)
def test_page_weight_before_and_after_every_frame(phone, site, docname):
    """Only default frames before a control is touched; every frame once it is, fetched once."""
    watched = Watched(phone, site, docname)
    page = watched.page
    figures = {ident: watched.state(ident) for ident in watched.figures()}
    defaults = {s["frames"][s["value"]]["src"] for s in figures.values()}
    every_frame = {f["src"] for s in figures.values() for f in s["frames"]}

    # What test_page_weight.py weighs: the page, scrolled to its end, every dropdown open.
    page.evaluate(SCROLL)
    settle(page)
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.evaluate(SCROLL)
    settle(page)
    before = sum(e["transfer"] for e in page.evaluate(ENTRIES))
    early = sorted((set(watched.requests) & every_frame) - defaults)
    assert not early, f"{docname}: frames fetched before any control was touched: {early}"
    unloaded = sorted(defaults - set(watched.requests))
    assert not unloaded, f"{docname}: default frames never loaded: {unloaded}"

    for number, (ident, state) in enumerate(figures.items()):
        slider = page.locator(f"#{ident} input[type=range]")
        slider.focus()
        own = {f["src"] for f in state["frames"]}
        try:
            page.wait_for_function(FETCHED, arg=sorted(own), timeout=10_000)
        except Exception:  # noqa: BLE001 - a timeout, reported as what the page shows
            missing = sorted(own - set(watched.requests))
            raise AssertionError(f"{ident}: focus did not fetch its frames: {missing}") from None
        fetched = set(watched.requests) & every_frame
        later = {f["src"] for s in list(figures.values())[number + 1:] for f in s["frames"]} - defaults - own
        assert not fetched & later, f"{ident}: focus fetched another figure's frames: {sorted(fetched & later)}"
        # The browser may collect garbage before the reader moves the slider; the frames
        # fetched must still be at hand. (Routing requests, as every test here does,
        # turns off Chromium's HTTP cache: only the page's own memory cache can serve them.)
        page.context.new_cdp_session(page).send("HeapProfiler.collectGarbage")
        page.keyboard.press("Home")
        for _ in range(len(state["frames"]) - 1):
            page.keyboard.press("ArrowRight")
            now = watched.state(ident)
            page.wait_for_function(SHOWS, arg=[ident, now["frames"][now["value"]]["src"]], timeout=10_000)
    settle(page)
    after = sum(e["transfer"] for e in page.evaluate(ENTRIES))
    twice = sorted({url for url in watched.requests if url in every_frame and watched.requests.count(url) > 1})

    REPORT[TABLE][docname] = {
        "figures": str(len(figures)),
        "frames": str(sum(len(s["frames"]) for s in figures.values())),
        "before any touch (gzip)": f"{before / 1000:.0f} kB",
        "after every frame (gzip)": f"{after / 1000:.0f} kB",
    }
    assert not twice, f"{docname}: frames fetched more than once: {twice}"
    assert 0 < before <= MAX_PAGE_BYTES, f"{docname}: {before} bytes transferred before a control is touched"
    assert after > before, f"{docname}: moving the sliders fetched nothing"
    assert_clean(watched, phone, docname)


@pytest.mark.parametrize("docname", PAGES)
def test_axe_finds_nothing_with_the_controls_shown_and_moved(phone, site, docname):
    watched = Watched(phone, site, docname)
    page = watched.page
    for ident in watched.figures():
        state = watched.state(ident)
        page.locator(f"#{ident} input[type=range]").focus()
        page.keyboard.press("Home" if state["value"] else "End")
        state = check_shows_its_value(page, ident, state, f"{docname} {ident}")
        assert page.locator(f"#{ident} .rec11-explore-control").is_visible()
    violations = run_axe(page)
    figures, elsewhere = [], []
    for violation in violations:
        targets = [n["target"][-1] for n in violation["nodes"] if isinstance(n["target"][-1], str)]
        inside = page.evaluate(IN_FIGURE, targets)
        if any(inside) or len(targets) < len(violation["nodes"]):
            figures.append(violation)
        else:
            elsewhere.append(violation)
    assert not figures, f"{docname}, in or around its explorable figures:\n{describe(figures)}"
    unknown = [v for v in elsewhere if not known_elsewhere(v)]
    assert not unknown, f"{docname}, outside its explorable figures:\n{describe(unknown)}"
    if elsewhere:
        REPORT[AXE_TABLE][docname] = {"rule": ", ".join(v["id"] for v in elsewhere),
                                      "nodes": str(sum(len(v["nodes"]) for v in elsewhere))}
    assert_clean(watched, phone, docname)


@pytest.mark.parametrize("docname", PAGES)
def test_without_javascript_a_figure_is_its_default_frame_and_caption(browser, phone, site, docname):
    with_js = Watched(phone, site, docname)
    shown = {ident: with_js.state(ident) for ident in with_js.figures()}
    ctx = browser.new_context(**PHONE, java_script_enabled=False)
    ctx.route("**/*", phone.off_site)
    try:
        page = ctx.new_page()
        page.goto(page_url(site, docname))
        settle(page)
        figures = page.evaluate(FIGURES)
        assert figures == list(shown), f"{docname}: not the same figures without JavaScript"
        for ident in figures:
            state = page.evaluate(STATE, ident)
            frame = state["frames"][state["default"]]
            figure = page.locator(f"#{ident}")
            assert (state["src"], state["alt"]) == (frame["src"], frame["alt"]), f"{ident}: not the default frame"
            assert figure.locator("img").is_visible(), f"{ident}: no image without JavaScript"
            caption = page.locator(f"figure:has(#{ident}) figcaption")
            assert caption.is_visible() and caption.inner_text().strip(), f"{ident}: no caption without JavaScript"
            assert not figure.locator(".rec11-explore-control").is_visible(), f"{ident}: a control that does nothing"
            assert not figure.locator(".rec11-explore-print").is_visible()
            assert page.evaluate("""(id) => {
                const input = document.getElementById(id).querySelector('input');
                input.focus();
                return document.activeElement !== input;
            }""", ident), f"{ident}: the dead slider can take the focus"
            assert (state["width"], state["height"]) == (shown[ident]["width"], shown[ident]["height"]), (
                f"{ident}: {state['width']}x{state['height']} px without JavaScript, "
                f"{shown[ident]['width']}x{shown[ident]['height']} px with it: the page moves when the script runs")
        # Tab, through the whole page, never stops on a dead slider
        for presses in range(1, 1000):  # noqa: B007 - read after the loop
            page.keyboard.press("Tab")
            where = page.evaluate("""() => document.activeElement === document.body ? 'end'
                : document.activeElement.closest('.rec11-explore') ? 'figure' : 'elsewhere'""")
            assert where != "figure", f"{docname}: Tab reached a control that does nothing"
            if where == "end":
                break
        assert presses > 1, f"{docname}: Tab went nowhere"
    finally:
        ctx.close()
    assert_clean(with_js, phone, docname)


@pytest.mark.parametrize("docname", PAGES)
def test_print_shows_the_default_frame_and_says_it_can_be_explored(phone, site, docname):
    watched = Watched(phone, site, docname)
    page = watched.page
    page.emulate_media(media="print")
    for ident in watched.figures():
        figure = page.locator(f"#{ident}")
        figure.scroll_into_view_if_needed()
        state = watched.state(ident)
        frame = state["frames"][state["default"]]
        assert state["src"] == frame["src"], f"{ident}: prints {state['src']}, not the default frame"
        page.wait_for_function(SHOWS, arg=[ident, frame["src"]], timeout=10_000)
        assert figure.locator("img").is_visible(), f"{ident}: the figure does not print"
        for hidden in (".rec11-explore-control", ".rec11-explore-live"):
            display = figure.locator(hidden).evaluate("e => getComputedStyle(e).display")
            assert display == "none", f"{ident}: {hidden} prints (display: {display})"
        line = figure.locator(".rec11-explore-print")
        assert line.is_visible() and "slider" in line.inner_text(), f"{ident}: print does not say it can be explored"
    assert_clean(watched, phone, docname)
