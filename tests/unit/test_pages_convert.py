"""This book's pages become plain Markdown that any notebook tool renders: the markup they use
is all markup the downloads convert (rec11_book.shared.plainmd; its cases, on text each test
writes, are tests/machinery/test_plainmd.py)."""

import re

import pytest
from plainmd_support import SITE, context

from rec11_book.shared.plainmd import convert, has_answers


@pytest.mark.parametrize("page", ["attention.md", "vae.md", "exercises.md", "further/exercise-2.md", "index.md"])
def test_the_book_pages_convert_without_markup(root, page):
    text = (root / "book" / page).read_text()
    body = re.sub(r"```\{code-cell\}.*?\n```", "", text.split("---", 2)[2] if text.startswith("---") else text,
                  flags=re.S)
    ctx, problems = context(docname=f"book/{page[:-3]}", book=root, labels={"sec-kl": ("book/three-details", "sec-kl")},
                            agenda=lambda doc, slides: "| agenda |",
                            solutions_url=f"{SITE}answers.ipynb" if has_answers(text) else "")
    out = convert(body, ctx)
    assert not [p for p in problems if "glued value" not in p[1]], problems
    for markup in (":::", "{slide}", "{instructor-note}", "{exercise}", "{solution}", ")=\n", "{handout}"):
        assert markup not in out, f"{page}: {markup!r} left in the notebook's markdown"
