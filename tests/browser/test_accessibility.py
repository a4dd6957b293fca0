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
from browser_support import book_dir, describe, open_page, run_axe, site_pages

pytestmark = pytest.mark.browser

ALL_PAGES = site_pages(book_dir())


@pytest.mark.parametrize("docname", ALL_PAGES)
def test_axe_finds_no_violations(context, site, docname):
    page = open_page(context, site, docname)
    violations = run_axe(page)
    assert not violations, f"{docname}:\n{describe(violations)}"
