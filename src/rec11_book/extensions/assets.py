"""Site assets: the files the site serves beside its pages, and keeping them light.

* **The book's own static files** (``static/``: CSS for instructor notes, print and
  the theme's accessibility fixes; the slide scripts; Live Code's modules in
  ``static/livecode/``) are served from ``_static``. Sphinx copies static files only
  when it writes a page, and each page links them with a checksum of their content
  (``?v=``, so that browsers fetch a new version): when they, or the build's Python
  code, change, every page is re-read and written again (from the execution cache;
  nothing re-runs).
* **Pinned npm files, served by the site.** Thebe (``lib/``) and MathJax (``es5/``)
  are copied from ``node_modules`` (exact versions in ``package.json`` and
  ``package-lock.json``) into ``_static/thebe`` and ``_static/mathjax``, once per
  version. A missing package fails the build with a message that names it. Set
  ``REC11_NODE_MODULES`` to use a ``node_modules`` folder elsewhere.
* **Light pages.** The theme's ``fontawesome.js`` (540 kB gzipped on every page) is
  emptied: the theme's CSS draws the same icons from its webfonts. Those fonts
  (275 kB) are cut down to the icons the site uses (``rec11-icons.css``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util import logging

from rec11_book.compat.theme import empty_icon_script, icon_fonts
from rec11_book.shared.files import PACKAGES, STATIC, find_package, package_version, skip_dev_files
from rec11_book.shared.pages import digest

logger = logging.getLogger(__name__)

# --- the book's static files ------------------------------------------------------------


def add_static(app: Sphinx, config) -> None:
    config.html_static_path.append(str(STATIC))


BUILD_CODE = STATIC.parent  # rec11_book: the extensions, what they share, and their static files


def build_code_changed(app, env, added, changed, removed) -> list[str]:
    """Every page, when the book's build code changed (its extensions, its CSS or JS, or what
    they import from ``rec11_book``). Sphinx reads again only the pages whose own files
    changed, but every page's HTML comes from this code too (its links to the static files
    carry their checksums); without this, ``make build`` after an edit to an extension
    would keep the old pages. They are read again from the execution cache: nothing runs."""
    files = [f for f in sorted(BUILD_CODE.rglob("*")) if f.is_file() and "__pycache__" not in f.parts]
    code = digest(*(part for f in files for part in (f.relative_to(BUILD_CODE).as_posix(), f.read_bytes())))
    if getattr(env, "rec11_build_code", None) == code:
        return []
    env.rec11_build_code = code
    return sorted(env.found_docs)


# --- the npm files ---------------------------------------------------------------------


def check_packages(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    app.rec11_npm = {name: find_package(name, Path(app.srcdir)) for name in PACKAGES}
    mathjax = app.config.mathjax_path or ""
    if mathjax and "://" not in mathjax and not mathjax.startswith("/"):
        rel = Path(mathjax)
        if rel.parts[0] == PACKAGES["mathjax"][2] and not (app.rec11_npm["mathjax"].joinpath(*rel.parts[1:])).is_file():
            raise ConfigError(f"mathjax_path {mathjax!r}: no such file in the mathjax npm package")


FONTAWESOME_STUB = """\
/* Emptied by rec11_book.extensions.assets to keep pages light (1.5 MB, 540 kB gzipped, on every
   page). pydata-sphinx-theme's fontawesome.js only redraws the <i class="fa-..."> icons
   as inline SVG; the theme's CSS already draws the same icons from the Font Awesome
   webfonts (cut down to the icons in use: rec11-icons.css). */
