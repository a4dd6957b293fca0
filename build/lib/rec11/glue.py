"""``glue`` for the pages' code, wherever it runs.

The book's build pastes numbers a cell computes into the page's text with myst-nb's
``glue``. A notebook a student downloads runs without myst-nb (its install cell leaves
the build's tools out), so there ``glue`` shows what it would show on the page and
records nothing: the numbers are already in the notebook's text.
"""

from __future__ import annotations

try:
    from myst_nb import glue
except ImportError:  # a student's own Python: nothing reads the records

    def glue(name: str, variable, display: bool = True) -> None:
        """Show ``variable`` if ``display``, as myst-nb's ``glue`` would; record nothing."""
        if display:
            from IPython.display import display as show

            show(variable)

__all__ = ["glue"]
