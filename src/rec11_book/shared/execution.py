"""A page's way to its run, in one place: page -> notebook -> run -> cache record.

The build (``rec11_book.commands.preexecute``, the pages run side by side before Sphinx), the
extensions that read the cache afterwards (the downloads, which pages ran), the benchmarks and
the robustness tools all read a page, find the cache and read the settings here, so that each
reads them as myst-nb does:

* :func:`book_config`, :func:`parser_config`: ``_config.yml``, and the MyST settings
  (``parse:``) the pages are read with;
* :func:`page_notebook`: the notebook myst-nb builds from a page, with its fingerprint in the
  kernelspec (:func:`stamp`, :func:`with_fingerprint`: what the page's code depends on, so that
  the cache misses when it changes) or, for the tools, without it;
* :func:`cache_path`, :func:`timeout`: ``execute: cache:`` (default ``_build/.jupyter_cache``)
  and ``execute: timeout:``;
* :func:`kernel_sockets`: the kernel settings every page run here starts its kernel with;
* why a page runs: ``rec11_book.shared.why``, whose record lies beside the cache.

Imports no torch (each page's kernel imports what the page imports).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from rec11 import seeds, sources
from rec11.sources import code_hash
from rec11_book.compat.jupyter_cache import keyed_metadata
from rec11_book.compat.myst_nb import default_cache_folder
from rec11_book.compat.myst_nb import page_notebook as read_page_notebook
from rec11_book.shared import pagefacts, pages
from rec11_book.shared.pagefacts import facts, notes_hash
from rec11_book.shared.pages import FINGERPRINT_KEY

PACKAGE_SRC = "src/rec11"  # the default of rec11_package_src: the course package's sources, in the book
CONFIG = "_config.yml"


@contextmanager
def kernel_sockets() -> Iterator[dict]:
    """Keyword arguments for ``nbclient.NotebookClient`` that give its kernel sockets of its own.

    Over TCP, a kernel is given free ports found by binding and letting go; a second kernel
    started at the same moment, in this process or another, can be given the same one. A
    whole-book retraining lost a run that way (2026-12-05: zmq "Address already in use", the
    kernel died before replying). Unix sockets are named by a path instead; each kernel gets a
    fresh folder, since the default path (``kernel-ipc`` in the working folder) is shared too,
    and kernels started together then read each other's messages. On Windows, which has no
    Unix sockets here, TCP as before.
    """
    from traitlets.config import Config

    if os.name == "nt":
        yield {}
        return
    with tempfile.TemporaryDirectory(prefix="rec11-kernel-") as folder:
        yield {"config": Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(folder, "k")}})}


def book_config(root: Path) -> dict:
    """``_config.yml`` as Jupyter Book reads it (a copy: the caller may change it)."""
    return copy.deepcopy(_parsed_config((Path(root) / CONFIG).read_text()))


@functools.lru_cache(maxsize=4)
def _parsed_config(text: str) -> dict:
    """A build asks for the settings several times; the YAML is parsed once per text."""
    return yaml.safe_load(text) or {}


def book_root(page: Path) -> Path | None:
    """The book a page belongs to: the nearest folder above it with a ``_config.yml`` (None: none)."""
    return next((folder for folder in Path(page).resolve().parents if (folder / CONFIG).is_file()), None)


def parser_config(config: dict):
    """The MyST settings myst-nb reads the pages with (``parse:`` in ``_config.yml``)."""
    from myst_parser.config.main import MdParserConfig

    parse = config.get("parse", {}) or {}
    return MdParserConfig(enable_extensions=set(parse.get("myst_enable_extensions", [])))


def course_package(root: Path, config: dict) -> Path | None:
    """The course package's sources in the book (``rec11_package_src`` under ``sphinx: config:``,
    as the build reads it; default ``src/rec11``), or None where there are none: the installed
    package is read instead, as ``pages.package_dir`` does inside Sphinx."""
    where = ((config.get("sphinx") or {}).get("config") or {}).get("rec11_package_src") or PACKAGE_SRC
    return root / where if (root / where).is_dir() else None


def page_notebook(page: Path, root: Path | None = None, config: dict | None = None, md_config=None,
                  fingerprint: bool = True):
    """The notebook myst-nb builds from ``page``: with its fingerprint in the kernelspec (the
    notebook the cache is keyed on), or, ``fingerprint=False``, as the page is (what the tools run).
    A page in no book (no ``_config.yml`` above it) is read with myst-nb's default settings."""
    root = Path(root) if root is not None else book_root(page)
    if config is None:
        config = book_config(root) if root is not None else {}
    text = Path(page).read_text()
    if fingerprint and "{code-cell}" in text:
        if root is None:
            raise FileNotFoundError(f"{page}: no {CONFIG} above it, so nothing to fingerprint it against")
        text = with_fingerprint(text, stamp(root, course_package(root, config), text))
    return read_page_notebook(text, md_config if md_config is not None else parser_config(config), Path(page))


def cache_path(root: Path, out: Path | None = None, config: dict | None = None) -> Path:
    """Where myst-nb keeps its cache: ``execute: cache:``, else ``_build/.jupyter_cache`` under
    ``out`` (the build's output root; default the book's folder)."""
    config = config if config is not None else book_config(root)
    where = ((config.get("execute") or {}).get("cache") or "").strip()
    return (Path(root) / where) if where else default_cache_folder(Path(out if out is not None else root) / "_build")


