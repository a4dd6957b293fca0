"""Accessibility (WCAG 2.1 AA): axe-core on every page, and live code by keyboard alone.

axe-core is the pinned npm copy (package-lock.json), injected into each page. Every
rule runs, best-practice, experimental and deprecated included, except the one AAA
contrast rule named in browser_support.AXE_RULES_OFF. Fixes to the stock theme are
in src/rec11_book/static/rec11-a11y.js and rec11.css.
"""

from __future__ import annotations

import pytest
from browser_support import (
    CELLS,
    FIND_CELLS,
    book_dir,
    describe,
    first_editable,
    open_page,
    pages_with_code,
    run_axe,
    site_pages,
    wait_output,
    wait_ready,
)

pytestmark = pytest.mark.browser

ALL_PAGES = site_pages(book_dir())
CODE_PAGES = pages_with_code(book_dir())


@pytest.mark.parametrize("docname", ALL_PAGES)
def test_axe_finds_no_violations(context, site, docname):
    page = open_page(context, site, docname)
    violations = run_axe(page)
    assert not violations, f"{docname}:\n{describe(violations)}"


def active(page, selector: str) -> bool:
    return page.evaluate("(s) => !!document.activeElement && document.activeElement.matches(s)", selector)


def tab_to(page, selector: str, limit: int) -> int:
    """Press Tab until the focused element matches; return how many presses it took."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if active(page, selector):
            return presses
    raise AssertionError(f"{selector} not reached after {limit} presses of Tab")


@pytest.mark.parametrize("docname", CODE_PAGES)
def test_live_code_works_from_the_keyboard_and_axe_finds_nothing_while_it_runs(context, site, jupyter_server,
                                                                                docname):
    """One Live Code session a page (a kernel and the page's set-up cells cost seconds of a
    core each): started and used from the keyboard alone, then checked by axe with every
    hidden cell opened, its editors laid out and a cell's new output on the page."""
    page = open_page(context, site, docname)

    # Live Code: Tab to the launch menu, open it with Enter, arrow down to Live Code, Enter.
    tab_to(page, ".dropdown-launch-buttons > button.dropdown-toggle", limit=80)
    page.keyboard.press("Enter")
    for _ in range(6):
        page.keyboard.press("ArrowDown")
        if active(page, ".btn-launch-thebe"):
            break
    assert active(page, ".btn-launch-thebe"), "Live Code is not reachable with the arrow keys"
    page.keyboard.press("Enter")
    wait_ready(page)

    # Every run button is reached by Tab, from Live Code on. A hidden cell is opened from
    # its summary, a collapsed answer from its toggle button, with Enter; an editor is left
    # with Escape (Tab inside it indents).
    buttons = page.locator(f"{CELLS} .thebe-run-button").count()
    assert buttons > 0
    page.evaluate("window.__reached = new Set()")
    limit = 12 * buttons + 200
    for _ in range(limit):
        where = page.evaluate("""() => {
            const el = document.activeElement;
            if (el.matches('.thebe-run-button')) window.__reached.add(el.closest('.thebe-cell').dataset.thebeId);
            if (el.closest('.CodeMirror')) return 'editor';
            if (el.matches('summary') && !el.parentElement.open && el.parentElement.querySelector('.thebe-cell'))
                return 'closed';
            const dropdown = el.matches('button.toggle-button') && el.closest('.admonition.dropdown');
            if (dropdown && !dropdown.classList.contains('toggle-shown') && dropdown.querySelector('.thebe-cell'))
                return 'closed';  // a collapsed answer (sphinx-togglebutton) that holds live cells
            return window.__reached.size;
        }""")
        if where == buttons:
            break
        if where == "editor":
            page.keyboard.press("Escape")
        elif where == "closed":
            page.keyboard.press("Enter")
        page.keyboard.press("Tab")
    reached = page.evaluate("window.__reached.size")
    assert reached == buttons, f"{docname}: Tab reached {reached} of {buttons} run buttons"

    # Use one: type in the editor, Escape, Tab to its run button, Enter; then again with Space.
    cell = first_editable(page.evaluate(FIND_CELLS))
    box = page.locator(CELLS).nth(cell["i"])
    box.locator(".CodeMirror textarea").focus()
    for key, code, expected in [("Enter", "print('enter', 2 + 3)", "enter 5"),
                                ("Space", "print('space', 3 + 4)", "space 7")]:
        page.keyboard.press("Control+Home")
        page.keyboard.type(code)
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        page.keyboard.press("Tab")
        assert active(page, ".thebe-run-button"), "Tab from the editor does not reach its run button"
        page.keyboard.press(key)
        wait_output(page, cell["i"], expected)
        page.keyboard.press("Shift+Tab")  # back into the editor
        assert active(page, ".CodeMirror textarea"), "Shift+Tab from the run button does not reach the editor"

    # axe with Live Code running: every cell's editor shown (hidden cells opened)
    page.evaluate("document.querySelectorAll('article details').forEach(d => { d.open = true; })")
    # CodeMirror lays out an editor that just became visible: wait until every one has lines
    page.wait_for_function("[...document.querySelectorAll('article details[open] .CodeMirror')]"
                           ".every(cm => cm.querySelector('.CodeMirror-line') && cm.offsetHeight > 0)",
                           timeout=10_000)
    violations = run_axe(page)
    assert not violations, f"{docname} (live):\n{describe(violations)}"
