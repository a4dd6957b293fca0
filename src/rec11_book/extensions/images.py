"""Figures as light as they can be without looking worse, and sized so nothing reflows.

* **Sizes in the HTML.** Every ``<img>`` of a page gets ``width`` and ``height`` (its
  pixel size; ``rec11.css`` keeps the aspect ratio when the theme scales it down), so
  the browser reserves its box before the file arrives: no layout shift.
* **Lazy below the fold.** The page's first figure loads at once (it may be the largest
  thing in the first screen); every later one has ``loading="lazy"``, so a phone
  fetches figures as the reader scrolls to them. All are ``decoding="async"``.
* **Smaller PNG files.** After the build, each PNG in ``_images`` is recompressed
  losslessly (Pillow, ``optimize=True``; an opaque RGBA image loses its constant alpha
  channel). A palette is used only where it cannot be seen: the quantized image must
  match the original in every pixel within ``PALETTE_MAX_DIFF`` levels (of 255) in each
  channel, the measure against which the figures were compared side by side by eye. The
  fewest colours that meet it win (``PALETTE_SIZES``): a plot of a few colours needs 16 to
  48, not 256, and its file is a fifth smaller. Otherwise the lossless file is kept.
  Results are kept in ``_build/.rec11-png``, keyed by the original file's hash, so a
  rebuild redoes nothing.

The SVG copies exported to ``figures/`` are not touched (``rec11_book.commands.build``).
"""

from __future__ import annotations

import hashlib
import io
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

# Largest difference, per channel and pixel, a palette may make (levels of 255). The
# figures with the largest differences (15 and 14: a light grey grid line under a dense
# line plot, digits scattered over a grid) were compared with their originals side by
# side, whole and at 4x around the worst pixel: no change was visible at 1x, and only a
# faint warm tint of a grid line at 4x. A figure that needs more (a smooth colour map,
# a photograph) stays lossless.
PALETTE_MAX_DIFF = 16
# Palettes tried, smallest first. The book's 66 figures, at the smallest size that meets the
# bound, against 256 colours each: 770 against 972 kB. The worst of them at 1x (16 colours on
# a grid of grey digits, 33 % of pixels moved, by 1.3 levels on average) looked the same.
PALETTE_SIZES = (16, 24, 32, 48, 64, 96, 128, 192, 256)
CACHE_VERSION = "2"
_IMG = re.compile(r"<img\b[^>]*>")
_SRC = re.compile(r'\bsrc="([^"]+)"')


# --- the files ------------------------------------------------------------------------------


