"""How small the text of each figure shows on a phone.

    python -m rec11_tools.figtext [FIGURES_DIR]     # default: figures/

A page shows a figure's PNG at its own pixel width, or shrunk to the text column,
whichever is narrower. On a 390 px phone the column is about 342 CSS px wide
(``COLUMN_PX``). The SVG export of the same figure keeps every piece of text as
text with its font size (``svg.fonttype: none`` in ``rec11.style``), so the size at
which a label is shown is its font size times the shown width over the SVG's width.
No text may show smaller than ``MIN_PX``. Standard library only.
"""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

COLUMN_PX = 342.0  # a figure's width in sphinx-book-theme's column at a 390 px viewport
MIN_PX = 9.0  # the smallest text a figure may show there

_SVG_WIDTH = re.compile(r"<svg\b[^>]*?\bviewBox=\"[\d.\-]+ [\d.\-]+ ([\d.]+) [\d.]+\"")
_TEXT_ELEMENT = re.compile(r"<(text|tspan)\b([^>]*)>([^<]*)")
_FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px|font:\s*(?:[a-z-]+\s+)*([\d.]+)px")


def png_width(data: bytes) -> int:
    """The pixel width of a PNG, from its header."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    return struct.unpack(">I", data[16:20])[0]


def text_sizes(svg: str) -> list[tuple[float, str]]:
    """(font size in SVG units, text) for every text element that sets a size.

    A ``<text>`` element whose size is set on its ``<tspan>`` children (matplotlib's
    mathtext) is represented by the children.
    """
    sizes = []
    for _, attributes, content in _TEXT_ELEMENT.findall(svg):
        match = _FONT_SIZE.search(attributes)
        if match:
            sizes.append((float(match[1] or match[2]), content.strip()))
    return sizes


def smallest_text(svg: str, png_px: int, column_px: float = COLUMN_PX) -> tuple[float, str]:
    """(CSS px, text) of the smallest text of a figure shown in a column ``column_px`` wide."""
    width = _SVG_WIDTH.search(svg)
    if not width:
        raise ValueError("the SVG has no viewBox")
    sizes = text_sizes(svg)
    if not sizes:
        return float("inf"), ""
    shown = min(column_px, png_px) / float(width[1])
    size, text = min(sizes)
    return size * shown, text


def measure(folder: Path, column_px: float = COLUMN_PX) -> dict[str, tuple[float, str]]:
    """The smallest shown text of every figure exported to ``folder`` (NAME.svg + NAME.png)."""
    found = {}
    for svg in sorted(folder.glob("*.svg")):
        png = svg.with_suffix(".png")
        if png.is_file():
            found[svg.stem] = smallest_text(svg.read_text(), png_width(png.read_bytes()), column_px)
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else Path("figures")
    sizes = measure(folder)
    if not sizes:
        print(f"no figures (NAME.svg with NAME.png) in {folder}", file=sys.stderr)
        return 1
    for name, (px, text) in sizes.items():
        flag = "  TOO SMALL" if px < MIN_PX else ""
        print(f"{px:5.1f} px  {name}  (smallest: {text[:30]!r}){flag}")
    small = [n for n, (px, _) in sizes.items() if px < MIN_PX]
    print(f"{len(small)} of {len(sizes)} figures show text below {MIN_PX:g} px at a {COLUMN_PX:g} px column")
    return 1 if small else 0


if __name__ == "__main__":
    sys.exit(main())
