"""What the build relies on in myst-nb (pinned 1.4.0) beyond its documented API.

myst-nb documents its configuration, its roles and directives, ``glue`` and the mime
renderer plugins (``myst_nb.mime_renderers``, which ``rec11_book.extensions.explore`` uses); the
book also reads its nodes, files, messages and a few of its functions, each here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from rec11_book.compat import lacks_attributes, lacks_text, reliance

# --- where myst-nb writes ------------------------------------------------------------------


def _probe_output_folder() -> list[str]:
    from myst_nb import sphinx_ext

    wrong = [] if getattr(sphinx_ext, "OUTPUT_FOLDER", None) == "jupyter_execute" else [
        "myst_nb.sphinx_ext.OUTPUT_FOLDER == 'jupyter_execute'"]
    return wrong + lacks_text("myst_nb", "Path(app.outdir).parent.joinpath(OUTPUT_FOLDER)")


@reliance(probe=_probe_output_folder)
def output_folder_name() -> str:
    """The folder, beside the HTML output (``_build/jupyter_execute``), where myst-nb writes each
    page's notebook as it ran, its glued values and its output images.

    Relies on: myst-nb's ``OUTPUT_FOLDER`` ("jupyter_execute", ``myst_nb.sphinx_ext``), always
    next to ``app.outdir``; sphinx-book-theme copies the page's download from there too.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: ``app.env.mystnb_config.output_folder`` inside a build (``output_folder``
    below); none after it, when the downloads and the figure export read the folder.
    """
    return "jupyter_execute"


@reliance(probe=lambda: lacks_text("myst_nb", 'Path(app.outdir).parent.joinpath(".jupyter_cache")'))
def default_cache_folder(build: Path) -> Path:
    """The execution cache of a build whose ``_config.yml`` names none (``execute: cache: ""``).

    Relies on: myst-nb putting the cache at ``<outdir>/../.jupyter_cache`` when
    ``nb_execution_cache_path`` is empty (Jupyter Book's default).
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: setting ``execute: cache:`` in ``_config.yml`` (the build would then
    read that path; the book keeps Jupyter Book's default).
    """
    return Path(build) / ".jupyter_cache"


@reliance(probe=lambda: lacks_text("myst_nb", "app.env.mystnb_config = app.env.mystnb_config.copy(",
                                   "output_folder=str(output_folder)"))
def output_folder(app) -> str | None:
    """This build's myst-nb output folder (``output_folder_name``), or None outside myst-nb.

    Relies on: myst-nb keeping its resolved configuration as ``app.env.mystnb_config``, an
    ``NbParserConfig`` whose ``output_folder`` is the absolute folder.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none (the ``nb_output_folder`` setting is not where myst-nb writes).
    """
    return getattr(getattr(app.env, "mystnb_config", None), "output_folder", None)


@reliance(probe=lambda: lacks_text("myst_nb", ".glue.json"))
def glue_file(folder: str | Path, page: str | Path) -> Path:
    """The file of a page's glued values in the output folder (``page`` is its docname or its
    path relative to the book, with or without a suffix).

    Relies on: myst-nb saving the page's glued values as ``<page>.glue.json`` in its output
    folder, a JSON object {key: {"data": mime bundle, ...}}.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none after the build; during it, a page's own values are in its
    document (``glue_data``).
    """
    return Path(folder).joinpath(*Path(page).as_posix().split("/")).with_suffix(".glue.json")


# --- execution ---------------------------------------------------------------------------------


@reliance(probe=lambda: lacks_text("myst_nb", "execution_mode", "execution_cache_path"))
def execution_cache(app) -> str | None:
    """The execution cache's folder, if this build executes in myst-nb's ``cache`` mode.

    Relies on: ``app.env.mystnb_config`` holding ``execution_mode`` and the resolved
    ``execution_cache_path``.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none (``nb_execution_cache_path`` is empty unless the book sets it).
    """
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return None
    return config.execution_cache_path


@reliance(probe=lambda: lacks_attributes("myst_nb.sphinx_.NbMetadataCollector")
          + lacks_text("myst_nb", "def get_exec_data(cls, env"))
def exec_data(env, docname: str) -> dict | None:
    """What myst-nb recorded of the page's execution (``succeeded``, ``method``, ``runtime``...),
    or None for a page it did not run or serve from the cache.

    Relies on: ``myst_nb.sphinx_.NbMetadataCollector.get_exec_data(env, docname)``, the data
    behind myst-nb's own ``nb-exec-table``, set for every page it ran or took from the cache.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: the ``{nb-exec-table}`` directive, which shows the same data in a page
    but gives it to no code.
    """
    from myst_nb.sphinx_ import NbMetadataCollector

    try:
        return NbMetadataCollector.get_exec_data(env, docname)
    except KeyError:
        return None


@reliance(probe=lambda: lacks_attributes("myst_nb.core.read.read_myst_markdown_notebook"))
def page_notebook(text: str, md_config, path: Path):
    """The notebook myst-nb makes of a MyST page's text, the one whose hash it looks up in the
    execution cache.

    Relies on: ``myst_nb.core.read.read_myst_markdown_notebook(text, config=, add_source_map=True,
    path=)`` being what myst-nb reads a ``.md`` page with (so the cache key matches).
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: jupytext's MyST reader, which makes another notebook (another hash).
    """
    from myst_nb.core.read import read_myst_markdown_notebook

    return read_myst_markdown_notebook(text, config=md_config, add_source_map=True, path=path)


@reliance(probe=lambda: lacks_text("jupyter_client", "env = env if (env is not None) else os.environ.copy()"))
def kernels_inherit(name: str, value: str) -> None:
    """Give the kernels that execute the pages ``name=value`` (unless the environment sets it).

    Relies on: myst-nb executing pages (through jupyter-cache and nbclient) in kernels this
    process starts, with no environment of their own: jupyter_client then launches a kernel
    with a copy of this process's.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none in myst-nb's settings; a kernelspec's ``env`` would reach every
    use of that kernel, not only the build's.
    """
    os.environ.setdefault(name, value)


_FAILED = re.compile(r"WARNING: Executing notebook failed")


@reliance(probe=lambda: lacks_text("myst_nb", 'msg = f"Executing notebook failed: '))
def cell_failure(line: str) -> bool:
    """Whether a printed line (or a warning's message) is myst-nb's report of a cell that raised.

    Relies on: the text of myst-nb's warning, "Executing notebook failed: <error class>",
    which it prints with nbclient's report of the cell after it.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none that is not text (``nb_execution_raise_on_error`` stops the build
    with the same report).
    """
    return bool(_FAILED.search(line)) or line.startswith("Executing notebook failed")


# --- a page's nodes and HTML -------------------------------------------------------------------


@reliance(probe=lambda: lacks_text("myst_nb", 'nb_element="cell_code"', 'nb_element="cell_code_source"',
                                   'nb_element="mime_bundle"', "mime_type="))
def nb_element(node) -> str | None:
    """What part of a notebook a doctree node is: ``cell_code`` (a code cell's container),
    ``cell_code_source`` (its code), ``mime_bundle`` (an output in several formats, each child
    carrying its ``mime_type``), ...; None for a node myst-nb did not make.

    Relies on: the ``nb_element`` and ``mime_type`` attributes myst-nb's renderer puts on the
    nodes it makes.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none (the node classes are plain docutils containers).
    """
    return node.get("nb_element")


@reliance(probe=lambda: lacks_text("myst_nb", 'cell_container["hide_mode"] = hide_mode', '"input+output"'))
def hide_mode(node) -> str | None:
    """What a code cell hides: ``all``, ``input+output``, ``input``, ``output``, or None.

    Relies on: the ``hide_mode`` attribute myst-nb puts on a code cell's container node, from
    its ``hide-*`` tags.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none (the cell's tags are on the node as ``tag_<tag>`` classes, but the
    mode is myst-nb's reading of them).
    """
    return node.get("hide_mode")


@reliance(probe=lambda: lacks_attributes("myst_nb.core.render.get_mime_priority"))
def mime_priority(app) -> list[str]:
    """The output formats this builder shows, best first (a figure in PNG and SVG is shown once).

    Relies on: ``myst_nb.core.render.get_mime_priority(builder name, nb_mime_priority_overrides)``.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none (the ``nb_mime_priority_overrides`` setting is public, the
    resulting order is not).
    """
    from myst_nb.core.render import get_mime_priority

    return get_mime_priority(app.builder.name, app.config.nb_mime_priority_overrides)


@reliance(probe=lambda: lacks_attributes("myst_nb.core.variables.format_plain_text"))
def format_plain_text(text: str, fmt: str) -> str:
    """A glued value's ``text/plain`` as ``{glue:text}`key:fmt``` prints it in the page.

    Relies on: ``myst_nb.core.variables.format_plain_text(text, fmt_spec)``, the function the
    ``glue:text`` role formats with.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none (re-implementing it could print another number than the page).
    """
    from myst_nb.core.variables import format_plain_text as format_text

    return format_text(text, fmt)


@reliance(probe=lambda: lacks_attributes("myst_nb.ext.glue.utils.retrieve_glue_data",
                                         "myst_nb.ext.glue.utils.RetrievalError"))
def glue_data(document, key: str) -> dict:
    """The mime bundle glued under ``key`` (``path::key`` for another page's), or {} if none.

    Relies on: ``myst_nb.ext.glue.utils.retrieve_glue_data(document, key)``, which the glue
    roles use, returning an output with ``data``, and raising ``RetrievalError`` for a missing key.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none.
    """
    from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data

    try:
        return retrieve_glue_data(document, key).data
    except RetrievalError:
        return {}


_NO_GLUE_KEY = re.compile(r"^No key '(?P<key>[^']+)' found in glue data for this document\..*?(?P<tag> \[[\w.]+\])?$",
                          re.S)


@reliance(probe=lambda: lacks_text("myst_nb", "found in glue data for this document."))
def no_glue_key(message: str) -> re.Match | None:
    """myst-nb's warning for a glue role whose key the page does not glue, as a match with
    ``key`` and ``tag`` (the warning's `` [type.subtype]``, if shown); else None.

    Relies on: the text "No key 'x' found in glue data for this document.", which myst-nb
    reports at the first line of the role's paragraph.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none.
    """
    return _NO_GLUE_KEY.match(message)


@reliance(probe=lambda: lacks_text("myst_nb", 'classes.append(f"tag_{tag.replace(\' \', \'_\')}")'))
def tag_class(tag: str) -> str:
    """The class myst-nb gives a code cell (its node and its HTML ``div.cell``) tagged ``tag``.

    Relies on: myst-nb's ``tag_<tag>`` classes on a code cell's container.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none.
    """
    return f"tag_{tag.replace(' ', '_')}"


@reliance(probe=lambda: lacks_text("myst_nb", 'classes=["cell_input"', '"cell_output"', '"cell"',
                                   suffixes=(".py", ".css")))
def cell_selector(tag: str | None = None, part: str = "") -> str:
    """The CSS selector of a code cell's HTML (``part``: "" the cell, ``input`` its code,
    ``output`` its outputs), for a cell tagged ``tag`` if given.

    Relies on: a code cell's HTML as myst-nb writes it: ``div.cell`` (with its ``tag_<tag>``
    classes) holding ``div.cell_input`` and ``div.cell_output``.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: none.
    """
    cell = "div.cell" + (f".{tag_class(tag)}" if tag else "")
    return f"{cell} div.cell_{part}" if part and tag else (f"div.cell_{part}" if part else cell)
