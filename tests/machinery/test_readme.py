"""The README is the front door: short, and every command and path it names exists.

The same holds for the documents under docs/ that it links: a renamed target, module or file
fails here rather than in a new teaching assistant's first afternoon.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BUILT = ("_build/", "_static/", ".cache/", ".venv/")  # made by a build, not committed


def tracked() -> set[str]:
    """Every committed file and folder, as paths relative to the repository."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    folders = {"/".join(f.split("/")[:i]) + "/" for f in files for i in range(1, f.count("/") + 1)}
    return set(files) | folders


def named(path: str, known: set[str]) -> bool:
    """A path as docs write it: from the root, or the tail of a longer one (`build.py` in a
    paragraph about `src/rec11_book/`)."""
    path = path.rstrip("/") + ("/" if path.endswith("/") else "")
    options = {path, path + "/"} if not path.endswith("/") else {path}
    return bool(options & known) or any(k.endswith("/" + o) for k in known for o in options)


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([\w.-]+):", text, re.M))


def test_the_readme_is_a_front_door():
    words = len((ROOT / "README.md").read_text().split())
    assert words <= 650, f"README.md has {words} words; keep it about 600 and move the rest to docs/"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_make_command_named_is_a_target(doc):
    named = set(re.findall(r"\bmake ([a-z][\w-]*)", doc.read_text()))
    missing = named - make_targets()
    assert not missing, f"{doc.name} names make targets the Makefile does not have: {sorted(missing)}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_and_path_named_exists(doc):
    text = doc.read_text()
    links = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t and not t.startswith("#")]
    missing = [t for t in links if not (doc.parent / t.split("#")[0]).exists()]  # as a browser follows it
    # paths in code spans: a token with a slash or a file suffix, relative to the repository
    spans = re.findall(r"`([^`\s]+)`", text)
    paths = [s for s in spans if re.fullmatch(r"[\w.-]+(/[\w.-]*)+|[\w.-]+\.(md|yml|yaml|toml|txt|py|json)", s)]
    paths = [p for p in paths if not p.startswith(BUILT) and "NAME" not in p and "<" not in p]
    known = tracked()
    missing += [p for p in paths if not named(p, known)]
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


# Names that look like files but are products, and the README's placeholder for "a page"
NOT_FILES = {"Node.js", "reveal.js", "page.md"}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_file_named_anywhere_exists(doc):
    """Not only code spans: a file named in prose or in a fenced block (a folder map) exists too."""
    text = re.sub(r"https?://\S+", "", doc.read_text())
    names = re.findall(r"(?<![\w/.-])([\w-][\w.-]*(?:/[\w.-]+)*\.(?:md|yml|yaml|toml|txt|py|json|js|cfg))\b", text)
    known = tracked()
    missing = sorted({n for n in names if n not in NOT_FILES and not n.startswith(BUILT) and not named(n, known)})
    assert not missing, f"{doc.name} names files that do not exist: {missing}"