def _encode(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def optimise_png(data: bytes, max_diff: int = PALETTE_MAX_DIFF) -> tuple[bytes, str]:
    """The smallest acceptable PNG for ``data`` and how it was made ('palette', 'lossless', 'original')."""
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    image.load()
    if image.mode == "RGBA" and image.getchannel("A").getextrema() == (255, 255):
        image = image.convert("RGB")  # opaque: the alpha channel carries nothing
    elif image.mode not in {"RGB", "RGBA", "L", "LA", "P"}:
        image = image.convert("RGBA")
    best, how = data, "original"
    lossless = _encode(image)
    if len(lossless) < len(best):
        best, how = lossless, "lossless"
    if image.mode in {"RGB", "RGBA"}:
        palette = _fewest_colours(image, max_diff)
        if palette is not None:
            small = _encode(palette)
            if len(small) < len(best):
                best, how = small, "palette"
    return best, how


def _fewest_colours(image, max_diff: int):
    """``image`` quantized to the fewest colours of ``PALETTE_SIZES`` that move no pixel's
    channel more than ``max_diff`` levels, or None if 256 do not suffice."""
    from PIL import Image, ImageChops

    # MAXCOVERAGE keeps the small differences (anti-aliased edges, colour maps) smaller than
    # MEDIANCUT on these figures, at every size; MEDIANCUT is the last try, at 256 colours.
    # FASTOCTREE is the only one that keeps alpha.
    if image.mode == "RGBA":
        tries = [(n, Image.Quantize.FASTOCTREE) for n in PALETTE_SIZES]
    else:
        tries = [(n, Image.Quantize.MAXCOVERAGE) for n in PALETTE_SIZES] + [(256, Image.Quantize.MEDIANCUT)]
    for colours, method in tries:
        palette = image.quantize(colors=colours, method=method, dither=Image.Dither.NONE)
        worst = max(high for _, high in ImageChops.difference(image, palette.convert(image.mode)).getextrema())
        if worst <= max_diff:
            return palette
    return None


def optimise_folder(images: Path, cache: Path, jobs: int = 2) -> dict[str, int]:
    """Optimise every PNG in ``images`` in place; return counts and bytes before/after. The
    figures not optimised before are done ``jobs`` at a time (Pillow's quantizing and
    compressing let other threads run)."""
    cache.mkdir(parents=True, exist_ok=True)
    stats = {"files": 0, "palette": 0, "lossless": 0, "original": 0, "before": 0, "after": 0}
    todo = []  # (the file, its bytes, their hash) of each PNG not optimised yet
    for png in sorted(images.glob("*.png")):
        data = png.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if not (cache / f"{digest}.done").exists():  # a .done file: this is an optimised result already
            todo.append((png, data, digest))
    new = {digest: data for _, data, digest in todo if not (cache / f"{digest}.png").exists()}
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for digest, (out, how) in zip(new, pool.map(optimise_png, new.values())):
            (cache / f"{digest}.png").write_bytes(out)
            (cache / f"{digest}.how").write_text(how)
    for png, data, digest in todo:
        out, how = (cache / f"{digest}.png").read_bytes(), (cache / f"{digest}.how").read_text()
        png.write_bytes(out)
        (cache / f"{hashlib.sha256(out).hexdigest()}.done").touch()
        stats["files"] += 1
        stats[how] += 1
        stats["before"] += len(data)
        stats["after"] += len(out)
    return stats


def optimise_site(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    images = Path(app.outdir) / app.builder.imagedir
    if not images.is_dir():
        return
    stats = optimise_folder(images, Path(app.outdir).parent / f".rec11-png-v{CACHE_VERSION}")
    if stats["files"]:
        logger.info(f"rec11: {stats['files']} PNG file(s) optimised, {stats['before'] // 1000} -> "
                    f"{stats['after'] // 1000} kB ({stats['palette']} with a palette, "
                    f"{stats['lossless']} lossless, {stats['original']} unchanged)")


# --- the pages ------------------------------------------------------------------------------


def _image_size(app: Sphinx, uri: str) -> tuple[int, int] | None:
    """Pixel size of an image a page shows, from the file the builder will copy."""
    from PIL import Image

    name = uri.rsplit("/", 1)[-1]
    sources = getattr(app, "rec11_image_sources", None)
    if sources is None or name not in sources:
        sources = app.rec11_image_sources = {dest: src for src, dest in app.builder.images.items()}
    src = sources.get(name)
    if src is None:
        return None
    try:
        with Image.open(Path(app.srcdir) / src) as image:
            return image.size
    except OSError:
        return None


def add_attributes(html: str, size_of) -> str:
    """``width``/``height`` on every ``<img>``, ``loading="lazy"`` on all but the first."""
    count = 0

    def fix(match):
        nonlocal count
        tag = match.group(0)
        src = _SRC.search(tag)
        if src is None:
            return tag
        count += 1
        extra = []
        size = size_of(src.group(1))
        if size and " width=" not in tag and " height=" not in tag:
            extra.append(f'width="{size[0]}" height="{size[1]}"')
        if " loading=" not in tag:
            extra.append('loading="lazy"' if count > 1 else 'loading="eager"')
        if " decoding=" not in tag:
            extra.append('decoding="async"')
        if not extra:
            return tag
        end = -2 if tag.endswith("/>") else -1
        return tag[:end].rstrip() + " " + " ".join(extra) + (" />" if end == -2 else ">")

    return _IMG.sub(fix, html)


def size_images(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if doctree is None or "body" not in context:
        return
    context["body"] = add_attributes(context["body"], lambda uri: _image_size(app, uri))


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", size_images)
    app.connect("build-finished", optimise_site, priority=400)  # before the slides and handout read _images
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