def timeout(config: dict) -> int:
    """Seconds a cell may run: ``execute: timeout:`` (myst-nb's default, 30, when unset)."""
    return int((config.get("execute") or {}).get("timeout", 30))


def stamp(srcdir: Path, package: Path | None, text: str) -> str:
    """:func:`fingerprint` outside Sphinx: the book's folder, and the course package's sources
    there (None: the installed package)."""
    modules = page_modules_kept(Path(srcdir), text)
    parts = []
    if modules:
        parts.append("code:" + package_hash(Path(srcdir), modules, package))
        # another seed shift or thread count is another retraining: its pages must run again
        parts.append(f"run:seed={seeds.shift()},threads={seeds.training_threads()}")
    plan = notes_hash(Path(srcdir), text)
    if plan:
        parts.append("notes:" + plan)
    return " ".join(parts)


# What rec11.sources.code_hash gave for a set of modules, kept in the book's .cache and keyed by
# the package's files as they are (each file's path, size and modification time): a build whose
# package code did not change reads every page's hash from there instead of parsing the package
# again for each page (twice per page per build: before the build and in Sphinx).
HASHES = Path(".cache") / "rec11-code-hashes.json"


def _package_state(package: Path | None) -> str:
    import rec11

    folder = package if package is not None else Path(rec11.__file__).parent
    files = sorted((p.relative_to(folder).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
                   for p in folder.rglob("*.py"))
    return hashlib.sha256(repr((str(folder.resolve()), files)).encode()).hexdigest()[:16]


def package_hash(srcdir: Path, modules, package: Path | None) -> str:
    """``rec11.sources.code_hash(modules, package)``, computed once per state of the package."""
    state, key = _package_state(package), ",".join(sorted(modules))
    path = srcdir / HASHES
    kept = _read_json(path)
    if kept.get("state") != state:
        kept = {"state": state, "hashes": {}}
    if key not in kept["hashes"]:
        kept["hashes"][key] = code_hash(modules, package)
        _write_whole(path, kept)
    return kept["hashes"][key]


# The rec11 modules each page text imports, kept beside HASHES and keyed by the text's digest:
# fingerprinting every page on every build would otherwise parse every page's cells again.
PAGE_MODULES = Path(".cache") / "rec11-page-modules.json"


@functools.lru_cache(maxsize=1)
def _parser_state() -> str:
    """The code that finds a page's imports (its cells, then their imports)."""
    return hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in (sources, pagefacts, pages))).hexdigest()[:16]


def page_modules_kept(srcdir: Path, text: str) -> frozenset[str]:
    """``pagefacts.facts(text).modules``, parsed once per page text (and per version of the
    code that parses it), then read from ``PAGE_MODULES``."""
    path, key = srcdir / PAGE_MODULES, hashlib.sha256(text.encode()).hexdigest()
    kept = _read_json(path)
    if kept.get("parser") != _parser_state():
        kept = {"parser": _parser_state(), "pages": {}}
    if key not in kept["pages"]:
        kept["pages"][key] = sorted(facts(text).modules)
        _write_whole(path, kept)
    return frozenset(kept["pages"][key])


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _write_whole(path: Path, data: dict) -> None:
    """Write ``data`` as JSON, whole or not at all, for another build reading it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps(data, sort_keys=True))
    partial.replace(path)


def built_commit(root: Path, branch: str) -> str:
    """The commit the site is built from: git's HEAD, GitHub's GITHUB_SHA, else the branch."""
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("GITHUB_SHA") or branch


def with_fingerprint(text: str, stamp: str) -> str:
    """The page's MyST text with ``stamp`` in its front matter's kernelspec (unchanged for an
    empty stamp, or a page with no kernelspec, which myst-nb does not run).

    jupyter-cache keys a page on its code cells and its kernelspec
    (``compat.jupyter_cache.keyed_metadata``), so the stamp there makes an edit to what the
    page's code imports miss the cache. The kernelspec block becomes one line of JSON (which
    is YAML) and blank lines, so every line of the page keeps its number.
    ``rec11_book.commands.preexecute`` builds the same notebook, so the two must agree.
    """
    try:
        kernelspec = pages.front_matter_of(text).get(keyed_metadata()) if stamp else None
    except yaml.YAMLError:  # myst-nb reports it, with its line
        return text
    if not isinstance(kernelspec, dict):
        return text
    lines = text.split("\n")
    end = lines.index("---", 1)  # the front matter's end, as front_matter_of found it
    start = next((n for n in range(1, end) if lines[n].startswith(f"{keyed_metadata()}:")), None)
    if start is None:
        return text
    stop = next((n for n in range(start + 1, end) if lines[n][:1] not in ("", " ", "\t")), end)
    kernelspec = {**kernelspec, FINGERPRINT_KEY: stamp}
    block = [f"{keyed_metadata()}: {json.dumps(kernelspec, ensure_ascii=False)}"] + [""] * (stop - start - 1)
    return "\n".join(lines[:start] + block + lines[stop:])


