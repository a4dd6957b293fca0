"""The site's pinned npm files (rec11_book.shared.files): a missing package fails the build by name; and the
icons the pages use (rec11_book.extensions.assets), read again only from the files that changed."""

from __future__ import annotations

import pytest
from sphinx.errors import ExtensionError

from rec11_book.shared import files


def test_a_missing_npm_package_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "PACKAGE_ROOT", tmp_path)
    monkeypatch.delenv("REC11_NODE_MODULES", raising=False)
    with pytest.raises(ExtensionError, match=r"npm package 'thebe' is missing.*npm ci"):
        files.find_package("thebe", tmp_path / "book")


def test_icons_are_read_from_the_files_that_changed_only(tmp_path, monkeypatch):
    from rec11_book.extensions import assets

    html = tmp_path / "html"  # as _build/html: what the last build read is kept beside it
    static = html / "_static"
    static.mkdir(parents=True)
    (static / "theme.css").write_text('.fa-a::before { content: "\\f001" }\n.fa-b::before { content: "\\f002" }\n'
                                      '.note::after { content: "\\f003" }\n')
    page = html / "page.html"
    page.write_text('<i class="fa-solid fa-a"></i>')
    (html / "other.html").write_text("<p>no icon</p>")
    assert assets.icon_codepoints(html) == {0xF001, 0xF003}

    read = []
    real = assets._icons_in
    monkeypatch.setattr(assets, "_icons_in", lambda path: read.append(path.name) or real(path))
    assert assets.icon_codepoints(html) == {0xF001, 0xF003} and read == [], "nothing changed: nothing read"
    page.write_text('<i class="fa-solid fa-b"></i> <i class="fa-solid fa-a"></i>')  # a size of its own
    assert assets.icon_codepoints(html) == {0xF001, 0xF002, 0xF003} and read == ["page.html"]


def test_a_cut_font_is_the_same_bytes_every_build(tmp_path):
    """fontTools stamps a saved font with the time unless told not to: the cut fonts would then
    differ from build to build, and a deploy would upload them each time."""
    import shutil

    import pydata_sphinx_theme
    from fontTools.ttLib import TTFont

    from rec11_book.extensions import assets

    webfonts = (next(iter(pydata_sphinx_theme.__path__)) + "/theme/pydata_sphinx_theme/static/vendor/fontawesome/"
                "webfonts")
    html = tmp_path / "html"
    static = html / "_static"
    shutil.copytree(webfonts, static / "vendor" / "fontawesome" / "webfonts")
    (static / "theme.css").write_text('.fa-house::before { content: "\\f015" }\n')
    (html / "page.html").write_text('<i class="fa-solid fa-house"></i>')
    cut = static / "rec11-icons" / "fa-solid-900.woff"
    first = assets.subset_icon_fonts(html) and cut.read_bytes()
    (static / "rec11-icons" / ".codepoints").unlink()  # as if the icons had changed: cut again
    source = TTFont(static / "vendor" / "fontawesome" / "webfonts" / "fa-solid-900.ttf")
    assert assets.subset_icon_fonts(html) and TTFont(cut)["head"].modified == source["head"].modified
    assert cut.read_bytes() == first
