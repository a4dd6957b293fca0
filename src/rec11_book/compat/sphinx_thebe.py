"""What the build relies on in sphinx-thebe (pinned 0.3.1): what it adds to a page, to take it
away again (the book's own Live Code replaces it, ``rec11_book.extensions.livecode``)."""

from __future__ import annotations

from rec11_book.compat import lacks_text, reliance
from rec11_book.compat.sphinx import asset_attributes, asset_filename


def _probe() -> list[str]:
    return lacks_text("sphinx_thebe", 'app.add_js_file(filename="sphinx-thebe.js"', "THEBE_JS_URL",
                      'app.add_css_file("sphinx-thebe.css")', "text/x-thebe-config", "kernelName")


@reliance(probe=_probe)
def is_asset(asset) -> bool:
    """Whether a page's script or stylesheet is sphinx-thebe's.

    Relies on: sphinx-thebe adding ``_static/sphinx-thebe.js``, an inline script that sets
    ``THEBE_JS_URL``, and ``_static/sphinx-thebe.css``.
    Package: sphinx-thebe. Checked against: 0.3.1.
    Public alternative: not loading sphinx-thebe, which Jupyter Book 1 always loads (its
    default extensions; ``extra_extensions`` can only add).
    """
    filename = asset_filename(asset)
    return (filename.endswith(("sphinx-thebe.js", "sphinx-thebe.css"))
            or "THEBE_JS_URL" in str(asset_attributes(asset).get("body", "")))


@reliance(probe=_probe)
def is_page_config(text: str) -> bool:
    """Whether a raw node's text is one of the scripts sphinx-thebe appends to a page.

    Relies on: sphinx-thebe appending its settings as raw HTML nodes, a ``<script
    type="text/x-thebe-config">`` and a ``<script>kernelName ...``.
    Package: sphinx-thebe. Checked against: 0.3.1.
    Public alternative: none (see ``is_asset``).
    """
    return "text/x-thebe-config" in text or text.strip().startswith("<script>kernelName")
