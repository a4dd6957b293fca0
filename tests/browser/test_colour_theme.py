"""The light or dark theme is settled before a page is styled, and it is the one the reader's
settings ask for.

pydata-sphinx-theme picks the theme in a deferred script, after the browser has styled the
whole page once; a change of ``<html data-theme>`` then restyles every element (on
``book/exercises`` that was a third of the load's style work on Lighthouse's phone). The
book sets the same value from ``<head>`` (``rec11_book.compat.theme.settle_theme_script``).
Each test records every change of ``data-theme`` as the page loads, and whether ``<body>``
existed yet.
"""

from __future__ import annotations

import pytest
from browser_support import page_url, settle

pytestmark = pytest.mark.browser

PAGE = "book/exercises"

RECORD_CHANGES = """() => {
    window.themeChanges = [];
    // The document, not <html>: this runs before the parser has made <html>.
    new MutationObserver((records) => {
        for (const r of records) {
            window.themeChanges.push({theme: r.target.dataset.theme, bodyExists: document.body !== null});
        }
    }).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-theme"]});
}"""


def load(context, site, system: str, stored_mode: str | None = None) -> tuple[str, list[dict]]:
    page = context.new_page()
    page.emulate_media(color_scheme=system)
    if stored_mode is not None:  # a reader who picked a mode on an earlier visit
        page.add_init_script(f'localStorage.setItem("mode", "{stored_mode}");'
                             f'localStorage.setItem("theme", "{stored_mode}");')
    page.add_init_script(f"({RECORD_CHANGES})()")
    page.goto(page_url(site, PAGE))
    settle(page)
    theme, changes = page.evaluate("() => [document.documentElement.dataset.theme, window.themeChanges]")
    page.close()
    return theme, changes


@pytest.mark.parametrize(("system", "stored_mode", "expected"), [
    ("light", None, "light"),   # a first visit follows the system's scheme
    ("dark", None, "dark"),
    ("light", "dark", "dark"),  # a mode the reader picked wins over the system's
    ("dark", "light", "light"),
    ("dark", "auto", "dark"),
])
def test_theme_is_settled_before_the_body_is_styled(context, site, system, stored_mode, expected):
    theme, changes = load(context, site, system, stored_mode)
    assert theme == expected, f"system {system}, stored mode {stored_mode}: theme {theme}, not {expected}"
    in_head = [c["theme"] for c in changes if not c["bodyExists"]]
    assert in_head and in_head[-1] == expected, f"<head> left data-theme at {in_head}, not {expected!r}"
    # Once <body> exists a new value restyles every element; the same value again restyles nothing.
    late = [c["theme"] for c in changes if c["bodyExists"] and c["theme"] != expected]
    assert not late, f"data-theme changed after <body> existed: {changes}"
