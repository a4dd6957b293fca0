"""Print the table of every reliance on another package's internals, or write it.

    python -m rec11_book.compat            the markdown table
    python -m rec11_book.compat --write    put it in docs/architecture.md, between its markers
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rec11_book.compat import SRC, table, with_table

DOC = SRC.parent / "docs" / "architecture.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write the table into {DOC.name}")
    parser.add_argument("--doc", type=Path, default=DOC, help="the document that holds the table")
    args = parser.parse_args(argv)
    if not args.write:
        sys.stdout.write(table())
        return 0
    text = args.doc.read_text()
    new = with_table(text)
    if new != text:
        args.doc.write_text(new)
        print(f"rec11: wrote the table of reliances into {args.doc}")
    else:
        print(f"rec11: {args.doc}'s table of reliances is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
