"""Live code on every page with code: start it by keyboard, reach every run button, edit and
run a cell, redraw a figure, then axe with it running.

Live Code is started the way a student starts it, from the header's launch
dropdown; the site was built to use a local `jupyter server` (see conftest.py), so
these tests run the same static/livecode/ modules and pinned Thebe that students get.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from browser_support import (
    CELLS,
    FIND_CELLS,
    REPORT,
    RUN_TIMEOUT,
    Kernels,
    active,
    book_dir,
    describe,
    first_editable,
    open_page,
    output_text,
    page_url,
    pages_with_code,
    reveal,
    run_axe,
    start_live_code,
    status_text,
    tab_to,
    type_and_run,
    wait_output,
    wait_ready,
)

from rec11_book.shared.pagefacts import trains_models

pytestmark = pytest.mark.browser

PAGES = pages_with_code(book_dir())


def assert_no_unexpected_errors(page, cells):
    for cell in cells:
        if cell["raises"]:
            continue
        text = output_text(page, cell["i"])
        assert "Traceback" not in text and "Error:" not in text, f"cell {cell['i']} shows an error:\n{text[:2000]}"


def start_by_keyboard(page) -> dict:
    """Tab to the launch menu, open it with Enter, arrow down to Live Code, Enter; wait for
    the kernel and the set-up cells. Returns the timings of ``wait_ready``."""
    tab_to(page, ".dropdown-launch-buttons > button.dropdown-toggle", limit=80)
    page.keyboard.press("Enter")
    for _ in range(6):
        page.keyboard.press("ArrowDown")
        if active(page, ".btn-launch-thebe"):
            break
    assert active(page, ".btn-launch-thebe"), "Live Code is not reachable with the arrow keys"
    page.keyboard.press("Enter")
    return wait_ready(page)


def tab_through_every_run_button(page, docname: str) -> None:
    """Every run button is reached by Tab, from Live Code on. A hidden cell is opened from
    its summary, a collapsed answer from its toggle button, with Enter; an editor is left
    with Escape (Tab inside it indents)."""
    buttons = page.locator(f"{CELLS} .thebe-run-button").count()
    assert buttons > 0
    page.evaluate("window.__reached = new Set()")
    for _ in range(12 * buttons + 200):
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


@pytest.mark.parametrize("docname", PAGES)
def test_live_code_on_each_page_by_keyboard_alone_then_axe_with_it_running(context, site, jupyter_server, docname):
    """One Live Code session a page carries every check of it (a kernel and the page's set-up
    cells cost seconds of a core each): started from the keyboard, its ready message; every
    run button reached by Tab; a cell edited and run with Enter, then with Space; the first
    figure after it redrawn with its alt text; no cell showing an unexpected error; then axe
    (WCAG 2.1 AA, as test_accessibility.py runs it) with every hidden cell opened."""
    page = open_page(context, site, docname)
    timings = start_by_keyboard(page)
    assert "Jupyter server at 127.0.0.1" in status_text(page), status_text(page)
    trains = trains_models((book_dir() / f"{docname}.md").read_text())
    assert ("trains its own copy of this page's models" in status_text(page)) == trains, \
        f"{docname}: the ready message should say whether the reader's models can differ from the page's"
    cells = page.evaluate(FIND_CELLS)
    assert any(c["live"] for c in cells), f"{docname}: no live cells"
    tab_through_every_run_button(page, docname)

    # Use one: type in the editor, Escape, Tab to its run button, Enter; then again with Space.
    cell = first_editable(cells)
    box = page.locator(CELLS).nth(cell["i"])
    box.locator(".CodeMirror textarea").focus()
    seconds = {}
    for key, code, expected in [("Enter", "print('enter', 2 + 3)", "enter 5"),
                                ("Space", "print('space', 3 + 4)", "space 7")]:
        page.keyboard.press("Control+Home")
        page.keyboard.type(code)
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        page.keyboard.press("Tab")
        assert active(page, ".thebe-run-button"), "Tab from the editor does not reach its run button"
        page.keyboard.press(key)
        seconds[key] = wait_output(page, cell["i"], expected)  # timed from just after the key
        page.keyboard.press("Shift+Tab")  # back into the editor
        assert active(page, ".CodeMirror textarea"), "Shift+Tab from the run button does not reach the editor"
    row = {"click→kernel ready": f"{timings['kernel']:.2f} s", "click→set-up done": f"{timings['ready']:.2f} s",
           "run→output": f"{seconds['Enter']:.2f} s", "run→new figure": "(no figure)"}

    # Redraw a figure: the first figure cell after it, run before the cells between them.
    # (Read again: Tab and Enter opened the hidden cells it passed.)
    shown = page.evaluate(FIND_CELLS)
    figures = [c for c in shown if c["figure"] and c["live"] and c["i"] > cell["i"] and not c["init"]]
    if figures:
        fig = figures[0]
        box = page.locator(CELLS).nth(fig["i"])
        reveal(box, fig)
        start = time.perf_counter()
        box.locator(".thebe-run-button").click()
        box.locator(".cell_output img[src^='data:image']").first.wait_for(timeout=RUN_TIMEOUT)
        row["run→new figure"] = f"{time.perf_counter() - start:.2f} s"
        alt = box.locator(".cell_output img[src^='data:image']").first.get_attribute("alt")
        assert alt and len(alt) >= 15, f"the redrawn figure lost its alt text: {alt!r}"
    assert_no_unexpected_errors(page, cells)
    REPORT["live code"][docname] = row

    # axe with Live Code running: every cell's editor shown (hidden cells opened)
    page.evaluate("document.querySelectorAll('article details').forEach(d => { d.open = true; })")
    # CodeMirror lays out an editor that just became visible: wait until every one has lines
    page.wait_for_function("[...document.querySelectorAll('article details[open] .CodeMirror')]"
                           ".every(cm => cm.querySelector('.CodeMirror-line') && cm.offsetHeight > 0)",
                           timeout=10_000)
    violations = run_axe(page)
    assert not violations, f"{docname} (live):\n{describe(violations)}"


@pytest.mark.parametrize("docname", PAGES[:1])
def test_running_a_late_cell_first_runs_the_cells_above(context, site, jupyter_server, docname):
    """A student who runs the last cell first gets its result, not a NameError."""
    page = context.new_page()
    page.goto(page_url(site, docname))
    start_live_code(page)
    cells = page.evaluate(FIND_CELLS)
    last = [c for c in cells if c["live"] and not c["raises"]][-1]
    type_and_run(page, last, "print('ran after', len([k for k in globals() if not k.startswith('_')]), 'names')",
                 where="end")
    wait_output(page, last["i"], "ran after")
    assert_no_unexpected_errors(page, cells)


def kernel_of(page, cell: dict) -> tuple[int, str]:
    """The process id and working folder of the kernel behind a page, asked by running a cell."""
    type_and_run(page, cell, "import os; print('kernel', os.getpid(), os.getcwd())")
    wait_output(page, cell["i"], "kernel ")
    found = re.search(r"kernel (\d+) (\S+)", output_text(page, cell["i"]))
    return int(found[1]), found[2]


def test_each_tab_has_a_kernel_of_its_own_and_leaving_one_leaves_the_other_running(browser, site, jupyter_server):
    # A Jupyter server gives a new session the kernel of a session at the same path: two tabs
    # (or a reload, while the old page's kernel is still shutting down) would share one.
    # (A context of its own: the request a leaving page sends does not outlive the page
    # when the test's off-site guard intercepts it; this page makes no request off 127.0.0.1.)
    docname = PAGES[0]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = Kernels.of(context)
    try:
        tabs = [context.new_page(), context.new_page()]
        kernels = []
        for tab in tabs:
            tab.goto(page_url(site, docname))
            start_live_code(tab)
            kernels.append(kernel_of(tab, first_editable(tab.evaluate(FIND_CELLS))))
        (first_pid, first_cwd), (second_pid, second_cwd) = kernels
        assert first_pid != second_pid, "two tabs of one page share a kernel"
        assert first_cwd == second_cwd and Path(first_cwd).name == Path(docname).parent.name, kernels

        tabs[0].goto("about:blank")   # leaving the page shuts its kernel down
        deadline = time.monotonic() + 30
        while Path(f"/proc/{first_pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not Path(f"/proc/{first_pid}").exists(), "the left tab's kernel is still running"
        assert kernel_of(tabs[1], first_editable(tabs[1].evaluate(FIND_CELLS)))[0] == second_pid
    finally:
        context.close()
        opened.shut_down()  # the second tab's: closing it runs no pagehide
