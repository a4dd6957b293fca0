"""What the build relies on in Jupyter Book (pinned 1.0.4.post1) beyond its documented API."""

from __future__ import annotations

from rec11_book.compat import lacks_text, reliance


@reliance(probe=lambda: lacks_text("jupyter_book", "Look above for the cause."))
def reraised(err: BaseException) -> bool:
    """Whether ``err`` is Jupyter Book's wrapper around an exception the build has already
    reported (so the command line need not print the chain again).

    Relies on: ``jupyter_book.cli.main.builder_specific_actions`` re-raising the build's
    exception, which Sphinx has printed, as a ``RuntimeError`` "There was an error in building
    your book. Look above for the cause." chained from it.
    Package: jupyter-book. Checked against: 1.0.4.post1.
    Public alternative: none (Jupyter Book's command line prints the chain itself).
    """
    return isinstance(err, RuntimeError) and err.__cause__ is not None and "Look above for the cause" in str(err)
