"""The real book builds strictly, and its pages show what they claim."""

import re
from pathlib import Path

import pytest

from rec11 import notes
from rec11.chapter import toc_pages
from rec11_book.extensions import executions
from rec11_book.shared import warmkernels
from rec11_book.shared.pages import code_cells

pytestmark = pytest.mark.build


@pytest.fixture(scope="session")
def built(built_book):
    """The whole book, built once per session (tests/conftest.py)."""
    return built_book["out"]


def page_html(built, page):
    return (built / "_build" / "html" / f"{page}.html").read_text()


def test_every_toc_page_is_built_without_leftovers(root, built):
    for page in toc_pages(root):
        html = page_html(built, page)
        assert "{{" not in html, f"{page}: an unsubstituted course fact"
        # only a cell tagged raises-exception may show a traceback
        expected = html.count("tag_raises-exception")
        assert html.count("Traceback (most recent call last)") == expected, f"{page}: a cell printed a traceback"


def test_every_page_ran_before_sphinx_read_it(built_book):
    """The pages run two at a time into the execution cache before the build
    (rec11_book.commands.preexecute); a page myst-nb then runs again itself means the notebook
    preexecute hashed is not the one myst-nb hashes, and the build is slow again."""
    record = executions.read(built_book["out"] / "_build" / ".doctrees")
    assert record["ahead"] or record["cached"], f"nothing ran before the build: {record}"
    assert not record["executed"], \
        f"myst-nb ran these pages again, so their pre-executed notebooks did not match: {record['executed']}"


def test_each_page_that_imports_torch_or_matplotlib_ran_in_a_forked_kernel(built_book):
    """A page whose code imports torch or matplotlib gets a kernel forked from one that imported them once
    (rec11_book.shared.warmkernels); the others, and a machine that cannot fork, a fresh one."""
    log = built_book["log"]
    ran = [Path(page) for page in re.findall(r"^(\S+\.md): Executed notebook in", log, re.M)]
    summary = re.search(r"page\(s\) ran \d+ at a time in .*?; (\d+) kernel\(s\) forked", log)
    if not ran:
        pytest.skip("every page came from the execution cache: no kernel started")
    expected = sum(warmkernels.imports_preloaded(code_cells(page.read_text())) for page in ran)
    assert expected > 1 and summary, f"no summary of the pages run ahead: {log[-2000:]}"
    assert int(summary[1]) == (expected if warmkernels.available() else 0)


def test_the_landing_figure_is_built_with_its_alt_text(built):
    html = page_html(built, "book/index")
    imgs = re.findall(r'<img[^>]*alt="(Three panels[^"]*)"', html)
    assert imgs and "attention weights" in imgs[0]
    png = built / "figures" / "one-idea-weights.png"
    assert png.stat().st_size > 5000
    assert (built / "figures" / "one-idea-weights.svg").is_file()


def test_every_image_has_real_alt_text(root, built):
    for page in toc_pages(root):
        for tag in re.findall(r"<img\b[^>]*>", page_html(built, page)):  # figures and theme chrome
            alt = re.search(r'\balt="([^"]*)"', tag)
            assert alt and len(alt[1]) >= 15 and not alt[1].endswith((".png", ".svg")), f"{page}: {tag[:200]}"


def test_the_session_plan_lists_every_note_in_order(root, built):
    html = page_html(built, "book/instructor")
    html = html[html.index("The plan, slide by slide"):]  # past the sidebar's page titles
    plan = notes.collect(root)
    positions = [html.find(f">{n.slide}<") for n in plan]
    assert -1 not in positions, [n.slide for n, p in zip(plan, positions) if p == -1]
    assert positions == sorted(positions)
    assert (built / "figures" / "session-plan.png").is_file()


def test_instructor_notes_are_collapsed_and_distinct(built):
    html = page_html(built, "book/index")
    assert len(re.findall(r'class="[^"]*\binstructor-note\b[^"]*\bdropdown\b', html)) == 2
    assert "Instructor notes · 2 min · Recitation 11" in html
    css = (built / "_build" / "html" / "_static" / "rec11.css").read_text()
    assert ".admonition.instructor-note" in css


