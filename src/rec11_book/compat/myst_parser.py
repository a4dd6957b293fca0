"""What the build relies on in MyST-Parser (pinned 3.0.1) beyond its documented API."""

from __future__ import annotations

import re

from rec11_book.compat import lacks_text, reliance

_UNKNOWN_DIRECTIVE = re.compile(r"^Unknown directive type: '(?P<name>[^']+)'(?P<rest>.*?)(?P<tag> \[[\w.]+\])?$",
                                re.S)


@reliance(probe=lambda: lacks_text("myst_parser", "Unknown directive type: {name!r}"))
def unknown_directive(message: str) -> re.Match | None:
    """MyST's warning for a directive name it does not know, as a match with ``name``, ``rest``
    (what follows the name) and ``tag`` (`` [myst.directive_unknown]``, if shown); else None.

    Relies on: the text of MyST's warning, "Unknown directive type: 'name'".
    Package: myst-parser. Checked against: 3.0.1.
    Public alternative: none (the warning's type, ``myst.directive_unknown``, can only
    suppress it).
    """
    return _UNKNOWN_DIRECTIVE.match(message)
