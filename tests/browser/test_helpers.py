"""The browser tests' own waits, on pages made for them: they must see a page settle and a
hidden cell open, whether or not the page runs JavaScript."""

from __future__ import annotations

import io
import time

import pytest
from browser_support import REPORT, reveal, settle
from PIL import Image

pytestmark = pytest.mark.browser

SLOW_IMAGE = ("<!doctype html><title>slow</title><p>a figure that arrives late</p>"
              "<img src='http://127.0.0.1:9/late.png' alt='late'>")


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (2, 2)).save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize("javascript", [True, False], ids=["with JavaScript", "without"])
def test_settle_sees_a_page_settle_after_its_first_look(browser, javascript):
    # Playwright's own wait polls on the page's timers, which a page without JavaScript
    # never runs: it looked once, and ran out with every condition true (CI, twice).
    ctx = browser.new_context(java_script_enabled=javascript)
    try:
        def late(route):
            time.sleep(1.0)  # the image is still loading when settle first looks
            route.fulfill(status=200, content_type="image/png", body=png())

        ctx.route("**/late.png", late)
        page = ctx.new_page()
        page.set_content(SLOW_IMAGE, wait_until="commit")
        start = time.monotonic()
        settle(page, timeout=10_000)
        assert page.evaluate("document.images[0].complete")
        assert time.monotonic() - start < 8, "settled, but only near the deadline"
    finally:
        ctx.close()


def toggle_page(swallowed: int) -> str:
    """A cell whose "Show code" toggle ignores its first ``swallowed`` clicks."""
    return ("<div class=cell><details><summary>Show code cell source</summary><div class=thebe-cell>"
            "<button class=thebe-run-button>run</button></div></details></div><script>let n = 0;"
            f"document.querySelector('summary').addEventListener('click', e => {{ if (n++ < {swallowed})"
            " e.preventDefault(); });</script>")


def test_reveal_opens_a_toggle_and_says_when_it_took_a_second_click(browser):
    def cell(swallowed):  # a page of its own each time: set_content keeps the window's globals
        page = browser.new_page()
        page.set_content(toggle_page(swallowed))
        return page.locator("div.cell")

    try:
        # a second each: these made-up pages answer a click at once (the book's pages get 10 s)
        reveal(cell(0), {"hidden": True, "i": 0}, wait_ms=1_000)
        assert not REPORT["toggles that needed a second click"]
        reveal(cell(1), {"hidden": True, "i": 0}, wait_ms=1_000)
        [row] = REPORT["toggles that needed a second click"].values()
        assert "'open': False" in row["after the first click"] and "<summary>" in row["after the first click"]
        with pytest.raises(AssertionError, match="two clicks on its 'Show code' toggle did not show its code"):
            reveal(cell(5), {"hidden": True, "i": 0}, wait_ms=1_000)
    finally:
        REPORT["toggles that needed a second click"].clear()  # made-up pages, not the book's
