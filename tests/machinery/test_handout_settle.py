"""The print page waits for its own requests, and says which one never came back; a print
that came out wrong (a title moved, a PDF cut short) is named."""
import time
from dataclasses import dataclass

import pytest

from rec11_book.commands import handout


@dataclass(frozen=True)
class Request:
    url: str


class Tab:
    """A stand-in tab: ``images`` says whether every image is decoded; time passes per wait."""

    def __init__(self, images=True, on_wait=None):
        self.images, self.on_wait, self.waits = images, on_wait, 0

    def evaluate(self, script):
        return self.images

    def wait_for_timeout(self, ms):
        time.sleep(ms / 1000)
        self.waits += 1
        if self.on_wait:
            self.on_wait(self)


def test_settle_returns_once_nothing_is_in_flight():
    tab = Tab()
    handout.settle(tab, set(), [])
    assert 4 <= tab.waits <= 10  # half a second of quiet, in steps of 0.1 s


def test_settle_waits_for_a_late_request():
    late = Request("http://handout.rec11/_static/font.woff")
    in_flight = {late}

    def answer(tab):
        if tab.waits == 3:
            in_flight.discard(late)

    tab = Tab(on_wait=answer)
    handout.settle(tab, in_flight, [])
    assert tab.waits >= 3 + 5


def test_settle_names_the_request_that_never_came_back(monkeypatch):
    monkeypatch.setattr(handout, "SETTLE_SECONDS", 0.3)
    stuck = Request("http://handout.rec11/_figures/never.svg")
    with pytest.raises(handout.HandoutError, match=r"never\.svg"):
        handout.settle(Tab(), {stuck}, [])


def test_settle_reports_a_crashed_tab():
    with pytest.raises(handout.HandoutError, match="crashed"):
        handout.settle(Tab(), set(), [True])


def test_a_final_print_that_moved_a_title_is_caught_not_an_index_error():
    """The contents' page numbers come from a draft print; a final print that laid out
    differently (shorter, or a title on another sheet) is named, so the edition is printed again."""
    entries = [handout.Entry("book/a", None, False, "Attention maps"),
               handout.Entry("book/b", None, False, "Diffusion")]
    final = ["Contents", "Attention\nmaps and more", "Diffusion, step by step"]
    assert handout.moved_entries(entries, [2, 3], final) == []
    assert handout.moved_entries(entries, [2, 4], final) == ["'Diffusion' is not on page 4 of 3"]
    assert handout.moved_entries(entries, [3, 3], final) == ["'Attention maps' is not on page 3 of 3"]


def test_a_print_cut_short_is_caught_by_its_footers():
    """Every sheet's footer reads "page n of N": a PDF read back with fewer sheets than its
    footers count, or out of order, is named."""
    whole = [f"Title\nCPSY 1291 · handout page {n} of 3\ntext" for n in (1, 2, 3)]
    assert handout.misnumbered_sheets(whole) == []
    cut = [sheet.replace(" of 3", " of 5") for sheet in whole]
    assert handout.misnumbered_sheets(cut)[0] == "sheet 1 of 3 is not numbered 'page 1 of 3'"
    assert (handout.misnumbered_sheets([whole[1], whole[0], whole[2]])[:1]
            == ["sheet 1 of 3 is not numbered 'page 1 of 3'"])


def test_a_title_missing_from_the_draft_is_named():
    entries = [handout.Entry("book/a", None, False, "Attention maps"),
               handout.Entry("book/b", None, False, "Diffusion")]
    assert handout.draft_numbers(["@@0@@ Attention maps", "more", "@@1@@ Diffusion"], entries) == [1, 3]
    with pytest.raises(handout.HandoutError, match="book/b"):
        handout.draft_numbers(["@@0@@ Attention maps"], entries)


def _numbered_pdf(path, count: int) -> None:
    """A PDF of ``count`` sheets, each with a title and a footer "page n of count", as the
    handout's are (drawn by matplotlib: no browser needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with PdfPages(path) as pdf:
        for n in range(1, count + 1):
            fig = plt.figure(figsize=(4, 5))
            fig.text(0.1, 0.9, f"Entry {n}")
            fig.text(0.1, 0.5, "text " * 20)
            fig.text(0.1, 0.05, f"CPSY 1291 handout page {n} of {count}")
            pdf.savefig(fig)
            plt.close(fig)


def test_a_pdf_cut_anywhere_is_caught(tmp_path):
    """Whatever byte a print is cut at (a file read while still being written, a disk that
    filled up), the check names it, so that the print is made again: the file has lost its
    %%EOF, or pdftotext finds fewer sheets than their footers count. Cut points every 1/60
    of the file, and the last byte; the whole file passes."""
    whole = tmp_path / "whole.pdf"
    _numbered_pdf(whole, 6)
    data = whole.read_bytes()
    entries = [handout.Entry(f"e{n}", None, False, f"Entry {n}") for n in range(1, 7)]
    numbers = list(range(1, 7))
    assert handout.checked_print(whole, entries, numbers)[1] == []
    cut = tmp_path / "cut.pdf"
    for size in sorted({len(data) * k // 60 for k in range(1, 60)} | {len(data) - 7}):
        cut.write_bytes(data[:size])
        assert handout.checked_print(cut, entries, numbers)[1], f"a PDF cut at byte {size} of {len(data)} passed"
