"""LaTeX in a live output is typeset, and only then does the page load MathJax.

The book's math is typeset when it is built (rec11_book.extensions.mathsvg), so a page loads no
math engine; static/rec11-livemath.js loads the site's own MathJax when a Live Code
output shows TeX (IPython's Math / Latex / Markdown).
"""

from __future__ import annotations

import pytest
from browser_support import (
    CELLS,
    FIND_CELLS,
    RUN_TIMEOUT,
    first_editable,
    page_url,
    settle,
    start_live_code,
    type_and_run,
)

pytestmark = pytest.mark.browser

PAGE = "book/vae"  # a page with math and code


def test_latex_in_a_live_output_is_typeset_on_demand(context, site, jupyter_server):
    page = context.new_page()
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(page_url(site, PAGE))
    settle(page)
    assert page.locator("article mjx-container svg").count() > 0, "the page's own math is not typeset"
    start_live_code(page)
    assert not [u for u in requested if "/mathjax/" in u], "MathJax loaded before any live output needed it"

    cell = first_editable(page.evaluate(FIND_CELLS))
    type_and_run(page, cell, 'from IPython.display import Math; Math(r"\\frac{a}{b} + \\beta^2")', where="end")
    output = page.locator(CELLS).nth(cell["i"]).locator(".cell_output")
    output.locator("mjx-container svg").first.wait_for(timeout=RUN_TIMEOUT)
    assert [u for u in requested if u.endswith("/_static/mathjax/tex-svg.js")], requested[-5:]
    assert all("127.0.0.1" in u for u in requested if "mathjax" in u)
    assert "\\frac" not in output.inner_text(), "raw TeX left in the live output"
