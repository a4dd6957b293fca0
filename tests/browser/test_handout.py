"""The printable handout: the whole chapter in one PDF, and its instructor edition.

``python -m rec11_book.commands.handout`` runs once on the test session's built site (the
deploy runs it on the published one); ``pdftotext`` reads both PDFs back. Pages,
size and time of each edition are printed at the end of the run.
"""

from __future__ import annotations

import html as html_lib
import os
import re
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest
from browser_support import REPORT, book_dir
from bs4 import BeautifulSoup
from test_print import UI_TEXT

from rec11 import notes
from rec11.chapter import load_substitutions, toc_pages
from rec11_book.commands.handout import compose, misnumbered_sheets
from rec11_book.shared.pages import for_instructors, front_matter, instructor_name

# one worker of make test's two prints the PDFs once, and its tests read them
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("handout")]

BOOK = book_dir()
NAME = load_substitutions(BOOK)["handout"]
STUDENT_PAGES = [p for p in toc_pages(BOOK) if not for_instructors(front_matter(BOOK, p))]


def flat(text: str) -> str:
    """Text without whitespace, quotes and ligatures made plain (a printed "fi" can come out
    as one glyph, ﬁ): a line wrapped in print still matches."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"\s+", "", text).translate(str.maketrans("‘’“”", "''\"\""))


def run_handout(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rec11_book.commands.handout", "--book", str(BOOK), *args],
                          check=False, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})


def sheets(pdf: Path, *layout: str) -> list[str]:
    text = subprocess.run(["pdftotext", *layout, str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return text.split("\f")[:-1]


@pytest.fixture(scope="module")
def handout(built_site) -> dict:
    """{"student": sheets, "instructor": sheets} of the two PDFs the command wrote."""
    html = built_site["html"]
    figures = html.parents[1] / "figures"
    start = time.perf_counter()
    result = run_handout("--html", str(html), "--figures", str(figures))
    seconds = time.perf_counter() - start
    assert result.returncode == 0, f"the handout failed:\n{result.stdout}\n{result.stderr}"
    pdfs = {"student": html / NAME, "instructor": html / instructor_name(NAME)}
    texts = {edition: sheets(pdf) for edition, pdf in pdfs.items()}
    for edition, text in texts.items():  # the command checked them: a change since is another writer's
        assert not misnumbered_sheets(text), f"the {edition} edition read back wrong: {misnumbered_sheets(text)[:3]}"
    REPORT.setdefault("handout", {})
    for edition, pdf in pdfs.items():
        REPORT["handout"][edition] = {"Letter pages": str(len(texts[edition])),
                                      "MB": f"{pdf.stat().st_size / 1e6:.1f}",
                                      "both editions, s": f"{seconds:.1f}"}
    return {"html": html, "figures": figures, "pdfs": pdfs, **texts}


def page_soup(html: Path, docname: str) -> BeautifulSoup:
    return BeautifulSoup((html / f"{docname}.html").read_text(), "html.parser")


def title(html: Path, docname: str) -> str:
    h1 = page_soup(html, docname).select_one("article h1")
    h1.select_one(".headerlink").decompose()
    return " ".join(h1.get_text(" ").split())


def plain_stretches(myst: str) -> list[str]:
    """The stretches of MyST text between math and glued numbers (which print differently),
    without link and emphasis markup."""
    text = re.sub(r"\]\([^)]*\)|[\[*]", "", myst)
    return [piece.strip() for piece in re.split(r"\$[^$]+\$|\{glue:text\}`[^`]+`", text) if len(piece.strip()) >= 8]


def test_the_student_handout_is_the_whole_chapter_in_order(handout):
    html, text = handout["html"], handout["student"]
    contents = "\n".join(sheets(handout["pdfs"]["student"], "-layout")[:3])
    dests = subprocess.run(["pdfinfo", "-dests", str(handout["pdfs"]["student"])], capture_output=True, text=True,
                           check=True).stdout
    links = {name: int(page) for page, name in re.findall(r'^\s*(\d+) \[.*?\] "([^"]+)"$', dests, re.M)}
    previous = 0
    for docname in STUDENT_PAGES:
        name = title(html, docname)
        listed = re.search(re.escape(name) + r" +(\d+)\s*$", contents, re.M)
        assert listed, f"the contents do not list {name!r} with a page number"
        number = int(listed[1])
        assert number > previous, f"{name!r} is on page {number}, before the page listed above it"
        assert flat(text[number - 1]).startswith(flat(name)), f"page {number} does not start with {name!r}"
        anchor = "page-" + docname.replace("/", "-")
        assert links.get(anchor) == number, f"the contents' link to {name!r} leads to page {links.get(anchor)}"
        previous = number


def test_the_student_handout_numbers_seven_exercises_and_puts_their_answers_after_them(handout):
    source = (BOOK / "book" / "exercises.md").read_text()
    # a box's fence is three colons or more (more when it holds a {slide} or {quick-check})
    boxes = re.findall(r"^(:{3,})\{(exercise|solution)\}[^\n]*\n(.*?)^\1$", source, re.M | re.S)
    boxes = [(kind, body) for _, kind, body in boxes]
    assert [kind for kind, _ in boxes].count("exercise") == 7, "book/exercises.md: expected seven exercises"
    printed = flat("".join(handout["student"]))
    page = printed[printed.index(flat("Seven exercises, in the chapter's order")):]
    answers = re.search(r"Answers.?Solutionto", page).start()  # .?: the title's icon glyph
    numbers = [page.index(flat(f"Exercise {n}")) for n in range(1, 8)]
    assert numbers == sorted(numbers) and numbers[-1] < answers, "Exercises 1 to 7, in order, then the answers"
    for kind, body in boxes:
        body = re.sub(r"^:::\{quick-check\}.*?^:::$", "", body, flags=re.M | re.S)  # checked below
        prose = "\n".join(line for line in body.splitlines() if not line.startswith(":"))
        for words in plain_stretches(prose)[:3]:
            words = " ".join(words.replace("`", "").split()[1:-1]) or words  # words beside math print apart
            at = page.find(flat(words))
            assert at >= 0, f"the handout lacks this {kind} text: {words!r}"
            if kind == "solution":
                assert at > answers, f"an answer printed beside its exercise: {words!r}"
    gated = source.index("```{solution-start} ex-three-bugs")
    first_words = plain_stretches(source[gated:].split("\n\n", 2)[1])[0].replace("`", "")
    assert page.find(flat(first_words)) > answers, "a worked answer with code printed beside its exercise"
    prompts = re.findall(r"^:::\{quick-check\} (.*)$", source, re.M)
    assert len(prompts) >= 7 and page[:answers].count(flat("Check yourself:")) == len(prompts)
    for prompt in prompts:
        for words in plain_stretches(prompt)[:1]:
            assert flat(words.replace("`", "")) in page[:answers], f"the handout lacks the quick check {words!r}"


def test_the_student_handout_has_typeset_math_and_no_web_controls_or_instructor_notes(handout):
    text = "".join(handout["student"])
    assert "\\(" not in text and "\\[" not in text, "raw TeX math in the handout"
    shown = [ui for ui in UI_TEXT if ui in text]
    assert not shown, f"the handout shows web controls or instructor notes: {shown}"
    plan = title(handout["html"], "book/instructor")
    assert flat(plan) not in flat(text), f"the student handout has the {plan!r} page"


@pytest.mark.parametrize("instructor", [False, True], ids=["student", "instructor"])
def test_every_formula_in_the_handout_draws_its_glyphs(built_site, instructor):
    """Each page's article goes into one document with its ids prefixed; a formula's glyphs
    are drawn by id, so a glyph prefixed and its use not would print the formula blank."""
    html = built_site["html"]
    page, _ = compose(book_dir(), html, html.parents[1] / "figures", instructor)
    formulas = re.findall(r"<mjx-container\b.*?</mjx-container>", page, re.S)
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    blank = [f for f in formulas if not set(re.findall(r'href="#([^"]+)"', f)) <= ids]
    assert formulas and not blank, f"{len(blank)} of {len(formulas)} formulas draw glyphs defined nowhere"


def test_shown_code_is_whole_and_hidden_code_is_left_out(handout):
    """Every line of code a page shows is printed, wrapped rather than cut at the margin;
    the set-up cells (``hide-cell``) and the plotting code of ``hide-input`` cells are not.
    Read with ``-layout``, which keeps a line's aligned comment on its line."""
    printed = flat("".join(sheets(handout["pdfs"]["student"], "-layout")))
    for docname in STUDENT_PAGES:
        article = page_soup(handout["html"], docname).select_one("article")
        for hidden in article.select("details.hide"):
            code = flat(hidden.get_text())
            assert code not in printed, f"{docname}: hidden code is printed: {hidden.get_text()[:80]!r}"
            hidden.decompose()
        for pre in article.select("div.cell .cell_input pre"):
            cut = [line for line in pre.get_text().splitlines() if line.strip() and flat(line) not in printed]
            assert not cut, f"{docname}: code lines missing from the handout: {cut[:3]}"


