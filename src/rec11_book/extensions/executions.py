"""Which pages ran their cells in this build, and which came from the execution cache.

myst-nb executes a page whose notebook the cache (jupyter-cache) lacks and adds the result
as a new cache record; a page it finds there it serves from the record. So the records
this build added are the pages it ran. This extension notes the cache's record ids before
Sphinx reads any page and compares them after, and writes the result beside the doctrees:

    _build/.doctrees/.rec11-execution.json   {"executed": [docname, ...], "cached": [...]}

``rec11_book.commands.build`` adds the pages it ran before Sphinx (``rec11_book.commands.preexecute``), which
Sphinx then finds in the cache, and prints the summary from this file (``summary``). The
summary reads no log text, which changes between versions: it compares the cache's records
and myst-nb's execution data (both through ``rec11_book.compat``). Only a failed build's
report reads the log, for the messages it shows (``rec11_book.commands.build``).
"""

from __future__ import annotations

import json
from pathlib import Path

from rec11_book.compat.jupyter_cache import cache_records
from rec11_book.compat.myst_nb import exec_data, execution_cache

RECORD = ".rec11-execution.json"


def records_of(cache_path: str | Path) -> dict[int, str]:
    """{record id: the path of the notebook it holds} for every record of the cache."""
    return {pk: uri for pk, uri, _ in cache_records(cache_path)}


def page_seconds(cache_path: str | Path, srcdir: Path) -> dict[str, float]:
    """{docname: seconds its cells took when it last ran} for every page in the cache."""
    seconds = {}
    for _, uri, data in cache_records(cache_path):
        name = docname(Path(srcdir).resolve(), uri)
        if name and "execution_seconds" in data:
            seconds[name] = data["execution_seconds"]
    return seconds


def docname(srcdir: Path, uri: str) -> str | None:
    """The docname of the page at ``uri``, or None for a notebook outside the book."""
    path = Path(uri).resolve()
    return path.relative_to(srcdir).with_suffix("").as_posix() if path.is_relative_to(srcdir) else None


def read(doctrees: Path) -> dict[str, list[str]]:
    """The record of the last build in ``doctrees``: {"executed": [...], "cached": [...]} as
    Sphinx saw them, and "ahead": the pages ``rec11_book.commands.build`` ran before Sphinx."""
    path = Path(doctrees) / RECORD
    record = json.loads(path.read_text()) if path.is_file() else {}
    return {"executed": [], "cached": [], "ahead": [], **record}


def summary(doctrees: Path) -> dict[str, list[str]]:
    """{"executed": pages whose cells ran in this build, before Sphinx or in it; "cached":
    pages served from the cache without running}."""
    record = read(doctrees)
    executed = set(record["executed"]) | set(record["ahead"])
    return {"executed": sorted(executed), "cached": sorted(set(record["cached"]) - executed)}


def _save(doctrees: Path, record: dict) -> None:
    path = Path(doctrees) / RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1))


def write(doctrees: Path, executed: set[str], cached: set[str]) -> None:
    _save(doctrees, {"executed": sorted(executed), "cached": sorted(cached - executed)})


def add_ahead(doctrees: Path, ahead: list[str]) -> None:
    """Add to the record the pages run before Sphinx read them (which it then found cached)."""
    _save(doctrees, {**read(doctrees), "ahead": sorted(ahead)})


def forget(doctrees: Path) -> None:
    """Remove the last build's record, so that a build that stops early leaves none."""
    (Path(doctrees) / RECORD).unlink(missing_ok=True)


def before_read(app, env, docnames) -> None:
    where = execution_cache(app)
    env.rec11_records_before = records_of(where) if where else {}
    env.rec11_docs_read = set(docnames)


def after_build(app, exception) -> None:
    where = execution_cache(app)
    if where is None:
        return
    before = getattr(app.env, "rec11_records_before", {})
    srcdir = Path(app.srcdir).resolve()
    added = {docname(srcdir, uri) for pk, uri in records_of(where).items() if pk not in before}
    # myst-nb gives every page it ran or served from the cache execution data; a run that
    # failed adds no record, but says so there
    data = {name: exec_data(app.env, name) for name in getattr(app.env, "rec11_docs_read", set())}
    failed = {name for name, info in data.items() if info and not info.get("succeeded", True)}
    executed = {name for name in added if name} | failed
    write(Path(app.doctreedir), executed, {name for name, info in data.items() if info})


def setup(app) -> dict:
    app.connect("env-before-read-docs", before_read)
    app.connect("build-finished", after_build)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
