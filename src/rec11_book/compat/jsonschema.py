"""What the build relies on in jsonschema (pinned 4.26.0) beyond its documented API."""

from __future__ import annotations

import sys

from rec11_book.compat import lacks_text, reliance

SLOW_IMPORTS = ("rfc3987_syntax",)


@reliance(probe=lambda: lacks_text("jsonschema", "rfc3987_syntax"))
def block_optional_imports() -> None:
    """Make ``jsonschema``'s optional ``rfc3987_syntax`` import fail, as if it were not installed
    (it builds 39 Lark grammars at import, about 2 s, for format checks Jupyter Book does not
    run). Call it before anything imports ``jsonschema``.

    Relies on: ``jsonschema`` importing ``rfc3987_syntax`` only to check the ``iri`` formats,
    and carrying on without it when the import fails.
    Package: jsonschema. Checked against: 4.26.0.
    Public alternative: uninstalling ``rfc3987-syntax``, which another package of the
    environment requires (``jsonschema[format-nongpl]``).
    """
    for name in SLOW_IMPORTS:
        sys.modules.setdefault(name, None)  # `import name` now raises ImportError
