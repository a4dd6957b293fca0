"""What the build relies on in pydata-sphinx-theme (pinned 0.17.1, under sphinx-book-theme):
its page markup and the files it serves. The theme documents its options (``html_context``'s
``default_mode`` among them, which ``rec11_book.extensions.trim`` sets), not these."""

from __future__ import annotations

import re
from pathlib import Path

from rec11_book.compat import lacks_text, reliance

PACKAGE = "pydata_sphinx_theme"


def _theme_file(*parts: str) -> list[str]:
    import importlib.util

    root = Path(importlib.util.find_spec(PACKAGE).origin).parent / "theme" / PACKAGE
    return [] if root.joinpath(*parts).is_file() else [f"{PACKAGE}: theme/{PACKAGE}/{'/'.join(parts)}"]


@reliance(probe=lambda: lacks_text(PACKAGE, 'class="bd-article"', suffixes=(".html",)))
def article(soup):
    """A built page's text: its ``<article>`` without the header, sidebars and footer (None if
    the HTML is not a page of the site). ``soup`` is the page's BeautifulSoup.

    Relies on: the theme writing the page's text in ``article.bd-article``.
    Package: pydata-sphinx-theme. Checked against: 0.17.1.
    Public alternative: none (the ``main`` element also holds the page's navigation).
    """
    return soup.select_one("article.bd-article")


def _probe_page_tags() -> list[str]:
    return (lacks_text(PACKAGE, "<!-- So that users can add custom icons -->",
                       "<script defer src=\"{{ pathto('_static/scripts/fontawesome.js', 1) }}",
                       "<link href=\"{{ pathto('_static/styles/theme.css', 1) }}",
                       "<script src=\"{{ pathto('_static/searchtools.js', 1) | e }}\"></script>",
                       suffixes=(".html",))
            + _theme_file("static", "styles", "theme.css"))


_PAGE_TAGS = [
    (re.compile(r'[ \t]*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|searchindex\.js)">'
                r"</script>\n?"), ""),
    (re.compile(r'[ \t]*<!-- So that users can add custom icons -->\n?[ \t]*<script defer src="[^"]*'
                r'_static/scripts/fontawesome\.js[^"]*"></script>\n?'), ""),
    (re.compile(r'<link href="([^"]*_static/)styles/theme\.css[^"]*" rel="stylesheet" />'),
     r'<link href="\1basic.css" rel="stylesheet" />'),
]


@reliance(probe=_probe_page_tags)
def trimmed_page_tags() -> list[tuple[re.Pattern, str]]:
    """(pattern, replacement) for the tags the theme's templates write on every page that the
    site does without: Sphinx's search scripts (search-as-you-type, which the book does not
    turn on; ``search.html`` loads its own), the ``fontawesome.js`` tag (``empty_icon_script``),
    and the theme's ``theme.css``, which only ``@import``\\ s ``basic.css``.

    Relies on: the exact tags of the theme's ``layout.html`` and ``webpack-macros.html``: the
    three search ``<script>`` tags, ``<!-- So that users can add custom icons -->`` then a
    deferred ``_static/scripts/fontawesome.js``, and the link to its ``theme.css`` stylesheet.
    Package: pydata-sphinx-theme. Checked against: 0.17.1.
    Public alternative: none (these tags are not in ``script_files``/``css_files``, so
    ``html-page-context`` cannot drop them; overriding the theme's templates would copy them).
    """
    return list(_PAGE_TAGS)


def _probe_colour_mode() -> list[str]:
    return (lacks_text(PACKAGE, 'document.documentElement.dataset.mode = localStorage.getItem("mode") || '
                                '"{{ default_mode }}";', suffixes=(".html",))
            + lacks_text(PACKAGE, 'window.matchMedia("(prefers-color-scheme: dark)")',
                         'var theme = mode == "auto" ? colorScheme : mode;',
                         "document.documentElement.dataset.theme = theme;",
                         "setTheme(document.documentElement.dataset.mode);", suffixes=(".js",)))