"""


# The theme's Font Awesome webfonts (``icon_fonts``) hold some 2,000 icons (275 kB on every
# page); the site shows a few dozen. Each is cut down to the icons the built pages, scripts
# and styles use, and declared again after the theme's CSS, so the small copy is the one
# browsers download (the last @font-face with the same descriptors wins).
ICONS_CSS = "rec11-icons.css"
_FA_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+::?before\s*,?\s*)+)'
                      r'\{\s*content\s*:\s*"(\\[0-9a-fA-F]{4}|[\ue000-\uf8ff])"\s*\}')
_GLYPH = re.compile(r"\\([ef][0-9a-fA-F]{3})(?![0-9a-fA-F])|([\ue000-\uf8ff])")
_FA_CLASS = re.compile(r"\bfa-([a-z0-9-]+)")


def _codepoint(text: str) -> int:
    return int(text[1:], 16) if text.startswith("\\") else ord(text)


def _icons_in(path: Path) -> dict:
    """What one file says about icons: a stylesheet, the codepoint of each class and the
    codepoints it uses itself; a page or a script, the class names it uses."""
    text = path.read_text(errors="ignore")
    if path.suffix != ".css":
        return {"names": sorted(set(_FA_CLASS.findall(text)))}
    classes = {}
    for selectors, glyph in _FA_RULE.findall(text):
        for name in re.findall(r"\.fa-([a-z0-9-]+)", selectors):
            classes.setdefault(name, []).append(_codepoint(glyph))
    glyphs = _GLYPH.findall(_FA_RULE.sub("", text))
    used = {int(escaped, 16) if escaped else ord(literal) for escaped, literal in glyphs}
    return {"classes": classes, "used": sorted(used)}


ICONS_SEEN = ".rec11-icons-seen.json"  # beside the site, not in it: each file's icons, by its size and time


def icon_codepoints(html_root: Path) -> set[int]:
    """Every icon-font codepoint the site can show: by class name in pages and scripts, or in CSS.
    A file is read again only if its size or modification time changed since the last build."""
    static = html_root / "_static"
    ours = {static / PACKAGES[name][2] for name in PACKAGES}

    def files(pattern):
        return [f for f in static.rglob(pattern) if not any(d in f.parents for d in ours)]

    seen_file = html_root.parent / ICONS_SEEN
    try:
        seen = json.loads(seen_file.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        seen = {}
    now = {}
    for path in sorted({*files("*.css"), *html_root.rglob("*.html"), *files("*.js")}):
        st, key = path.stat(), path.relative_to(html_root).as_posix()
        stamp = [st.st_size, st.st_mtime_ns]
        earlier = seen.get(key)
        now[key] = earlier if earlier and earlier["stamp"] == stamp else {"stamp": stamp, **_icons_in(path)}
    seen_file.write_text(json.dumps(now, sort_keys=True))
    classes, used, names = {}, set(), set()
    for found in now.values():
        for name, codepoints in found.get("classes", {}).items():  # a class two stylesheets draw: both glyphs
            classes.setdefault(name, set()).update(codepoints)
        used.update(found.get("used", []))
        names.update(found.get("names", []))
    return used.union(*(classes[n] for n in names if n in classes))


def subset_icon_fonts(html_root: Path) -> list[str]:
    """Write the cut-down fonts and their @font-face rules; return what was written."""
    static = html_root / "_static"
    fonts = icon_fonts(static)
    codepoints = icon_codepoints(html_root) if any(source.parent.is_dir() for _, source, _, _ in fonts) else set()
    # The same icons as the last build: its fonts stand (a prose edit rebuilds no font).
    stamp = static / "rec11-icons" / ".codepoints"
    key = ",".join(f"{c:x}" for c in sorted(codepoints))
    if codepoints and stamp.is_file() and stamp.read_text() == key and (static / ICONS_CSS).is_file():
        return []
    from fontTools import subset  # only when a font is cut: the import alone takes a tenth of a second
    from fontTools.ttLib import TTFont

    rules, written = [], []
    for name, source, family, weight in fonts:
        if not codepoints or not source.is_file():
            continue
        font = TTFont(source, recalcTimestamp=False)  # the theme's font's date: the same bytes every build
        options = subset.Options()
        options.flavor = "woff"
        options.notdef_outline = True
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codepoints)
        subsetter.subset(font)
        target = static / "rec11-icons" / f"{name}.woff"
        target.parent.mkdir(exist_ok=True)
        font.flavor = "woff"
        font.save(target)
        rules.append(f'@font-face {{ font-family: "{family}"; font-style: normal; font-weight: {weight}; '
                     f'font-display: block; src: url("rec11-icons/{name}.woff") format("woff"); }}')
        written.append(f"{name} ({target.stat().st_size // 1000} kB)")
    header = ("/* Written by rec11_book.extensions.assets: the theme's icon fonts, cut down to the icons"
              " this site uses. */\n")
    (static / ICONS_CSS).write_text(header + "\n".join(rules) + "\n")
    if written:
        stamp.write_text(key)
    return written


def copy_packages(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for name, source in app.rec11_npm.items():
        target = static / PACKAGES[name][2]
        # Copied once per version: a rebuild after a prose edit skips the 500 files again.
        stamp = target / ".rec11-npm"
        copied = f"{name} {package_version(name, Path(app.srcdir))} {source}"
        if stamp.is_file() and stamp.read_text() == copied:
            continue
        shutil.copytree(source, target, ignore=skip_dev_files, dirs_exist_ok=True)
        stamp.write_text(copied)
    logger.info("rec11: copied %s into _static", ", ".join(f"{n} ({p})" for n, p in app.rec11_npm.items()))
    empty_icon_script(static, FONTAWESOME_STUB)
    fonts = subset_icon_fonts(Path(app.outdir))
    if fonts:
        logger.info("rec11: icon fonts cut down to the icons in use: %s", ", ".join(fonts))


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", add_static)
    app.connect("env-get-outdated", build_code_changed)
    app.connect("builder-inited", check_packages)
    app.connect("build-finished", copy_packages)
    app.add_css_file("rec11.css")
    app.add_css_file(ICONS_CSS, priority=900)  # after the theme's CSS: its @font-face rules win
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