# --- the handout: short, true, readable on a phone and free of machinery talk ----------

CORE_MINUTES = 45  # the whole chapter's core
SLIDE_RATIO = 1.5  # each page's core, against its slides' minutes in the instructor notes


@pytest.fixture(scope="session")
def times(root, built):
    """Reading times as the build computed them (its saved environment), read with the
    same code that writes them into the pages."""
    import pickle

    from rec11_book.extensions.reading import Times

    env = pickle.loads((built / "_build" / ".doctrees" / "environment.pickle").read_bytes())
    return Times(env, root)


def test_every_page_shows_its_reading_time(root, built):
    for page in toc_pages(root):
        assert 'class="rec11-reading-time"' in page_html(built, page), f"{page}: no reading time under the title"
    landing = page_html(built, "book/index")
    assert "The chapter's core reads in about" in landing


def test_the_core_fits_the_session(times):
    core_pages = times.core_pages()
    total = sum(times.core(d) for d in core_pages)
    assert total <= CORE_MINUTES, f"the chapter's core reads in {total:.1f} min (at most {CORE_MINUTES})"
    for page in core_pages:
        slides, core = times.slide_minutes(page), times.core(page)
        assert slides, f"{page}: a core page with no instructor note (slide minutes)"
        assert core <= SLIDE_RATIO * slides, f"{page}: core {core:.1f} min for {slides:g} min of slides"
    assert times.parent, "the experiments beyond the slides have no going-further pages"


def test_every_glue_reference_resolves(root, built):
    for page in toc_pages(root):
        html = page_html(built, page)
        assert "{glue" not in html and "glue:text" not in html, f"{page}: an unresolved glue reference"


def test_no_figure_text_is_smaller_than_9_px_on_a_phone(built):
    from rec11_tools.figtext import MIN_PX, measure

    sizes = measure(built / "figures")
    assert sizes, "no figures exported"
    small = {name: f"{px:.1f} px ({text!r})" for name, (px, text) in sizes.items() if px < MIN_PX}
    assert not small, f"figure text below {MIN_PX} px at phone width: {small}"


# "the KV cache" is the subject (a transformer's stored keys and values), not the machinery
MACHINERY = re.compile(
    r"\b(the build|builds? of the book|build(?:ing)? time|build machines?|(?<!KV )caches?|cached|caching|"
    r"asserts?|asserted|the goals? we|goals we set|the notes)\b", re.I)


def student_text(html: str) -> str:
    """What a student reads on a page: prose, captions, alt texts, comments in shown code."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one("article") or soup
    for hidden in article.select(".instructor-note, script, style, details.hide"):
        hidden.decompose()
    comments = [c.get_text() for c in article.select("div.highlight .c1, div.highlight .c")]
    for code in article.select("div.highlight, pre"):
        code.decompose()
    alts = [img.get("alt", "") for img in article.select("img")]
    return "\n".join([article.get_text(" "), *alts, *comments])


def test_student_text_is_about_the_subject(root, built):
    found = {}
    for page in toc_pages(root):
        if page == "book/instructor":
            continue
        words = {m.group(0) for m in MACHINERY.finditer(student_text(page_html(built, page)))}
        if words:
            found[page] = sorted(words)
    assert not found, f"student text speaks of the book's machinery: {found}"


def test_no_token_written_as_raw_html(root, built):
    # "<s>" typed into a caption or prose is a strikethrough tag to the browser: the token
    # vanishes and the text after it is struck through. Write it as code, `<s>`.
    from bs4 import BeautifulSoup

    struck = [page for page in toc_pages(root)
              if BeautifulSoup(page_html(built, page), "html.parser").find(["s", "strike"])]
    assert not struck, f"a raw <s> tag strikes text through on: {struck}"
