"""No stale pages: a page re-executes when the code or notes it reads change.

jupyter-cache keys a page on its own code cells and its kernelspec, so an edit to
``src/rec11`` would leave the cached outputs of the pages that import it in place.
Before a page is parsed, this extension writes into the page's kernelspec (its front
matter, every line kept where it was) a fingerprint of everything the page's code
depends on: the source of the ``rec11`` modules it
imports (transitively, :mod:`rec11.sources`), the seed shift and training threads
(``rec11.seeds``: another retraining), and, for a page that draws the session
plan, the instructor notes of the whole book. A changed fingerprint changes the
notebook's hash, so jupyter-cache misses and the page re-executes;
``env-get-outdated`` makes Sphinx re-read such a page even though its own file did
not change. Pages whose dependencies did not change keep their cache.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

# the fingerprint itself is computed outside Sphinx too (the pages run before the build): shared.execution
from rec11_book.shared.execution import HASHES, PACKAGE_SRC, package_hash, stamp, with_fingerprint
from rec11_book.shared.pages import failed_pages, keep_per_page, package_dir

logger = logging.getLogger(__name__)
__all__ = ["HASHES", "PACKAGE_SRC", "fingerprint", "package_hash", "setup", "stamp", "with_fingerprint"]


def fingerprint(app: Sphinx, text: str) -> str:
    """A hash of the package code and book data that the page's code cells read."""
    return stamp(Path(app.srcdir), package_dir(app), text)


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
