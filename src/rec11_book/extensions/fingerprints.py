"""No stale pages: a page re-executes when the code or notes it reads change.

jupyter-cache keys a page on its own code cells only, so an edit to ``src/rec11``
would leave the cached outputs of the pages that import it in place. Before a page
is parsed, this extension appends one hidden code cell holding a fingerprint of
everything the page's code depends on: the source of the ``rec11`` modules it
imports (transitively, :mod:`rec11.sources`), the seed shift and training threads
(``rec11.seeds``: another retraining), and, for a page that draws the session
plan, the instructor notes of the whole book. A changed fingerprint changes the
notebook's hash, so jupyter-cache misses and the page re-executes;
``env-get-outdated`` makes Sphinx re-read such a page even though its own file did
not change. Pages whose dependencies did not change keep their cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from rec11 import seeds
from rec11.sources import code_hash
from rec11_book.shared.pagefacts import facts, notes_hash
from rec11_book.shared.pages import FINGERPRINT_MARK, failed_pages, keep_per_page, package_dir

logger = logging.getLogger(__name__)

PACKAGE_SRC = "src/rec11"  # the default of rec11_package_src: the course package's sources, in the book


def fingerprint(app: Sphinx, text: str) -> str:
    """A hash of the package code and book data that the page's code cells read."""
    return stamp(Path(app.srcdir), package_dir(app), text)


def stamp(srcdir: Path, package: Path | None, text: str) -> str:
    """:func:`fingerprint` outside Sphinx: the book's folder, and the course package's sources
    there (None: the installed package)."""
    modules = facts(text).modules
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
    try:
        kept = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        kept = {}
    if kept.get("state") != state:
        kept = {"state": state, "hashes": {}}
    if key not in kept["hashes"]:
        kept["hashes"][key] = code_hash(modules, package)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(kept, sort_keys=True))
        partial.replace(path)  # whole or not at all, for another build reading it
    return kept["hashes"][key]


def with_fingerprint(text: str, stamp: str) -> str:
    """The page's MyST text with its fingerprint cell appended (none for an empty stamp).

    A comment-only cell: it costs nothing to run, but it changes the notebook's hash.
    ``rec11_book.commands.preexecute`` builds the same notebook, so the two must agree.
    """
    if not stamp:
        return text
    return text + f"\n\n```{{code-cell}} ipython3\n:tags: [remove-cell]\n\n{FINGERPRINT_MARK}: {stamp}\n```\n"


def inject_fingerprint(app: Sphinx, docname: str, source: list[str]) -> None:
    if not str(app.env.doc2path(docname)).endswith(".md") or "{code-cell}" not in source[0]:
        return
    try:
        stamp = fingerprint(app, source[0])
    except ValueError as err:  # a malformed instructor note: the message names the file
        logger.warning(str(err), location=docname, type="rec11", subtype="notes")
        return
    app.env.rec11_fingerprints[docname] = stamp
    source[0] = with_fingerprint(source[0], stamp)


def outdated_by_dependencies(app, env, added, changed, removed) -> list[str]:
    """Pages whose own file is unchanged but whose dependencies changed."""
    stale = []
    for docname, old in env.rec11_fingerprints.items():
        if docname in changed or docname in removed or not old:
            continue
        path = Path(env.doc2path(docname))
        try:
            now = fingerprint(app, path.read_text()) if path.is_file() else old
        except ValueError:  # a malformed note; the re-read reports it with its line
            now = None
        if now != old:
            stale.append(docname)
    if stale:
        logger.info("rec11: re-reading pages whose package code or notes changed: %s", ", ".join(sorted(stale)))
    failed = sorted((failed_pages(Path(app.doctreedir)) & set(env.found_docs)) - set(changed) - set(stale))
    if failed:
        logger.info("rec11: re-reading pages the last build failed on: %s", ", ".join(failed))
    return stale + failed


def setup(app: Sphinx) -> dict:
    app.add_config_value("rec11_package_src", PACKAGE_SRC, "env")  # pages.package_dir reads it
    keep_per_page(app, "rec11_fingerprints")
    app.connect("env-get-outdated", outdated_by_dependencies)
    app.connect("source-read", inject_fingerprint)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
