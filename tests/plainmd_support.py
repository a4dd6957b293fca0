"""The conversion context the plain-Markdown tests share (tests/machinery/test_plainmd.py on text
each test writes, tests/unit/test_pages_convert.py on this book's pages)."""

from rec11_book.shared.plainmd import Context

SITE = "https://example.github.io/book/"


def context(**kw):
    """A ``Context`` for one page, and the list its warnings go to."""
    problems = []
    base = dict(docname="book/page", site=SITE, labels={"sec-kl": ("book/details", "sec-kl")},
                facts={"final_date": "Tue 12/1"}, handout="handout.pdf",
                warn=lambda line, message: problems.append((line, message)))
    base.update(kw)
    return Context(**base), problems
