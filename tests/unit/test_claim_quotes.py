"""A claim's message quotes its sentence: every 'quoted' phrase in it is on the page it names.

The message is how ROBUSTNESS.md, the ledger and a failing build point a reader at the
sentence a claim checks. A quote that is not on the page (a paraphrase, or words the page has
since dropped) leaves the reader to guess which sentence that is, and lets the words drift away
from their check unnoticed. So each quoted phrase must be found in the page's reading text:
its prose, captions and alt text, with glued numbers, math markup and Greek letters read as
they are written in the messages (``reading_text``). Within a quote, ``...``, ``…``, a computed
``{part}`` and an editorial ``[insertion]`` stand for words left out.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rec11_book.extensions.facts import prose
from rec11_book.shared.pages import parse_cells
from rec11_tools.ledger import claim_calls

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"

# A quote opens after a non-letter and closes before one, so the apostrophes of "model's"
# and "fell's" are not quote marks.
QUOTE = re.compile(r"(?<![A-Za-z0-9])'(?=\S)(.+?)(?<=\S)'(?![A-Za-z0-9])")
GAP = re.compile(r"\.\.\.|…|\{[^{}]*\}|\[[^\[\]]*\]")
# the page a message names first ("further/vae.md: ..." or "further/exercise-1.md (figure): ...")
NAMED_PAGE = re.compile(r"^([\w/-]+\.md)\b")
WORDS = {"β": "beta", "μ": "mu", "σ": "sigma", "α": "alpha", "→": "->", "≤": "<=", "≥": ">=",
         "×": "x", "−": "-", "’": "'", "‘": "'", "“": '"', "”": '"', "⁻": "-", "√": "sqrt"}
LATEX = {r"\to": "->", r"\le": "<=", r"\ge": ">=", r"\times": "x", r"\approx": "~"}


def reading_text(page_text: str) -> str:
    """What a reader reads of a page: its markdown with the code blanked (the facts rule's
    reading), plus each code cell's options, where captions and alt text live."""
    return prose(page_text) + "\n" + "\n".join(options for _, options, _ in parse_cells(page_text))


def normalise(text: str) -> str:
    """Lower case, one space between words, markup and math read as the messages write them."""
    text = re.sub(r"\{glue(?::\w+)?\}`[^`]*`", " \x00 ", text)  # a number from the run: a gap
    text = re.sub(r"\{\w+(?::\w+)?\}`([^`<]*)(?:<[^>]*>)?`", r"\1", text)  # {term}`x`, {ref}`x <y>`
    for command, words in LATEX.items():
        text = re.sub(re.escape(command) + r"(?![A-Za-z])", words, text)
    text = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", text)
    text = re.sub(r"\\(?:mathrm|text|mathbf|operatorname)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)  # \beta -> beta
    for letter, words in WORDS.items():
        text = text.replace(letter, words)
    text = re.sub(r"[$*`{}\\]|_(?=\w)|(?<=\w)_", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def quoted_parts(message: str) -> list[list[str]]:
    """The words of each quote in a message, split where words were left out."""
    return [[p.strip() for p in GAP.split(q) if p.strip(" ,.;:")] for q in QUOTE.findall(message)]


def missing_quotes(root: Path = ROOT) -> list[str]:
    pages = {p.relative_to(root / "book").as_posix(): p.read_text() for p in (root / "book").rglob("*.md")}
    readable = {name: normalise(reading_text(text)) for name, text in pages.items()}
    missing = []
    for name, text in sorted(pages.items()):
        for call in claim_calls(text):
            message = call["sentence"]
            named = NAMED_PAGE.match(message)
            target = named[1] if named and named[1] in readable else name
            for parts in quoted_parts(message):
                absent = [p for p in parts if normalise(p) not in readable[target]]
                if absent:
                    missing.append(f"book/{name}:{call['line']}: {absent[0]!r} is not on book/{target}")
    return missing


def test_quote_parsing_reads_apostrophes_gaps_and_insertions():
    assert quoted_parts("x.md: at T = 1 raced's bar is longer than fell's") == []
    assert quoted_parts("x.md: 'the model's spike' (model)") == [["the model's spike"]]
    assert quoted_parts("{where}: 'only more slowly ... later on average'") == \
        [["only more slowly", "later on average"]]
    assert quoted_parts("x.md: 'even at T = 0.1 it is [most] of the output'") == \
        [["even at T = 0.1 it is", "of the output"]]


def test_reading_text_keeps_captions_and_alt_text_but_not_code():
    page = "Prose.\n```{code-cell} ipython3\n---\nmystnb:\n  caption: A caption.\n---\nx = 'code words'\n```\n"
    text = reading_text(page)
    assert "Prose." in text and "A caption." in text and "code words" not in text


def test_normalise_reads_math_and_glue_as_messages_write_them():
    assert normalise(r"at $\beta = 2$, $\mu \to 0$") == "at beta = 2, mu -> 0"
    assert normalise(r"grows like $\sqrt{d_k}$") == "grows like sqrt(dk)"
    assert normalise("the error is {glue:text}`x:.2f` nats") == "the error is \x00 nats"


@pytest.mark.parametrize("bad", ["x.md: 'words the page never says'"])
def test_a_quote_that_is_not_on_the_page_is_found(tmp_path, bad):
    (tmp_path / "book").mkdir()
    cell = f'```{{code-cell}} ipython3\nclaim(1, ">", 0, "{bad}")\n```\n'
    (tmp_path / "book" / "x.md").write_text("The page says other words.\n\n" + cell)
    assert missing_quotes(tmp_path) == ["book/x.md:4: 'words the page never says' is not on book/x.md"]
    (tmp_path / "book" / "x.md").write_text("It says words the page never says.\n\n" + cell)
    assert missing_quotes(tmp_path) == []


def test_every_quote_in_a_claims_message_is_on_its_page():
    missing = missing_quotes()
    assert not missing, (
        f"{len(missing)} claim message(s) quote words their page does not say:\n  " + "\n  ".join(missing)
        + "\nQuote the sentence the claim checks as the page writes it (leave words out with ...), "
        "or change the page's words; a reworded message is a 'reworded' entry in robustness/ledger.yml.")
