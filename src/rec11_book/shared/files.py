"""Where the build's files are: its own ``static/`` folder, and the pinned npm packages.

Shared by the extensions that serve them (``assets``), load them in a page
(``livecode``: Thebe; ``mathsvg``: MathJax) or copy them into the deck (``slides``:
reveal.js). The npm packages are looked for in ``$REC11_NODE_MODULES``, then in a
``node_modules`` beside the book or above it, then in this checkout's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sphinx.errors import ExtensionError

STATIC = Path(__file__).parents[1] / "static"
# npm package -> (folder inside it to copy, a file that must exist there, folder in _static)
PACKAGES = {
    "thebe": ("lib", "index.js", "thebe"),
    "mathjax": ("es5", "tex-chtml.js", "mathjax"),
}
PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the checkout, for an editable install


def node_modules_candidates(srcdir: Path) -> list[Path]:
    found = []
    if os.environ.get("REC11_NODE_MODULES"):
        found.append(Path(os.environ["REC11_NODE_MODULES"]))
    found += [folder / "node_modules" for folder in (srcdir, *srcdir.parents)]
    found.append(PACKAGE_ROOT / "node_modules")
    return list(dict.fromkeys(p.resolve() for p in found))


def find_package(name: str, srcdir: Path) -> Path:
    """The folder of an npm package's files to copy, or a build error naming the package."""
    folder, marker, _ = PACKAGES[name]
    candidates = node_modules_candidates(srcdir)
    for modules in candidates:
        if (modules / name / folder / marker).is_file():
            return modules / name / folder
    looked = ", ".join(str(c) for c in candidates)
    raise ExtensionError(
        f"rec11_book.shared.files: the npm package {name!r} is missing ({name}/{folder}/{marker} not found "
        f"in any of: {looked}). Run `npm ci` in the repository root (`make build` does it); the exact "
        "version is pinned in package.json and package-lock.json."
    )


def package_version(name: str, srcdir: Path) -> str:
    meta = find_package(name, srcdir).parent / "package.json"
    return json.loads(meta.read_text())["version"]


def skip_dev_files(folder: str, names: list[str]) -> set[str]:
    # source maps and type declarations are for developers, not for readers
    return {n for n in names if n.endswith(".map") or n == "types"}