def test_every_figure_is_in_the_handout_as_a_vector_drawing(handout):
    """Each figure's caption is printed, and so is the longest text of its SVG: text
    inside a figure is only in the PDF's text when the figure is a vector drawing (the
    PNGs on the site are pictures of text)."""
    html, printed = handout["html"], flat("".join(handout["student"]))
    figures = [(docname, figure) for docname in STUDENT_PAGES
               for figure in page_soup(html, docname).select("article figure[id]")]
    assert len(figures) >= 20, f"only {len(figures)} figures found on the student pages"
    with_text = 0
    for docname, figure in figures:
        caption = figure.select_one(".caption-text")
        for math in caption.select(".math"):
            math.replace_with("\n")
        start = caption.get_text().split("\n")[0]
        assert flat(start)[:40] in printed, f"{docname}: figure {figure['id']}'s caption is not in the handout"
        svg = (handout["figures"] / f"{figure['id']}.svg").read_text()
        labels = [html_lib.unescape(t).strip() for t in re.findall(r"<text\b[^>]*>([^<]+)</text>", svg)]
        labels = [t for t in labels if re.search(r"[A-Za-z]{3}", t)]
        if labels:
            longest = max(labels, key=len)
            assert flat(longest) in printed, f"{docname}: figure {figure['id']} is not a vector drawing " \
                                             f"(its text {longest!r} is not in the PDF's text)"
            with_text += 1
    assert with_text >= len(figures) - 3, f"only {with_text} of {len(figures)} figures have text to check"


