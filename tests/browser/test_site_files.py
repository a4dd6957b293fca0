"""The built site serves its own pinned Thebe and MathJax, and nothing from a CDN."""

from __future__ import annotations

import json
import re

import pytest
from browser_support import ROOT

pytestmark = pytest.mark.browser

OFF_SITE_ASSET = re.compile(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(https?:)?//[^"]*"[^>]*>')


def locked(package: str) -> str:
    lock = json.loads((ROOT / "package-lock.json").read_text())
    return lock["packages"][f"node_modules/{package}"]["version"]


def test_pinned_versions_are_exact():
    manifest = json.loads((ROOT / "package.json").read_text())
    pins = {**manifest.get("dependencies", {}), **manifest.get("devDependencies", {})}
    assert pins["thebe"] == "0.9.3" and pins["mathjax"] == "3.2.2" and pins["axe-core"] == "4.14.1"
    for name, version in pins.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"package.json: {name} is not pinned exactly: {version}"
        assert locked(name) == version, f"package-lock.json disagrees with package.json on {name}"


def test_site_serves_its_own_thebe_and_mathjax(built_site):
    html, static = built_site["html"], built_site["html"] / "_static"
    assert (static / "thebe" / "index.js").is_file() and (static / "thebe" / "thebe.css").is_file()
    assert f'"thebeVersion": "{locked("thebe")}"' in (html / "book" / "index.html").read_text()
    assert f'VERSION="{locked("mathjax")}"' in (static / "mathjax" / "tex-chtml.js").read_text()


def test_no_page_loads_anything_from_another_site(built_site):
    pages = sorted(built_site["html"].rglob("*.html"))
    assert pages
    for path in pages:
        text = path.read_text()
        page = path.relative_to(built_site["html"])
        assert not OFF_SITE_ASSET.findall(text), f"{page}: {OFF_SITE_ASSET.search(text)[0][:200]}"
        for leftover in ("x-thebe-config", "THEBE_JS_URL", "sphinx-thebe.js", "unpkg.com", "cdn.jsdelivr.net"):
            assert leftover not in text, f"{page}: still has {leftover!r}"
