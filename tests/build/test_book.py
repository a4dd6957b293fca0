"""The real book builds strictly, and its pages show what they claim."""

import re

import pytest

from rec11.book import notes

pytestmark = pytest.mark.build


@pytest.fixture(scope="session")
def built(built_book):
    """The whole book, built once per session (tests/conftest.py)."""
    return built_book["out"]


def page_html(built, page):
    return (built / "_build" / "html" / f"{page}.html").read_text()


def test_every_toc_page_is_built_without_leftovers(root, built):
    for page in notes.toc_pages(root):
        html = page_html(built, page)
        assert "{{" not in html, f"{page}: an unsubstituted course fact"
        # only a cell tagged raises-exception may show a traceback
        expected = html.count("tag_raises-exception")
        assert html.count("Traceback (most recent call last)") == expected, f"{page}: a cell printed a traceback"


def test_the_landing_figure_is_built_with_its_alt_text(built):
    html = page_html(built, "book/index")
    imgs = re.findall(r'<img[^>]*alt="(Three panels[^"]*)"', html)
    assert imgs and "attention weights" in imgs[0]
    png = built / "figures" / "one-idea-weights.png"
    assert png.stat().st_size > 5000
    assert (built / "figures" / "one-idea-weights.svg").is_file()


def test_every_image_has_real_alt_text(root, built):
    for page in notes.toc_pages(root):
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
