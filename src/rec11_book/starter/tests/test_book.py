"""This book's own tests, with the machinery it installs (rec11 and rec11-book).

`make check` runs the fast ones: the term's block, the pages, the session's budget. `make test`
adds the build under a fresh seed, as one more retraining: every claim must hold for it.
"""

import html.parser
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from rec11.chapter import load_substitutions, toc_pages
from rec11.notes import budget, collect, compare
from rec11_book.extensions import facts
from rec11_book.shared.pages import parse_cells

ROOT = Path(__file__).resolve().parents[1]
HEADER = "jupytext:"


def test_the_term_block_holds():
    """Every date on its weekday in `year`, every relation true, every sentence's mark known."""
    problems = facts.check(ROOT)
    assert not problems, "\n".join(str(p) for p in problems)


def test_every_page_of_the_toc_is_a_myst_notebook():
    for page in toc_pages(ROOT):
        path = ROOT / f"{page}.md"
        assert path.is_file(), f"_toc.yml lists {page}, but {path} does not exist. Fix: add it, or remove the entry"
        assert HEADER in path.read_text().split("---", 2)[1], \
            f"{path}: no jupytext header, so the page does not run. Fix: copy book/index.md's front matter"


def test_code_lines_fit_a_phone_and_a_printed_page():
    """At most 79 characters: a 390 px phone and a printed page show no more."""
    for page in toc_pages(ROOT):
        for line, _, code in parse_cells((ROOT / f"{page}.md").read_text()):
            long = [text for text in code.splitlines() if len(text) > 79]
            assert not long, f"{page}.md:{line}: code lines over 79 characters: {long[:2]}"


def test_the_notes_keep_to_the_session_budget():
    facts_ = load_substitutions(ROOT)
    slack = float(facts_["budget_slack"])
    rows = compare(collect(ROOT), budget(facts_))
    over = {row: minutes for row, minutes in rows.items() if abs(minutes[0] - minutes[1]) > slack}
    assert not over, f"minutes in the notes vs the budget in _config.yml: {over}"


class Images(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.missing = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img" and not (attrs.get("alt") or "").strip():
            self.missing.append(attrs.get("src"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The book built by `make build`'s command under a seed nobody chose: a fresh retraining."""
    out = tmp_path_factory.mktemp("book")
    seed = random.SystemRandom().randint(1, 999_999)
    env = {**os.environ, "REC11_SEED": str(seed)}
    result = subprocess.run([sys.executable, "-m", "rec11_book.commands.build", "--book", str(ROOT), "--out", str(out),
                             "--figures", str(out / "figures")], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, f"the build failed under REC11_SEED={seed}:\n{result.stdout[-4000:]}{result.stderr}"
    return out / "_build" / "html"


@pytest.mark.build
def test_every_page_is_built_with_alt_text_on_every_image(built):
    for page in toc_pages(ROOT):
        path = built / f"{page}.html"
        assert path.is_file(), f"{page}: no page in the built site"
        images = Images()
        images.feed(path.read_text())
        assert not images.missing, f"{page}: images without alt text: {images.missing}"


@pytest.mark.build
def test_every_note_is_on_the_deck_and_every_page_downloads_as_a_notebook(built):
    deck = (built / "slides" / "index.html").read_text()
    for note in collect(ROOT):
        assert note.slide in deck, f"{note.page}.md:{note.line}: the slide {note.slide!r} is not in the deck"
    for page in toc_pages(ROOT):
        notebook = json.loads((built / "_sources" / f"{page}.ipynb").read_text())
        assert notebook["cells"], f"{page}: the notebook download is empty"