def test_the_instructor_edition_adds_every_note_and_the_session_plan(handout):
    text, student = " ".join(" ".join(s.split()) for s in handout["instructor"]), handout["student"]
    text = text.translate(str.maketrans("‘’“”", "''\"\""))
    book_notes = notes.collect(BOOK)
    assert text.count("Instructor notes ·") == len(book_notes), "not every instructor note is printed, once"
    for note in book_notes:
        heading = f"Instructor notes · {note.minutes:g} min · {note.slide}"
        assert heading in text, f"the instructor edition lacks the note for {note.slide!r} ({note.page})"
    plan = title(handout["html"], "book/instructor")
    assert re.search(re.escape(plan) + r" +\d+\s*$", "\n".join(sheets(handout["pdfs"]["instructor"], "-layout")[:3]),
                     re.M), f"the instructor edition's contents do not list {plan!r}"
    assert flat(plan) in flat(text) and len(handout["instructor"]) > len(student)


def test_the_landing_and_exercises_pages_link_to_the_student_handout(handout):
    for docname in ("book/index", "book/exercises"):
        links = page_soup(handout["html"], docname).select("article a.rec11-handout-link")
        assert links, f"{docname} has no link to the handout"
        for link in links:
            target = (handout["html"] / Path(docname).parent / link["href"]).resolve()
            assert target == handout["pdfs"]["student"].resolve() and target.is_file(), \
                f"{docname} links to {link['href']}, not to the handout"


def test_the_session_plan_links_to_both_editions(handout):
    links = page_soup(handout["html"], "book/instructor").select("article a.rec11-handout-link")
    targets = {(handout["html"] / "book" / link["href"]).resolve() for link in links}
    assert targets == {pdf.resolve() for pdf in handout["pdfs"].values()}, targets
    assert all(target.is_file() for target in targets)


# --- errors name what is missing ---------------------------------------------------------


def test_a_missing_site_is_named(tmp_path):
    result = run_handout("--html", str(tmp_path / "no-site"))
    assert result.returncode != 0
    assert str(tmp_path / "no-site" / "index.html") in result.stderr, result.stderr


def test_a_missing_figure_or_chromium_is_named(handout, tmp_path):
    """Both fail before anything is written, so the session's handout stays as it is."""
    html = handout["html"]
    first = next(f["id"] for d in STUDENT_PAGES for f in page_soup(html, d).select("article figure[id]"))
    result = run_handout("--html", str(html), "--figures", str(tmp_path))
    assert result.returncode != 0 and str(tmp_path / f"{first}.svg") in result.stderr, result.stderr
    result = run_handout("--html", str(html), env={"REC11_CHROMIUM": str(tmp_path / "chromium")})
    assert result.returncode != 0 and str(tmp_path / "chromium") in result.stderr, result.stderr
