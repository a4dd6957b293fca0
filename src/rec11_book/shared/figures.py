"""The book's named figures, read from the executed notebooks once, and put in ``figures/``
only by a build that passed.

Every figure a page draws needs a stable file name (``mystnb: figure: name:``) and an SVG
output (``rec11.style.setup_page()`` turns it on). At the end of the Sphinx build, before
the session plan is put back and the deck written (both skip a failed build), the
downloads extension (``rec11_book.extensions.notebooks``) reads the executed notebooks and hands them
here: a figure without a name or an SVG, or a name used twice, is a warning at the page's
line, so the build fails and writes no deck or plan from that state. Otherwise the figures
are staged in ``_build/.rec11-figures``; ``rec11_book.commands.build`` puts them in ``figures/`` once
the whole build has passed, and removes the files of figures that no longer exist.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

STAGED = ".rec11-figures"  # in _build: the figures of the last Sphinx build without a figure problem


class FigureError(ValueError):
    pass


@dataclass(frozen=True)
class Figure:
    name: str
    png: bytes
    svg: str
    page: Path  # relative to the book
    where: str  # "page:line", for a message that names the figure's cell


def _line_in_page(page: Path, source: str) -> int | None:
    text = page.read_text() if page.is_file() else ""
    at = text.find(source.strip()) if source.strip() else -1
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def figures_in(notebooks: Iterable[tuple[Path, object]], book: Path,
               seen: dict[str, str] | None = None) -> tuple[list[Figure], list[tuple]]:
    """The named figures of the executed notebooks ((page relative to the book, notebook)
    pairs), and the problems, each ``(page, line, message)``: a figure drawn without a name
    or an SVG, or a name used twice (here, or among ``seen``, {name: "page:line"}: the
    figures of pages not read again)."""
    found, problems, seen = [], [], dict(seen or {})
    for relative, nb in notebooks:
        page = book / relative
        for cell in nb.cells:
            images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
            if cell["cell_type"] != "code" or not images:
                continue
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            line = _line_in_page(page, source)
            name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name")
            data = images[-1]["data"]
            if not name:
                problems.append((relative, line, "this code cell draws a figure without a name. Fix: give the cell "
                                                 "`mystnb: figure: name:` (its file name in figures/)"))
            elif name in seen:
                problems.append((relative, line, f"figure name {name!r} is already used at {seen[name]}. "
                                                 "Fix: give one of the two cells another name"))
            elif "image/svg+xml" not in data:
                problems.append((relative, line, f"figure {name!r} has no SVG output. Fix: call "
                                                 "rec11.style.setup_page() in the page's first code cell"))
            else:
                seen[name] = f"{relative.as_posix()}:{line}"
                svg = data["image/svg+xml"]
                found.append(Figure(name, base64.b64decode(data["image/png"]),
                                    "".join(svg) if isinstance(svg, list) else svg, relative, seen[name]))
    return found, problems


def _mirror(files: dict[str, bytes], folder: Path) -> list[Path]:
    """Make ``folder``'s PNG and SVG files exactly ``files`` (name: content), writing only
    what differs, so that a rebuild that changed no figure writes nothing."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in sorted(files.items()):
        target = folder / name
        if not target.is_file() or target.read_bytes() != content:
            target.write_bytes(content)
        written.append(target)
    for old in folder.glob("*"):
        if old.name not in files and old.suffix in {".png", ".svg"}:
            old.unlink()
    return written


def stage(found: list[Figure], build: Path, keep: Iterable[str] = ()) -> dict[str, Path]:
    """Keep the figures ``found``, and those named in ``keep`` as they are staged already, in
    ``build/.rec11-figures``, in place of what a previous build kept; {file name: its path}."""
    staged = build / STAGED
    files = {f"{name}{suffix}": (staged / f"{name}{suffix}").read_bytes()
             for name in keep for suffix in (".png", ".svg")}
    for figure in found:
        files[f"{figure.name}.png"] = figure.png
        files[f"{figure.name}.svg"] = figure.svg.encode()
    return {path.name: path for path in _mirror(files, staged)}


def publish(build: Path, figures: Path) -> list[Path]:
    """Put the staged figures in ``figures`` (``NAME.png`` and ``NAME.svg``), and remove the
    PNG and SVG files there of figures that no longer exist. Returns the files it holds."""
    staged = build / STAGED
    if not staged.is_dir():
        raise FigureError(f"{staged} is missing: no build staged the figures. Fix: list "
                          "rec11_book.extensions.notebooks in _config.yml's sphinx: extra_extensions, and build again")
    return _mirror({p.name: p.read_bytes() for p in staged.iterdir()}, figures)
