"""Live code on every page with code: start it, edit and run a cell, redraw a figure.

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
    book_dir,
    first_editable,
    output_text,
    page_url,
    pages_with_code,
    reveal,
    start_live_code,
    status_text,
    type_and_run,
    wait_output,
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


@pytest.mark.parametrize("docname", PAGES)
def test_live_code_runs_edited_cells_and_redraws_figures(context, site, jupyter_server, docname):
    page = context.new_page()
    page.goto(page_url(site, docname))
    timings = start_live_code(page)
    assert "Jupyter server at 127.0.0.1" in status_text(page), status_text(page)
    trains = trains_models((book_dir() / f"{docname}.md").read_text())
    assert ("trains its own copy of this page's models" in status_text(page)) == trains, \
        f"{docname}: the ready message should say whether the reader's models can differ from the page's"
    cells = page.evaluate(FIND_CELLS)
    assert any(c["live"] for c in cells), f"{docname}: no live cells"

    # Edit a cell with the keyboard, run it, see its new output.
    cell = first_editable(cells)
    type_and_run(page, cell, "print('edited', 6 * 7)")
    run_seconds = wait_output(page, cell["i"], "edited 42")  # timed from just after the click
    row = {"click→kernel ready": f"{timings['kernel']:.2f} s", "click→set-up done": f"{timings['ready']:.2f} s",
           "run→output": f"{run_seconds:.2f} s", "run→new figure": "(no figure)"}

    # Redraw a figure: the first figure cell after it, run before the cells between them.
    figures = [c for c in cells if c["figure"] and c["live"] and c["i"] > cell["i"] and not c["init"]]
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
