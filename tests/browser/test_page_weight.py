"""Page weight before live code starts: every toc page, as a phone transfers it.

The site is served the way GitHub Pages serves it (gzip for text; see conftest.py). Each
page is opened in a phone-sized window (rec11_tools.pagespeed.weigh), scrolled to its end
so lazy figures load, then with every dropdown open and scrolled again: what a reader
can fetch before Live Code. The heaviest page must stay within 0.40 MB (the README's budget); the
table and the median are printed at the end of the run. Math is typeset when the book
is built, so no page may load a math engine (MathJax loads on demand for live outputs).
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest
from browser_support import REPORT, book_dir, page_url, settle, site_pages
from fontTools.ttLib import TTFont

from rec11_book.commands.handout import HandoutError
from rec11_tools import pagespeed
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


class SlowFigureHandler(SimpleHTTPRequestHandler):
    """A page with a figure far below the fold: ``slow.png`` answers after ``DELAY`` seconds."""

    DELAY = 3.0
    PAGE = (b'<!doctype html><html lang="en"><title>t</title><div style="height:4000px"></div>'
            b'<img alt="a figure" loading="lazy" src="slow.png" width="10" height="10">')
    PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4b00000000049454e44ae426082")

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.endswith("slow.png"):
            time.sleep(self.DELAY)
            body, kind = self.PNG, "image/png"
        else:
            body, kind = self.PAGE, "text/html"
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the browser gave up on it
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


@pytest.fixture
def slow_figure_site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowFigureHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_weighing_waits_for_a_late_figure_and_names_one_that_never_comes(browser, slow_figure_site, monkeypatch):
    """weigh() waits on the page's own requests (a figure that loads once scrolled to, and takes
    its time), not on Playwright's "networkidle"; past its deadline it names what was loading."""
    found = weigh(browser, slow_figure_site)
    assert found["whole_page"] > found["first_screen"], "the late figure was not counted"
    assert any(url.endswith("slow.png") for _, url in found["files"]), found["files"]
    monkeypatch.setattr(pagespeed, "SETTLE_SECONDS", 1)
    with pytest.raises(HandoutError, match=r"scrolled to its end was still loading after 1 s: \['http://\S+/slow\.png'\]"):
        weigh(browser, slow_figure_site)


LOADED = """() => [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]
    .map(e => ({name: e.name.split('/').pop(), protocol: e.nextHopProtocol,
                encoded: e.encodedBodySize, decoded: e.decodedBodySize}))"""


def test_the_lighthouse_server_speaks_http2_gzips_text_and_keeps_to_its_folder(browser, tmp_path):
    """Lighthouse measures the site as GitHub Pages serves it (pagespeed.serve_h2): HTTP/2 over TLS,
    text gzipped, each file with its type, and nothing from outside the folder."""
    site = tmp_path / "site"
    (site / "book").mkdir(parents=True)
    (site / "book" / "page.html").write_text(
        '<!doctype html><html lang="en"><title>t</title><link rel="stylesheet" href="style.css">'
        + "<p>a line of text to compress</p>" * 200)
    (site / "book" / "style.css").write_text("p { color: rgb(1, 2, 3); }")
    (tmp_path / "secret.txt").write_text("outside the site")
    with pagespeed.serve_h2(site) as base:
        assert base.startswith("https://127.0.0.1:")
        context = browser.new_context(ignore_https_errors=True)
        page = context.new_page()
        page.goto(f"{base}book/page.html")
        loaded = {e["name"]: e for e in page.evaluate(LOADED)}
        assert {e["protocol"] for e in loaded.values()} == {"h2"}, loaded
        assert loaded["page.html"]["encoded"] < loaded["page.html"]["decoded"] / 5, "the page was not gzipped"
        assert page.evaluate("getComputedStyle(document.querySelector('p')).color") == "rgb(1, 2, 3)"
        for outside in ("book/..%2F..%2Fsecret.txt", "book/missing.html"):
            assert page.goto(f"{base}{outside}").status == 404, outside
        context.close()
