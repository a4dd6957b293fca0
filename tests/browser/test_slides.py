"""The instructor's deck (``slides/index.html``, rec11_book.extensions.slides) in Chromium.

One slide per instructor note, in the book's order, titled by its ``:slide:``; its
speaker notes are the note, markup and minutes kept; nothing overflows 1280×720;
axe-core finds nothing; the keyboard and the speaker view work offline; every link
from the pages to the deck lands on a slide.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_support import REPORT, book_dir, describe, run_axe
from bs4 import BeautifulSoup

from rec11 import notes
from rec11_book.shared.pages import DECK, slide_id

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
NOTES = notes.collect(book_dir())
MARKUP = "code, em, strong, span.math, div.math"
GLYPH_ID = re.compile(r"MJX-\d+-")


def drawn(tag) -> str:
    """Markup as drawn. Math is typeset SVG (rec11_book.extensions.mathsvg): a page keeps one set
    of glyphs for its formulas, the deck gives each formula its own, numbered; both left out."""
    return GLYPH_ID.sub("MJX-", re.sub(r"<defs>.*?</defs>", "", str(tag), flags=re.S))

# Every element of the current slide (speaker notes aside) inside the slide's box,
# in the deck's own 1280×720 units; code and tables do not scroll sideways; no text
# or image under reveal's arrows or slide number.
OVERFLOW = """() => {
  const box = document.querySelector('.reveal .slides').getBoundingClientRect();
  const scale = Reveal.getScale(), slide = Reveal.getCurrentSlide(), out = [];
  const chromes = [...document.querySelectorAll('.reveal .controls button, .reveal .slide-number')]
    .filter(e => getComputedStyle(e).visibility === 'visible' && getComputedStyle(e).display !== 'none')
    .map(e => e.getBoundingClientRect());
  for (const el of slide.querySelectorAll('*')) {
    if (el.closest('aside.notes') || el.closest('mjx-assistive-mml')) continue;
    const r = el.getBoundingClientRect();
    const past = Math.max(r.right - box.right, r.bottom - box.bottom, box.left - r.left, box.top - r.top);
    if (r.width && r.height && past > 1) out.push(`${el.tagName} ${Math.round(past / scale)} px out`);
    if (/^(PRE|TABLE)$/.test(el.tagName) && el.scrollWidth > el.clientWidth + 1) out.push(`${el.tagName} scrolls`);
  }
  const under = (r, what) => chromes.forEach(c => {
    if (r.width && r.left < c.right && c.left < r.right && r.top < c.bottom && c.top < r.bottom)
      out.push(`${what} under reveal's controls`);
  });
  const walker = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim() || node.parentElement.closest('aside.notes, mjx-assistive-mml')) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) under(r, JSON.stringify(node.textContent.trim().slice(0, 30)));
  }
  slide.querySelectorAll('img, mjx-container svg').forEach(el => under(el.getBoundingClientRect(), el.tagName));
  return out;
}"""


def page_soup(html_root: Path, docname: str) -> BeautifulSoup:
    return BeautifulSoup((html_root / f"{docname}.html").read_text(), "html.parser")


@pytest.fixture(scope="module")
def html_root(built_site) -> Path:
    return built_site["html"]


@pytest.fixture(scope="module")
def deck_soup(html_root) -> BeautifulSoup:
    return BeautifulSoup((html_root / DECK).read_text(), "html.parser")


@pytest.fixture
def deck(context, site):
    page = context.new_page()
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(site + DECK)
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    return page


def test_one_slide_per_note_in_book_order(deck_soup):
    main = deck_soup.select("section.rec11-main-slide")
    assert [s["data-slide"] for s in main] == [n.slide for n in NOTES]
    assert [s.h2.get_text() for s in main] == [n.slide for n in NOTES]
    assert len(NOTES) == 15, "the recitation's deck has 15 slides"
    figures = deck_soup.select("section.rec11-figure-slide")
    REPORT["slides"]["slides/index.html"] = {
        "slides": str(len(main)), "extra figure slides": str(len(figures)),
        "notes": str(sum(bool(s.select_one("aside.notes")) for s in main))}


def test_the_title_slide_reads_as_the_seeds(deck_soup):
    """The seed's first slide: its title, its subtitle and its one line."""
    first = deck_soup.select_one("section.rec11-title-slide")
    shown = " ".join(" ".join(s for s in first.strings if not s.find_parent("aside")).split())
    for line in ("Recitation 11", "Attention, transformers, generative models",
                 "Three lectures of mechanics, one session"):
        assert line in shown, f"the title slide lacks {line!r}: {shown[:200]}"
    tab = deck_soup.title.get_text()
    assert tab.startswith("Slides · Recitation 11"), f"the deck's tab is named {tab!r}"


