"""The printable handout: the whole chapter as one PDF, and an instructor edition.

    python -m rec11_book.commands.handout [--book DIR] [--html DIR] [--figures DIR] [--paper Letter|A4]

Run it after the build (``make handout`` does both). Beside the site's pages it writes

* ``<html>/<handout>``, the student handout, ``<handout>`` being the course fact of that
  name in ``_config.yml``: every page of ``_toc.yml`` in order, core pages and their
  going-further pages, except pages whose front matter says ``audience: instructors``;
* ``<html>/<handout without .pdf>-instructor.pdf``: the same with the instructor notes,
  and the session plan.

**How, and why this way.** The pages the build wrote are composed into one print page,
which Chromium prints (Playwright driving Debian's Chromium, or ``REC11_CHROMIUM``).
The handout is the site's own HTML, so it cannot say anything the site does not, and
nothing runs Sphinx or the code a second time. The other ways: WeasyPrint is another
layout engine than the browsers the site is built and tested for (the math, now SVG,
would print), so the handout would need checking twice; ``jupyter-book --builder pdfhtml``
launches Playwright's own Chromium, a download the course machines cannot fetch; and a
``singlehtml`` build is a second Sphinx run that needs myst-nb's hidden-cell handlers
patched in. Each page's article is taken as written,
then: set-up cells (``hide-cell``) and hidden code go (a ``hide-input`` figure keeps
its figure), instructor notes go from the student edition, the PNG of each figure is
replaced by its vector export ``figures/NAME.svg``, ids are made unique per page, and
a link to a page in the handout becomes a link within the PDF (a link to a page left
out keeps its text). In the student edition the worked answers, collapsed on the
page, move to the end of their page under "Answers". The site's print stylesheet does
the rest: no controls, code wrapped, answers open. Chromium reads the print page and the site's files through a
request handler inside the browser (no port); a request for anything else fails the
handout, so it never depends on a CDN.

**Page numbers in the contents.** Chromium cannot tell where its page breaks fall, so
each edition is printed twice: first with an invisible mark in each page's title,
whose sheet ``pdftotext`` finds (form feeds separate sheets); then with the numbers
filled in. The marks take no room, so nothing moves, and the second print is checked:
each title must be on the sheet the contents give it.

The pages link to the PDF with the ``{handout}`` role (``rec11_book.extensions.handoutlink``, the
Sphinx side), whose file name comes from the same course fact. It imports no model code.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from html import escape
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import yaml

from rec11.chapter import load_substitutions, toc_chapters
from rec11_book.compat.myst_nb import cell_selector
from rec11_book.compat.theme import article as theme_article
from rec11_book.shared.pages import FAILED_PAGES, for_instructors, front_matter, instructor_name, share_glyphs

CHROMIUM = os.environ.get("REC11_CHROMIUM", "/usr/bin/chromium")  # Debian's; no Playwright download
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-dev-shm-usage"]
# The origin Chromium reads the handout from. A route in the browser answers it from
# the built site; the name never reaches the network.
SITE = "http://handout.rec11/"
PRINT_PAGE = "handout.html"
FIGURES = "_figures/"  # where the print page finds figures/NAME.svg
SETTLE_SECONDS = 180  # the longest a loaded machine has needed is well under a minute
PRINT_TRIES = 3  # prints of an edition before a wrong one is an error
MARGIN = {"top": "15mm", "bottom": "18mm", "left": "14mm", "right": "14mm"}  # the footer sits in the bottom one

# Added to the site's own CSS (rec11.css already prints a page as a handout).
CSS = """
@page { margin: 15mm 14mm 18mm; }
body { margin: 0; }
.handout-page { break-before: page; }
.handout-page h1 { position: relative; }
.handout-mark { position: absolute; left: 0; top: 0; font-size: 1px; color: #fff; }
.handout-cover { font-size: 11pt; }
.handout-cover .handout-course { margin: 3cm 0 0.3rem; color: #444; }
.handout-cover .handout-title { margin: 0 0 0.5rem; }
.handout-toc ol { list-style: none; padding-left: 0; margin: 0; }
.handout-toc li { margin: 0.15rem 0; }
.handout-toc li.handout-part { margin-top: 0.7rem; font-weight: 600; }
.handout-toc li.handout-part li { font-weight: normal; }
.handout-toc li.handout-further { padding-left: 1.5em; }
.handout-toc a { display: flex; gap: 0.4em; color: inherit; text-decoration: none; }
.handout-toc .handout-leader { flex: 1; border-bottom: 1px dotted #888; margin-bottom: 0.35em; }
.handout-toc .handout-number { min-width: 2.2em; text-align: right; font-variant-numeric: tabular-nums; }
"""
# The instructor edition prints what the site's print stylesheet hides from students.
INSTRUCTOR_CSS = "@media print { article .admonition.instructor-note { display: block !important; } }"


class HandoutError(RuntimeError):
    """Something the handout needs is missing; the message names it."""


@dataclass(frozen=True)
class Entry:
    """A page of the handout: where it is in the toc, and its title on the site."""

    docname: str
    part: str | None
    further: bool  # a going-further page, listed under its core page
    title: str = ""

    @property
    def anchor(self) -> str:
        return "page-" + self.docname.replace("/", "-")


def edition(book: Path, instructor: bool) -> list[Entry]:
    """The pages of one edition, in toc order."""
    entries = []
    for chapter in toc_chapters(book):
        for docname in (chapter.docname, *chapter.further):
            if instructor or not for_instructors(front_matter(book, docname)):
                entries.append(Entry(docname, chapter.part, docname != chapter.docname))
    return entries


# --- one print page from the site's pages -------------------------------------------


def _soup(path: Path):
    from bs4 import BeautifulSoup

    if not path.is_file():
        raise HandoutError(f"{path} is missing: build the book first (python -m rec11_book.commands.build)")
    return BeautifulSoup(path.read_text(), "html.parser")


def page_article(html: Path, figures: Path, entry: Entry, anchors: dict[str, str], instructor: bool):
    """A page's article, made ready for print (see the module docstring)."""
    page = _soup(html / f"{entry.docname}.html")
    article = theme_article(page)
    if article is None:
        raise HandoutError(f"{html / entry.docname}.html has no article: is it a page of this book?")
    hidden = f".headerlink, script, .rec11-live-status, {cell_selector('hide-cell')}, details.hide"
    for node in article.select(hidden + ("" if instructor else ", .instructor-note")):
        node.decompose()
    for link in article.select("a.rec11-handout-link"):  # "print the handout", inside the handout
        (link.find_parent("p") or link).decompose()
    for details in article.find_all("details"):  # paper cannot be clicked open
        details["open"] = ""
    if not instructor:
        answers_at_the_end(article)
    here = SITE + entry.docname + ".html"
    for figure in article.select("figure[id]"):
        svg = figures / f"{figure['id']}.svg"
        for img in figure.find_all("img"):
            if not svg.is_file():
                raise HandoutError(f"{svg} is missing (figure {figure['id']!r} of {entry.docname}): "
                                   "export the figures with python -m rec11_book.commands.build")
            img["src"] = SITE + FIGURES + svg.name
    for node in article.select("[src]"):
        node["src"] = urljoin(here, node["src"])
    prefix = entry.anchor + "--"
    for node in article.select("[id]"):
        if not node["id"].startswith("MJX-"):  # a math glyph's id is the font's, shared by every page
            node["id"] = prefix + node["id"]
    for link in article.select("a[href]"):
        url = urljoin(here, link["href"])
        if not url.startswith(SITE):
            continue  # off-site links stay as they are
        path, _, fragment = url[len(SITE):].partition("#")
        target = anchors.get(path.removesuffix(".html"))
        if target:
            link["href"] = "#" + target + (f"--{fragment}" if fragment else "")
        else:  # a page not in this edition (or the site's index): its text stays, unlinked
            link.unwrap()
    return article


def answers_at_the_end(article) -> None:
    """The worked answers, collapsed on the page, go to the end of it under "Answers":
    paper cannot collapse them, and a student tries each exercise before turning to its
    answer. (The instructor edition keeps each answer under its exercise.)"""
    from bs4 import BeautifulSoup

    solutions = article.select("div.solution")
    if not solutions:
        return
    section = BeautifulSoup('<section class="handout-answers"><h2>Answers</h2></section>', "html.parser").section
    for solution in solutions:
        section.append(solution.extract())
    (article.select_one("section") or article).append(section)


def compose(book: Path, html: Path, figures: Path, instructor: bool) -> tuple[str, list[Entry]]:
    """The print page of one edition, and its pages with their titles."""
    from bs4 import BeautifulSoup

    entries = edition(book, instructor)
    anchors = {e.docname: e.anchor for e in entries}
    articles, titled = [], []
    for entry in entries:
        article = page_article(html, figures, entry, anchors, instructor)
        h1 = article.find("h1")
        title = " ".join(h1.get_text(" ").split()) if h1 else entry.docname
        titled.append(Entry(entry.docname, entry.part, entry.further, title))
        if h1:
            h1.insert(0, BeautifulSoup(f'<span class="handout-mark">@@{len(articles)}@@</span>', "html.parser"))
        articles.append(f'<div class="handout-page" id="{entry.anchor}">{article}</div>')

    first = _soup(html / f"{entries[0].docname}.html")
    base = SITE + entries[0].docname + ".html"
    styles = [urljoin(base, link["href"]) for link in first.select('link[rel="stylesheet"]')]
    # Math is typeset when the book is built (rec11_book.extensions.mathsvg); its stylesheet is linked
    # only from pages with math, and the first page may have none.
    math_css = urljoin(SITE, "_static/rec11-math.css")
    if (html / "_static" / "rec11-math.css").is_file() and math_css not in styles:
        styles.append(math_css)
    facts = {key: escape(str(value)) for key, value in load_substitutions(book).items()}
    title = escape(yaml.safe_load((book / "_config.yml").read_text())["title"])
    head = "\n".join(
        [f'<link rel="stylesheet" href="{href}">' for href in styles]
        + [f"<style>{CSS}{INSTRUCTOR_CSS if instructor else ''}</style>"])
    edition_line = "Instructor edition: with the instructor notes and the session plan" if instructor else "Handout"
    cover = (f'<section class="handout-cover">'
             f'<p class="handout-course">{facts["course"]} · {facts["recitation"]} · week {facts["week"]}</p>'
             f'<h1 class="handout-title">{title}</h1>'
             f'<p>{edition_line}</p><nav class="handout-toc" aria-labelledby="handout-contents">'
             f'<h2 id="handout-contents">Contents</h2>{contents(titled)}</nav></section>')
    page = (f'<!DOCTYPE html><html lang="en" data-theme="light"><head><meta charset="utf-8">'
            f'<title>{title}</title>{head}</head><body><main>{cover}{"".join(articles)}</main></body></html>')
    page = share_glyphs(page)  # many pages' glyphs, one set (math typeset at build time)
    page = re.sub(r'\sloading="lazy"', "", page)  # print every figure, not only those scrolled to
    return page, titled


def contents(entries: list[Entry]) -> str:
    """The contents, grouped by the toc's parts; page numbers are filled in later."""
    items, part = [], None
    for i, entry in enumerate(entries):
        if entry.part != part and entry.part:
            items.append(("" if part is None else "</ol></li>") + f'<li class="handout-part">{escape(entry.part)}<ol>')
        part = entry.part or part
        further = ' class="handout-further"' if entry.further else ""
        items.append(f'<li{further}><a href="#{entry.anchor}"><span>{escape(entry.title)}</span>'
                     '<span class="handout-leader"></span>'
                     f'<span class="handout-number" data-entry="{i}"></span></a></li>')
    return "<ol>" + "".join(items) + ("</ol></li>" if part else "") + "</ol>"


# --- printing ------------------------------------------------------------------------


def sheets(pdf: Path) -> list[str]:
    """The text of each sheet of a PDF (pdftotext separates sheets with form feeds).

    A file cut short anywhere has lost its last line, ``%%EOF``: that is an error here, since
    pdftotext would rebuild the pages it can still find and read them back as if whole (a
    cut in the cross-reference table leaves every sheet readable). A cut that removes sheets
    is then caught by their footers (``misnumbered_sheets``)."""
    if not pdf.read_bytes()[-1024:].rstrip().endswith(b"%%EOF"):
        raise HandoutError(f"{pdf}: the PDF is cut short (no %%EOF at its end)")
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"],
                          capture_output=True, text=True, check=True).stdout
    return text.split("\f")[:-1] if text.endswith("\f") else text.split("\f")


def footer(facts: dict, instructor: bool) -> str:
    facts = {key: escape(str(value)) for key, value in facts.items()}
    which = "instructor edition" if instructor else "handout"
    return ('<div style="font: 8pt sans-serif; color: #444; width: 100%; margin: 0 14mm; display: flex; '
            f'justify-content: space-between;"><span>{facts["course"]} · {facts["recitation"]} · {which}</span>'
            '<span>page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>')


def watch_requests(tab) -> tuple[set, list]:
    """The tab's own ledger, for ``settle``: the requests it has started and not yet had an
    answer to (finished or failed), and a list that gets an entry if the tab crashes."""
    in_flight, crashed = set(), []
    tab.on("request", lambda request: in_flight.add(request))
    tab.on("requestfinished", lambda request: in_flight.discard(request))
    tab.on("requestfailed", lambda request: in_flight.discard(request))
    tab.on("crash", lambda _: crashed.append(True))
    return in_flight, crashed


def settle(tab, in_flight: set, crashed: list, seconds: float | None = None, what: str = "the print page") -> None:
    """Wait until every request the page made has an answer and every image is decoded (a
    lazy image not yet asked for is not waited for), for half a second on end.

    The page's own ledger (``watch_requests``), not Playwright's "networkidle": that state,
    once lost to a late font, is not always regained, and a print then waits forever for
    nothing. ``seconds`` (default ``SETTLE_SECONDS``) bounds the wait; the error names
    ``what`` and the requests still unanswered.
    """
    seconds = SETTLE_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + seconds
    quiet_since = None
    while True:
        if crashed:
            raise HandoutError(f"Chromium's tab crashed while it laid out {what}")
        quiet = not in_flight and tab.evaluate(
            "[...document.images].every(i => i.complete || (i.loading === 'lazy' && !i.currentSrc))")
        now = time.monotonic()
        if not quiet:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= 0.5:  # a font or image that starts another request has had its turn
            return
        if now > deadline:
            waiting = sorted(request.url for request in in_flight)[:5]
            raise HandoutError(f"{what} was still loading after {seconds:g} s: "
                               f"{waiting or 'images still decoding'}")
        tab.wait_for_timeout(100)  # lets Playwright answer the routes meanwhile


def load(browser, page_html: str, html: Path, figures: Path):
    """A tab with the print page loaded, every image in and the math typeset."""
    missing, off_site = [], []

    def serve(route):
        url = route.request.url
        if not url.startswith(SITE):
            off_site.append(url)
            return route.abort("blockedbyclient")
        path = unquote(urlparse(url).path).lstrip("/")
        if path == PRINT_PAGE:
            return route.fulfill(body=page_html, content_type="text/html; charset=utf-8")
        file = figures / path[len(FIGURES):] if path.startswith(FIGURES) else html / path
        if not file.is_file():
            missing.append(str(file))
            return route.fulfill(status=404, body="")
        return route.fulfill(path=file)

    tab = browser.new_page()
    in_flight, crashed = watch_requests(tab)
    tab.route("**/*", serve)
    tab.goto(SITE + PRINT_PAGE, wait_until="load", timeout=SETTLE_SECONDS * 1000)
    tab.evaluate("document.fonts.ready.then(() => true)")
    settle(tab, in_flight, crashed)
    if off_site:
        raise HandoutError(f"the pages asked for files outside the site: {sorted(set(off_site))[:5]}")
    if missing:
        raise HandoutError(f"the pages use files the site does not have: {sorted(set(missing))[:5]}")
    broken = tab.evaluate("[...document.images].filter(i => !i.complete || !i.naturalWidth).map(i => i.src)")
    if broken:
        raise HandoutError(f"images that did not load: {broken[:5]}")
    raw = tab.evaluate("[...document.querySelectorAll('.math')].filter(m => !m.querySelector('mjx-container'))"
                       ".map(m => m.textContent.slice(0, 60))")
    if raw:
        raise HandoutError(f"math left untypeset: {raw[:5]}")
    return tab


# Chromium lays the same tab out in one of two ways, print after print (the instructor
# edition at e817430 alternated between 132 and 131 sheets, with no script on the page), so
# the final print is repeated until it matches the draft's layout: one of two does.
FINAL_PRINTS = 3


def print_edition(browser, book: Path, html: Path, figures: Path, out: Path, paper: str, instructor: bool) -> int:
    """Print one edition to ``out``, with page numbers in its contents; return its sheets.

    A draft print finds the page each entry starts on; the final print fills those numbers
    into the contents. Two prints of one tab can lay out differently (FINAL_PRINTS says how),
    and a print has been read back cut short, so both are checked (every sheet numbered
    "page n of N", every title on the page the contents give); the final print is repeated
    until it matches the draft, and the edition printed again from a new tab, up to
    ``PRINT_TRIES`` times, before it fails with what was wrong.
    """
    page_html, entries = compose(book, html, figures, instructor)
    options = dict(format=paper, print_background=True, display_header_footer=True, margin=MARGIN,
                   header_template="<span></span>", footer_template=footer(load_substitutions(book), instructor))
    for attempt in range(1, PRINT_TRIES + 1):
        tab = load(browser, page_html, html, figures)
        try:
            try:
                draft = draft_sheets(tab, options)
                wrong = misnumbered_sheets(draft)
            except (HandoutError, subprocess.CalledProcessError) as err:  # a draft cut short
                wrong = [str(err)]
            if not wrong:
                numbers = draft_numbers(draft, entries)
                tab.evaluate("""(numbers) => {
                    document.querySelectorAll('.handout-mark').forEach(mark => mark.remove());
                    document.querySelectorAll('.handout-number').forEach(
                        span => { span.textContent = numbers[+span.dataset.entry]; });
                }""", numbers)
                for _ in range(FINAL_PRINTS):
                    # bookmarks from the headings; tags let a screen reader follow the text
                    tab.pdf(path=out, outline=True, tagged=True, **options)
                    final, wrong = checked_print(out, entries, numbers)
                    if not wrong:
                        return len(final)
        finally:
            tab.close()
        print(f"rec11: {out.name}: a print came out wrong ({wrong[0]}); printing it again"
              f" ({attempt} of {PRINT_TRIES} tries)", file=sys.stderr)
    raise HandoutError(f"{out}: {PRINT_TRIES} prints came out wrong, the last: {wrong[:3]}")


def checked_print(pdf: Path, entries: list[Entry], numbers: list[int]) -> tuple[list[str], list[str]]:
    """(its sheets' text, what is wrong with it) for a final print: cut short (no end, or
    sheets missing by their footers), or a title not on the sheet the contents give it;
    nothing wrong when it is right."""
    try:
        final = sheets(pdf)
    except (HandoutError, subprocess.CalledProcessError) as err:
        return [], [str(err)]
    return final, misnumbered_sheets(final) or moved_entries(entries, numbers, final)


def draft_sheets(tab, options: dict) -> list[str]:
    """The text of each sheet of a draft print of the tab."""
    with tempfile.TemporaryDirectory() as tmp:
        draft = Path(tmp) / "draft.pdf"
        tab.pdf(path=draft, **options)  # bookmarks and tags change no layout: the final print adds them
        return sheets(draft)


def misnumbered_sheets(text: list[str]) -> list[str]:
    """The sheets whose footer does not read "page n of N", N the sheets read back: a PDF
    cut short (CI once read an edition whose last sheet said "page 82 of 128")."""
    return [f"sheet {n} of {len(text)} is not numbered 'page {n} of {len(text)}'"
            for n, sheet in enumerate(text, 1) if f"page {n} of {len(text)}" not in " ".join(sheet.split())]


def draft_numbers(text: list[str], entries: list[Entry]) -> list[int]:
    """The sheet each entry's title is on, in a draft print's text (its marks say where)."""
    numbers = []
    for i, entry in enumerate(entries):
        found = [n for n, sheet in enumerate(text, 1) if f"@@{i}@@" in sheet]
        if not found:
            raise HandoutError(f"the title of {entry.docname} ({entry.title!r}) is not in the printed draft")
        numbers.append(found[0])
    return numbers


def moved_entries(entries: list[Entry], numbers: list[int], final: list[str]) -> list[str]:
    """The entries whose titles are not on the sheet the contents give them."""
    flat = [re.sub(r"\s+", "", sheet) for sheet in final]
    return [f"{entry.title!r} is not on page {number} of {len(final)}" for entry, number in zip(entries, numbers)
            if number > len(flat) or re.sub(r"\s+", "", entry.title) not in flat[number - 1]]


def make(book: Path, html: Path, figures: Path, paper: str = "Letter") -> dict[Path, tuple[int, float]]:
    """Both editions; {pdf: (sheets, seconds to compose and print it)}."""
    if not (html / "index.html").is_file():
        raise HandoutError(f"no built site at {html} ({html / 'index.html'} is missing): "
                           "build the book first (python -m rec11_book.commands.build)")
    if not Path(CHROMIUM).is_file():
        raise HandoutError(f"Chromium is missing: {CHROMIUM} (install chromium, or set REC11_CHROMIUM)")
    if not shutil.which("pdftotext"):  # it finds the pages the contents give
        raise HandoutError("pdftotext is missing: install poppler-utils (apt-get install poppler-utils)")
    name = load_substitutions(book).get("handout")
    if not name:
        raise HandoutError(f"{book / '_config.yml'}: the course fact `handout` (the PDF's file name) is missing")
    from playwright.sync_api import sync_playwright

    written = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for instructor, pdf in ((False, html / name), (True, html / instructor_name(name))):
                start = time.perf_counter()
                count = print_edition(browser, book, html, figures, pdf, paper, instructor)
                written[pdf] = count, time.perf_counter() - start
        finally:
            browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, default=Path("."), help="folder with _config.yml and _toc.yml")
    parser.add_argument("--html", type=Path, default=None, help="the built site (default: BOOK/_build/html)")
    parser.add_argument("--figures", type=Path, default=None, help="the exported figures (default: BOOK/figures)")
    parser.add_argument("--paper", choices=["Letter", "A4"], default="Letter")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    html = args.html or args.book / "_build" / "html"
    if (html.parent / ".doctrees" / FAILED_PAGES).is_file():  # rec11_book.commands.build's record of a failed build
        print("rec11: handout: the last build FAILED, and the handout prints only a site that built. "
              "Fix: what the build's last line says, then make handout", file=sys.stderr)
        return 1
    try:
        written = make(args.book, html, args.figures or args.book / "figures", args.paper)
    except (HandoutError, FileNotFoundError) as err:  # a page _toc.yml lists is missing
        print(f"rec11: handout: {err}", file=sys.stderr)
        return 1
    for pdf, (count, seconds) in written.items():
        print(f"rec11: wrote {pdf} ({count} pages, {args.paper}, {pdf.stat().st_size / 1e6:.1f} MB, {seconds:.1f} s)")
    print(f"rec11: the handout took {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
