"""Printed pages: only the content, no code cut at the margin; pages per page reported.

Chromium prints each page to PDF (Letter and A4) with the site's print stylesheet;
``pdftotext`` (poppler-utils) reads the text back. The table of pages per chapter
page is printed at the end of the run.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from browser_support import REPORT, book_dir, open_page, site_pages

pytestmark = pytest.mark.browser

PAGES = site_pages(book_dir())
# Text that belongs to the web page's controls, never to a handout.
UI_TEXT = ["Show code cell", "Hide code cell", "Click to show", "Click to hide", "Instructor notes",
           "Live Code", "Skip to main content", "Back to top", "Ctrl+K", "Download this page"]
VISIBLE_CODE = """() => [...document.querySelectorAll('article div.cell')]
    .filter(cell => !cell.querySelector('details.hide'))
    .flatMap(cell => [...cell.querySelectorAll('.cell_input pre')].map(pre => pre.innerText))"""


def pdf_text(pdf: bytes, tmp_path, name: str) -> tuple[str, int]:
    path = tmp_path / f"{name}.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return text, int(re.search(r"^Pages:\s+(\d+)", info, re.M)[1])


@pytest.fixture(scope="module")
def poppler():
    assert shutil.which("pdftotext") and shutil.which("pdfinfo"), "pdftotext is missing: apt-get install poppler-utils"


@pytest.mark.parametrize("docname", PAGES)
def test_a_printed_page_has_only_its_content_and_whole_code_lines(context, site, docname, poppler, tmp_path):
    page = open_page(context, site, docname)
    code_lines = [line for block in page.evaluate(VISIBLE_CODE) for line in block.splitlines() if line.strip()]
    pages = {}
    for paper in ("Letter", "A4"):
        text, pages[paper] = pdf_text(page.pdf(format=paper, print_background=True), tmp_path, paper)
        shown = [ui for ui in UI_TEXT if ui in text]
        assert not shown, f"{docname} printed on {paper} shows web controls: {shown}"
        flat = re.sub(r"\s+", "", text)
        cut = [line for line in code_lines if re.sub(r"\s+", "", line) not in flat]
        assert not cut, f"{docname} printed on {paper} lost code at the margin: {cut[:3]}"
    REPORT["print"][docname] = {"Letter pages": str(pages["Letter"]), "A4 pages": str(pages["A4"])}
