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