# Run in <head>, before any of the page is styled: the theme the deferred script will pick.
_SETTLE_THEME = """(function (root) {
  var mode = root.dataset.mode;
  var system = window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  root.dataset.theme = mode === "light" || mode === "dark" ? mode : system;
})(document.documentElement);"""


@reliance(probe=_probe_colour_mode)
def settle_theme_script() -> str:
    """An inline script for ``<head>`` that sets ``<html data-theme>`` to the theme the theme's
    deferred script will set at load. On a first visit the theme's ``<head>`` script writes
    ``data-theme="auto"``, which no stylesheet rule matches, and the deferred script changes
    it to ``light`` or ``dark`` after the whole page has been styled once: the browser then
    styles every element again (on ``book/exercises``, 4,485 elements, 0.6 to 0.8 s of
    Lighthouse's simulated phone). Set while ``<head>`` is read, the value is already right,
    and the deferred script writes the same value again, which restyles nothing.

    Relies on: the theme's colour modes: ``layout.html`` writing the stored mode (or
    ``default_mode``) to ``<html data-mode>`` in ``<head>``, and ``setTheme`` in its deferred
    script setting ``data-theme`` to that mode when it is ``light`` or ``dark`` and to the
    system's scheme (``prefers-color-scheme: dark``) otherwise.
    Package: pydata-sphinx-theme. Checked against: 0.17.1.
    Public alternative: ``default_mode: light`` in ``html_context`` (the page would then
    ignore a phone's dark mode until the reader picks one).
    """
    return _SETTLE_THEME


@reliance(probe=lambda: _theme_file("static", "scripts", "fontawesome.js"))
def empty_icon_script(static: Path, stub: str) -> None:
    """Replace the theme's ``fontawesome.js`` in the built site's ``_static`` with ``stub`` (and
    drop its source map): it only redraws the ``<i class="fa-...">`` icons as inline SVG (540 kB
    gzipped on every page), which the theme's CSS already draws from its webfonts.

    Relies on: the theme serving Font Awesome's script as ``_static/scripts/fontawesome.js``,
    with its source map beside it.
    Package: pydata-sphinx-theme. Checked against: 0.17.1.
    Public alternative: none (no theme option leaves the script out).
    """
    script = Path(static) / "scripts" / "fontawesome.js"
    if script.is_file():
        script.write_text(stub)
        script.with_name(script.name + ".map").unlink(missing_ok=True)


_ICON_FONTS = {  # the theme's font file (its TrueType copy; reading woff2 needs brotli)
    "fa-solid-900": ("Font Awesome 6 Free", 900),
    "fa-regular-400": ("Font Awesome 6 Free", 400),
    "fa-brands-400": ("Font Awesome 6 Brands", 400),
}


def _probe_fonts() -> list[str]:
    missing = [m for name in _ICON_FONTS for m in _theme_file("static", "vendor", "fontawesome", "webfonts",
                                                                f"{name}.ttf")]
    return missing + lacks_text(PACKAGE, "font-family:Font Awesome\\ 6 Free",
                                "font-family:Font Awesome\\ 6 Brands", suffixes=(".css",))


@reliance(probe=_probe_fonts)
def icon_fonts(static: Path) -> list[tuple[str, Path, str, int]]:
    """(name, TrueType file, font family, weight) of each Font Awesome webfont the theme serves
    in the built site's ``_static``.

    Relies on: the theme serving Font Awesome 6's webfonts, with their TrueType copies, in
    ``_static/vendor/fontawesome/webfonts`` (``fa-solid-900``, ``fa-regular-400``,
    ``fa-brands-400``) under the families "Font Awesome 6 Free" and "Font Awesome 6 Brands".
    Package: pydata-sphinx-theme. Checked against: 0.17.1.
    Public alternative: none.
    """
    webfonts = Path(static) / "vendor" / "fontawesome" / "webfonts"
    return [(name, webfonts / f"{name}.ttf", family, weight) for name, (family, weight) in _ICON_FONTS.items()]
