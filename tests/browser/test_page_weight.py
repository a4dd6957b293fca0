"""Page weight before live code starts: every toc page, as the browser transfers it.

The site is served the way GitHub Pages serves it (gzip for text; see conftest.py).
The table is printed at the end of the run; the largest page must stay within 1 MB.
MathJax and Thebe come from the site (no CDN), so they count here when a page loads them.
"""

from __future__ import annotations

import pytest
from browser_support import REPORT, book_dir, page_url, site_pages

pytestmark = pytest.mark.browser

MAX_BYTES = 1_000_000
PAGES = site_pages(book_dir())

SIZES = """() => [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]
    .map(e => ({name: e.name, transfer: e.transferSize, decoded: e.decodedBodySize}))"""


@pytest.mark.parametrize("docname", PAGES)
def test_page_weight(context, site, docname):
    page = context.new_page()
    page.goto(page_url(site, docname))
    page.wait_for_load_state("networkidle")
    page.wait_for_function("!window.MathJax || !MathJax.startup || !MathJax.startup.promise || "
                           "MathJax.startup.promise.then(() => true)")
    page.wait_for_load_state("networkidle")  # fonts MathJax asked for while typesetting
    entries = page.evaluate(SIZES)
    transfer = sum(e["transfer"] for e in entries)
    decoded = sum(e["decoded"] for e in entries)
    biggest = max(entries, key=lambda e: e["transfer"])
    REPORT["page weight"][docname] = {
        "requests": str(len(entries)),
        "transferred (gzip)": f"{transfer / 1000:.0f} kB",
        "uncompressed": f"{decoded / 1000:.0f} kB",
        "largest file": f"{biggest['name'].rsplit('/', 1)[-1].split('?')[0][:14]} {biggest['transfer'] / 1000:.0f} kB",
    }
    assert 0 < transfer <= MAX_BYTES, f"{docname}: {transfer} bytes transferred before live code starts"