def test_every_slide_has_content_and_its_note_with_markup_and_minutes(deck_soup, html_root):
    for note, slide in zip(NOTES, deck_soup.select("section.rec11-main-slide")):
        aside = slide.select_one("aside.notes")
        assert aside is not None and f"{note.minutes:g} min" in aside.get_text(), note.slide
        assert slide.find_all(True, recursive=False)[1:-1], f"{note.slide}: nothing on the slide"
        # the same markup as the note on its page
        boxes = [b for b in page_soup(html_root, note.page).select("div.instructor-note")
                 if b.p.get_text().endswith(f"· {note.slide}")]
        assert len(boxes) == 1, note.slide
        on_page = [drawn(t) for t in boxes[0].select(MARKUP)]
        in_deck = [drawn(t) for t in aside.select(MARKUP) if not t.find_parent(class_="rec11-minutes")]
        assert in_deck == on_page, note.slide
        for formula in aside.select("mjx-container"):  # the speaker view copies a note on its own
            carried = {path["id"] for path in formula.select("defs path")}
            uses = {use["xlink:href"].lstrip("#") for use in formula.select("use")}
            assert uses <= carried, f"{note.slide}: a formula in the note draws glyphs it does not carry"
    kinds = {t.name for t in deck_soup.select("aside.notes code, aside.notes em, aside.notes span.math")}
    assert kinds == {"code", "em", "span"}, "some note should carry code, emphasis and math"


def test_figures_are_the_pages_own_files_with_their_alt_text(deck_soup, html_root):
    page_alts = {img["src"].rsplit("/", 1)[-1]: img["alt"] for docname in {n.page for n in NOTES}
                 for img in page_soup(html_root, docname).select("article figure img")}
    images = deck_soup.select("section img")
    assert images
    for img in images:
        name = img["src"].rsplit("/", 1)[-1]
        assert img["src"] == f"../_images/{name}" and (html_root / "_images" / name).is_file()
        assert img["alt"] == page_alts[name]


def test_no_slide_overflows_1280_by_720(deck):
    assert deck.evaluate("[Reveal.getConfig().width, Reveal.getConfig().height]") == [WIDTH, HEIGHT]
    problems = {}
    for index in range(deck.evaluate("Reveal.getTotalSlides()")):
        deck.evaluate(f"Reveal.slide({index})")
        deck.wait_for_function("[...Reveal.getCurrentSlide().querySelectorAll('img')].every(i => i.complete)")
        found = deck.evaluate(OVERFLOW)
        if found:
            problems[deck.evaluate("Reveal.getCurrentSlide().getAttribute('aria-label') || "
                                   "Reveal.getCurrentSlide().dataset.slide")] = found[:3]
    assert not problems, problems


def test_axe_finds_no_violations_on_any_slide(deck):
    # each slide as it stays: no transition to wait out (run_axe waits for any still
    # running), and nothing in the deck changes after it is shown
    deck.evaluate("Reveal.configure({transition: 'none', backgroundTransition: 'none'})")
    for index in range(deck.evaluate("Reveal.getTotalSlides()")):
        deck.evaluate(f"Reveal.slide({index})")
        violations = run_axe(deck, quiet_ms=0)
        assert not violations, f"slide {index + 1}:\n{describe(violations)}"


