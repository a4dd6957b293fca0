"""Page weight before live code starts: every toc page, as the browser transfers it.

The site is served the way GitHub Pages serves it (gzip for text; see conftest.py).
The table is printed at the end of the run; the largest page must stay within 1 MB.
MathJax and Thebe come from the site (no CDN), so they count here when a page loads them.
"""

from __future__ import annotations

import pytest
from browser_support import REPORT, book_dir, open_page, page_url, site_pages
from fontTools.ttLib import TTFont

pytestmark = pytest.mark.browser

MAX_BYTES = 1_000_000
PAGES = site_pages(book_dir())

# Codepoints of every icon drawn from an icon font on the page (::before / ::after).
ICONS = """() => {
    const found = new Set();
    for (const el of document.querySelectorAll('body *')) {
        for (const pseudo of ['::before', '::after']) {
            const style = getComputedStyle(el, pseudo);
            if (!style.fontFamily.includes('Font Awesome') || style.display === 'none') continue;
            for (const ch of style.content.replace(/^"|"$/g, '')) {
                const cp = ch.codePointAt(0);
                if (cp >= 0xe000 && cp <= 0xf8ff) found.add(cp);
            }
        }
    }
    return [...found];
}"""

SIZES = """() => [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]
    .map(e => ({name: e.name, transfer: e.transferSize, decoded: e.decodedBodySize}))"""


@pytest.mark.parametrize("docname", PAGES)
def test_page_weight(context, site, docname):
    page = open_page(context, site, docname)
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


@pytest.mark.parametrize("docname", PAGES)
def test_cut_down_icon_fonts_have_every_icon_the_page_shows(context, site, built_site, docname):
    """The build keeps only the icons in use (rec11.book.livecode); none may go missing."""
    fonts = built_site["html"] / "_static" / "rec11-icons"
    glyphs = set()
    for font in fonts.glob("*.woff"):
        glyphs |= set(TTFont(font).getBestCmap())
    assert glyphs, f"no cut-down icon fonts in {fonts}"
    page = context.new_page()
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(page_url(site, docname))
    page.wait_for_load_state("networkidle")
    shown = set(page.evaluate(ICONS))
    missing = sorted(hex(cp) for cp in shown - glyphs)
    assert not missing, f"{docname}: icons not in the cut-down fonts: {missing}"
    full_fonts = [url for url in requested if "/vendor/fontawesome/webfonts/" in url]
    assert not full_fonts, f"{docname}: the theme's full icon fonts were still downloaded: {full_fonts}"
