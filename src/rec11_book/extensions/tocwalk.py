"""The toc's walk through the book skips the folders ``exclude_patterns`` excludes.

``sphinx-external-toc`` (with ``only_build_toc_files``) globs ``**/*.md``, ``**/*.ipynb`` ...
through the whole book folder, ``node_modules`` and ``.venv`` included (tens of thousands of
entries, about 0.9 s), to exclude every file the toc does not list. Files in folders that
``exclude_patterns`` excludes are dropped either way, so skipping those folders changes
nothing but the time. (``python -m rec11_book.commands.quickstart`` removes the build's other waits.)
"""

from __future__ import annotations

from rec11_book.compat.sphinx_external_toc import prune_walk


def prune_toc_walk(app, config) -> None:
    """The toc's walk through the book skips the folders ``exclude_patterns`` excludes."""
    prune_walk(app.srcdir, list(config.exclude_patterns))


def setup(app) -> dict:
    app.connect("config-inited", prune_toc_walk, priority=100)  # before sphinx-external-toc (900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