def test_arrow_keys_move_through_the_deck(deck):
    deck.keyboard.press("ArrowRight")
    assert deck.evaluate("Reveal.getIndices().h") == 1
    deck.keyboard.press("ArrowLeft")
    assert deck.evaluate("Reveal.getIndices().h") == 0


def test_the_speaker_view_shows_the_notes_offline(deck):
    with deck.expect_popup() as opened:
        deck.keyboard.press("s")
    speaker = opened.value
    value = speaker.locator(".speaker-controls-notes .value")
    first = NOTES[0]
    value.filter(has_text=f"{first.minutes:g} min").wait_for(timeout=20_000)
    # a note with code and math: its markup, math typeset as self-contained SVG
    note = next(n for n in NOTES if n.page == "book/three-details")
    deck.evaluate("(id) => Reveal.slide(Reveal.getIndices(document.getElementById(id)).h)", slide_id(note.slide))
    value.filter(has_text=f"{note.minutes:g} min").wait_for(timeout=20_000)
    assert value.locator("code").count() >= 1
    assert value.locator("mjx-container svg").count() >= 1
    assert "dim=-1" in value.inner_text()
    upcoming = speaker.frame_locator("#upcoming-slide iframe").first
    assert upcoming.locator(".reveal .slides").count() == 1


def test_every_link_to_the_deck_lands_on_a_slide(deck_soup, html_root):
    ids = {s["id"] for s in deck_soup.select("section[id]")}
    pages_with_slides = {n.page for n in NOTES}
    linked = {}
    for path in html_root.rglob("*.html"):
        docname = path.relative_to(html_root).with_suffix("").as_posix()
        for a in BeautifulSoup(path.read_text(), "html.parser").select('a[href*="slides/index.html#/"]'):
            target = (path.parent / a["href"].split("#")[0]).resolve()
            assert target == (html_root / DECK).resolve(), f"{docname}: {a['href']}"
            assert a["href"].split("#/")[1] in ids, f"{docname}: {a['href']} is no slide"
            linked.setdefault(docname, []).append(a["href"].split("#/")[1])
    for docname in pages_with_slides:
        first = next(n.slide for n in NOTES if n.page == docname)
        assert slide_id(first) in linked.get(docname, []), f"{docname} does not link its first slide"
        link = page_soup(html_root, docname).select_one(".rec11-slides-link a")
        assert link is not None and link["href"].endswith("#/" + slide_id(first)), docname
    plan = linked.get("book/instructor", [])
    assert all(slide_id(n.slide) in plan for n in NOTES), "the session plan links every slide"


def test_the_page_link_to_the_deck_is_not_printed(deck, site):
    page = deck.context.new_page()
    page.goto(site + "book/attention.html")
    link = page.locator(".rec11-slides-link a")
    assert link.is_visible() and re.search(r"\S", link.inner_text())
    page.emulate_media(media="print")
    assert not link.is_visible()


def test_deck_only_text_is_on_the_slide_and_not_on_the_page(deck, site):
    page = deck.context.new_page()
    page.goto(site + "book/index.html")
    hidden = page.locator(".rec11-deck-only")
    assert hidden.count() >= 1, "the title slide's subtitle is marked :deck-only:"
    for media in ("screen", "print"):
        page.emulate_media(media=media)
        assert not any(hidden.nth(i).is_visible() for i in range(hidden.count())), media
    page.close()
    deck.goto(deck.url.split("#")[0] + "#/0")
    assert deck.locator(".present .rec11-deck-only").first.is_visible()


def test_math_is_the_builds_svg_and_the_deck_loads_no_mathjax(deck):
    scripts = deck.evaluate("[...document.scripts].map(s => s.src).filter(Boolean)")
    assert scripts and not [s for s in scripts if "mathjax" in s.lower()], scripts
    assert deck.evaluate("document.querySelectorAll('.slides mjx-container svg').length") > 20
    raw = deck.evaluate("[...document.querySelectorAll('.slides span.math, .slides div.math')]"
                        ".filter(m => !m.querySelector('mjx-container')).map(m => m.textContent)")
    assert not raw, f"math left as TeX: {raw[:3]}"
