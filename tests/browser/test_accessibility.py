"""Accessibility (WCAG 2.1 AA): axe-core on every page as it loads. Live Code by keyboard
alone, and axe with it running, are checked in test_live_code.py, in each page's one Live
Code session.

axe-core is the pinned npm copy (package-lock.json), injected into each page. Every
rule runs, best-practice, experimental and deprecated included, except the one AAA
contrast rule named in browser_support.AXE_RULES_OFF. Fixes to the stock theme are
in src/rec11_book/static/rec11-a11y.js and rec11.css.
"""

from __future__ import annotations

import pytest
from browser_support import book_dir, describe, open_page, page_url, run_axe, settle, site_pages
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = pytest.mark.browser

ALL_PAGES = site_pages(book_dir())


@pytest.mark.parametrize("docname", ALL_PAGES)
def test_axe_finds_no_violations(context, site, docname):
    page = open_page(context, site, docname)
    violations = run_axe(page)
    assert not violations, f"{docname}:\n{describe(violations)}"


# Each displayed formula: [wider than its column, its tabindex]
FORMULAS = """() => [...document.querySelectorAll("mjx-container[display='true'], div.math-wrapper")]
    .map(m => [m.scrollWidth > m.clientWidth, m.getAttribute("tabindex")])"""


def formulas_once_settled(page) -> list[list]:
    """The formulas' state once each is a tab stop exactly when it is wider than its column
    (the fix runs after the browser lays the page out); at most 5 s, then as they are."""
    agreed = f"() => ({FORMULAS})().every(([wide, tabindex]) => wide === (tabindex === '0'))"
    try:
        page.wait_for_function(agreed, timeout=5_000)
    except PlaywrightTimeout:  # the assertion below shows the state that never agreed
        pass
    return page.evaluate(FORMULAS)


def test_a_wide_formula_is_a_tab_stop_while_it_is_wider_than_its_column(context, site):
    """scrollable-region-focusable at every width: on a phone a displayed formula wider than
    the column scrolls sideways, so the keyboard must reach it; on a desktop it fits, and
    it is no tab stop (rec11-a11y.js)."""
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(page_url(site, "book/diffusion"))
    settle(page)
    for width, some_wide in ((390, True), (1280, False), (390, True)):
        page.set_viewport_size({"width": width, "height": 844})
        found = formulas_once_settled(page)
        assert found and any(wide for wide, _ in found) == some_wide, f"at {width} px: {found}"
        wrong = [f for f in found if f[0] != (f[1] == "0")]
        assert not wrong, f"at {width} px, [wider than its column, tabindex] of each formula: {found}"
