"""Page weight before live code starts: every toc page, as a phone transfers it.

The site is served the way GitHub Pages serves it (gzip for text; see conftest.py). Each
page is opened in a phone-sized window (rec11_tools.pagespeed.weigh), scrolled to its end
so lazy figures load, then with every dropdown open and scrolled again: what a reader
can fetch before Live Code. The heaviest page must stay within 0.40 MB (the README's budget); the
table and the median are printed at the end of the run. Math is typeset when the book
is built, so no page may load a math engine (MathJax loads on demand for live outputs).
"""

from __future__ import annotations

import statistics

import pytest
from browser_support import REPORT, book_dir, page_url, settle, site_pages
from fontTools.ttLib import TTFont

from rec11_tools.pagespeed import MAX_PAGE_BYTES, weigh

pytestmark = pytest.mark.browser

PAGES = site_pages(book_dir())
WEIGHTS: dict[str, int] = {}

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

@pytest.mark.parametrize("docname", PAGES)
def test_page_weight(browser, site, docname):
    found = weigh(browser, page_url(site, docname))
    assert not found["off_site"], f"{docname}: off-site requests: {found['off_site']}"
    total = found["every_dropdown_open"]
    WEIGHTS[docname] = total
    biggest_size, biggest_url = found["files"][0]
    REPORT["page weight"][docname] = {
        "requests": str(found["requests"]),
        "first screen (gzip)": f"{found['first_screen'] / 1000:.0f} kB",
        "whole page (gzip)": f"{total / 1000:.0f} kB",
        "largest file": f"{biggest_url.rsplit('/', 1)[-1].split('?')[0][:14]} {biggest_size / 1000:.0f} kB",
    }
    engines = [url for _, url in found["files"] if "/mathjax/" in url or "/thebe/" in url]
    assert not engines, f"{docname}: loads a math or live-code engine before Live Code: {engines[:3]}"
    assert 0 < total <= MAX_PAGE_BYTES, f"{docname}: {total} bytes transferred before live code starts"


def test_median_page_weight_is_reported():
    """After the pages above: the heaviest and the median, for the report."""
    if not WEIGHTS:
        pytest.skip("no page was weighed (run with the tests above)")
    heaviest = max(WEIGHTS, key=WEIGHTS.get)
    REPORT["page weight"]["(median)"] = {
        "requests": "", "first screen (gzip)": "",
        "whole page (gzip)": f"{statistics.median(WEIGHTS.values()) / 1000:.0f} kB",
        "largest file": f"heaviest: {heaviest.rsplit('/', 1)[-1]}"}
    assert WEIGHTS[heaviest] <= MAX_PAGE_BYTES


@pytest.mark.parametrize("docname", PAGES)
def test_cut_down_icon_fonts_have_every_icon_the_page_shows(context, site, built_site, docname):
    """The build keeps only the icons in use (rec11_book.extensions.assets); none may go missing."""
    fonts = built_site["html"] / "_static" / "rec11-icons"
    glyphs = set()
    for font in fonts.glob("*.woff"):
        glyphs |= set(TTFont(font).getBestCmap())
    assert glyphs, f"no cut-down icon fonts in {fonts}"
    page = context.new_page()
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(page_url(site, docname))
    settle(page)
    shown = set(page.evaluate(ICONS))
    missing = sorted(hex(cp) for cp in shown - glyphs)
    assert not missing, f"{docname}: icons not in the cut-down fonts: {missing}"
    full_fonts = [url for url in requested if "/vendor/fontawesome/webfonts/" in url]
    assert not full_fonts, f"{docname}: the theme's full icon fonts were still downloaded: {full_fonts}"
