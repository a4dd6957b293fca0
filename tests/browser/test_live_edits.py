"""A student's edits survive a reload; "reset" returns a cell, or the page, to the book's code.

Edits are kept in the browser (localStorage) per page and per version of the page's
code: a build that changes the page's code does not bring stale edits back.
"""

from __future__ import annotations

import pytest
from browser_support import (
    CELLS,
    FIND_CELLS,
    book_dir,
    first_editable,
    live_code_loaded,
    page_url,
    pages_with_code,
    reveal,
    start_live_code,
    status_text,
    type_and_run,
    wait_output,
)

pytestmark = pytest.mark.browser

PAGE = pages_with_code(book_dir())[0]


def code(page, i: int) -> str:
    return page.locator(CELLS).nth(i).locator(".CodeMirror").evaluate("el => el.CodeMirror.getValue()")


def editable(page) -> list[dict]:
    cells = page.evaluate(FIND_CELLS)
    return [c for c in cells if c["live"] and not c["init"] and not c["raises"]]


def test_edits_come_back_after_a_reload_and_reset_returns_the_books_code(context, site, jupyter_server):
    page = context.new_page()
    page.goto(page_url(site, PAGE))
    start_live_code(page)
    cell = first_editable(page.evaluate(FIND_CELLS))
    book_code = code(page, cell["i"])
    box = page.locator(CELLS).nth(cell["i"])
    assert box.locator(".rec11-reset-cell").is_hidden(), "a cell nobody edited offers a reset"
    type_and_run(page, cell, "print('kept', 6 * 7)")
    wait_output(page, cell["i"], "kept 42")
    edited = code(page, cell["i"])
    assert edited.startswith("print('kept', 6 * 7)\n") and edited.endswith(book_code), edited

    page.reload()
    live_code_loaded(page)
    start_live_code(page)
    assert code(page, cell["i"]) == edited, "the edit did not survive the reload"
    assert "Your edits to 1 cell from your last visit are back" in status_text(page), status_text(page)
    box = page.locator(CELLS).nth(cell["i"])
    reveal(box, cell)
    assert box.locator(".rec11-reset-cell").is_visible()
    page_reset = page.locator(".rec11-reset-page")
    assert page_reset.is_visible() and "1 edited cell" in page_reset.inner_text()
    # the restored code is what runs
    box.locator(".thebe-run-button").click()
    wait_output(page, cell["i"], "kept 42")

    box.locator(".rec11-reset-cell").click()
    assert code(page, cell["i"]) == book_code
    assert box.locator(".rec11-reset-cell").is_hidden() and page_reset.is_hidden()
    page.reload()
    live_code_loaded(page)
    start_live_code(page)
    assert code(page, cell["i"]) == book_code, "a reset cell came back edited"
    assert "from your last visit" not in status_text(page)


def test_reset_the_page_returns_every_cell_to_the_books_code(context, site, jupyter_server):
    page = context.new_page()
    page.goto(page_url(site, PAGE))
    start_live_code(page)
    first, second = editable(page)[:2]
    books = {c["i"]: code(page, c["i"]) for c in (first, second)}
    for c, text in ((first, "x_1 = 1"), (second, "x_2 = 2")):
        box = page.locator(CELLS).nth(c["i"])
        reveal(box, c)
        box.locator(".CodeMirror").click()
        page.keyboard.press("Control+Home")
        page.keyboard.type(text)
        page.keyboard.press("Enter")
    page.reload()
    live_code_loaded(page)
    start_live_code(page)
    assert "Your edits to 2 cells" in status_text(page), status_text(page)
    assert code(page, first["i"]).startswith("x_1 = 1\n") and code(page, second["i"]).startswith("x_2 = 2\n")
    page.locator(".rec11-reset-page").click()
    assert {i: code(page, i) for i in books} == books
    assert "book's code again" in status_text(page)
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('rec11-live-code-edits:'))") == []


def test_a_build_that_changes_the_pages_code_does_not_bring_stale_edits_back(context, site, jupyter_server):
    page = context.new_page()
    page.goto(page_url(site, PAGE))
    start_live_code(page)
    cell = first_editable(page.evaluate(FIND_CELLS))
    type_and_run(page, cell, "print('stale', 1)")
    wait_output(page, cell["i"], "stale 1")

    page.reload()
    live_code_loaded(page)
    # a new build changed this page's code (here: the text of its last cell)
    page.evaluate("""() => {
        const pre = [...document.querySelectorAll('article div.cell .cell_input pre')].pop();
        pre.textContent = pre.textContent + '\\n# changed by a new build';
    }""")
    start_live_code(page)
    assert "stale" not in code(page, cell["i"]), "an edit of the old code came back over the new code"
    assert "from your last visit" not in status_text(page)
    keys = page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('rec11-live-code-edits:'))")
    assert keys == [], f"the old version's edits were not dropped: {keys}"
