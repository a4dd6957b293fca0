"""The site's pinned npm files (rec11_book.shared.files): a missing package fails the build by name."""

from __future__ import annotations

import pytest
from sphinx.errors import ExtensionError

from rec11_book.shared import files


def test_a_missing_npm_package_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "PACKAGE_ROOT", tmp_path)
    monkeypatch.delenv("REC11_NODE_MODULES", raising=False)
    with pytest.raises(ExtensionError, match=r"npm package 'thebe' is missing.*npm ci"):
        files.find_package("thebe", tmp_path / "book")
