"""What the build relies on in jupyter-cache (pinned 1.0.1) beyond its documented API.

The cache's documented API (``get_cache``, ``match_cache_notebook``,
``merge_match_into_notebook``, ``cache_notebook_bundle``) is used directly.
"""

from __future__ import annotations

from pathlib import Path

from rec11_book.compat import lacks_text, reliance


@reliance(probe=lambda: lacks_text("jupyter_cache", "def list_cache_records", "pk = Column", "uri = Column",
                                   "data = Column"))
def cache_records(cache_path: str | Path) -> list[tuple[int, str, dict]]:
    """(record id, the path of the notebook it holds, its data) for every record of the cache.

    Relies on: ``get_cache(path).list_cache_records()`` giving records with ``pk``, ``uri``
    (the page's path) and ``data`` (the book stores ``execution_seconds`` there), and each page
    run adding a record with a new ``pk``.
    Package: jupyter-cache. Checked against: 1.0.1.
    Public alternative: none for the record's fields (the ``jcache`` command prints them as a
    table).
    """
    from jupyter_cache import get_cache

    return [(record.pk, record.uri, dict(record.data or {}))
            for record in get_cache(str(cache_path)).list_cache_records()]


@reliance(probe=lambda: lacks_text("jupyter_cache", "def single_nb_execution(", "meta_override",
                                   "allow_errors", "ExecutionResult"))
def execute_notebook(nb, cwd: str, timeout: int, **client):
    """Run a notebook as myst-nb's cache mode runs it; the result has ``err`` (None if it ran)
    and ``time`` (seconds). ``client``: more keyword arguments for nbclient's ``NotebookClient``
    (the kernel's sockets, ``execution.kernel_sockets``).

    Relies on: ``jupyter_cache.executors.utils.single_nb_execution(nb, cwd=, timeout=,
    allow_errors=, meta_override=, **kwargs)``, the function jupyter-cache's executors and
    myst-nb run a page with, which hands ``kwargs`` to ``NotebookClient``.
    Package: jupyter-cache. Checked against: 1.0.1.
    Public alternative: ``nbclient.execute``, which would run a page differently from the
    build (no ``meta_override``, no timing).
    """
    from jupyter_cache.executors.utils import single_nb_execution

    return single_nb_execution(nb, cwd=cwd, timeout=timeout, allow_errors=False, meta_override=True, **client)


@reliance(probe=lambda: lacks_text("jupyter_cache", 'nb_metadata: Optional[Iterable[str]] = ("kernelspec",)')
          + lacks_text("myst_nb", "cache.match_cache_notebook(self.notebook)"))
def keyed_metadata() -> str:
    """The notebook metadata key whose value is part of a page's cache key: "kernelspec".

    Relies on: ``JupyterCacheBase.create_hashed_notebook`` hashing the code cells (source and
    metadata) and, of the notebook's metadata, the ``kernelspec`` only (its ``nb_metadata``
    default), and myst-nb matching and caching a page with that default. The build puts the
    fingerprint of a page's inputs there (``shared.execution.with_fingerprint``), so that an
    edit to the code a page imports misses the cache without a cell added to the page.
    Package: jupyter-cache. Checked against: 1.0.1.
    Public alternative: a cell holding the fingerprint (what the build did before 2026-12-05),
    which every reader's copy then had to drop again.
    """
    return "kernelspec"
