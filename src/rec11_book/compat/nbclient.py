"""What the build relies on in nbclient (pinned 0.11.0): the text it prints for a failing cell."""

from __future__ import annotations

import re

from rec11_book.compat import lacks_text, reliance

_CELL_SOURCE = re.compile(r"executing the following cell:\s*$")
_FAILED_CELL = re.compile(
    r"^(?P<path>\S+?\.md): WARNING: Executing notebook failed.*?"
    r"executing the following cell:\n-{18}\n(?P<source>.*?)\n-{18}\n(?P<trace>.*?)(?=^\S+Error: /|\Z)",
    re.M | re.S,
)


def _probe() -> list[str]:
    return lacks_text("nbclient", "An error occurred while executing the following cell:",
                      "------------------") + lacks_text("myst_nb", "Executing notebook failed")


@reliance(probe=_probe)
def cell_source_header(line: str, plain: str) -> str | None:
    """The line that starts a failing cell's own report, as the build prints it (nbclient's
    exception name dropped), or None if ``plain`` (``line`` without colours) is not that line.

    Relies on: nbclient's ``CellExecutionError`` text, "An error occurred while executing the
    following cell:", printed after nbclient's own frames, on a line that starts with the
    exception's dotted name (``nbclient.exceptions.CellExecutionError: ...``).
    Package: nbclient. Checked against: 0.11.0.
    Public alternative: none that is not text: the execution reports myst-nb writes
    (``_build/html/reports``) hold the same text.
    """
    if not _CELL_SOURCE.search(plain):
        return None
    return plain.split(": ", 1)[-1] if plain.startswith("nbclient.") else line


@reliance(probe=_probe)
def failed_cells(log: str) -> list[tuple[str, str, str]]:
    """(page path, the cell's source, its traceback) for each cell that raised, from a build's
    printed log (ANSI colours already removed).

    Relies on: myst-nb's warning "<page>.md: WARNING: Executing notebook failed", followed by
    nbclient's ``CellExecutionError`` text: "executing the following cell:", the cell's source
    between two lines of 18 dashes, then the traceback.
    Package: nbclient. Checked against: 0.11.0.
    Public alternative: none that is not text (see ``cell_source_header``).
    """
    return [(m["path"], m["source"], m["trace"]) for m in _FAILED_CELL.finditer(log)]
