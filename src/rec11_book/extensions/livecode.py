"""Live code: the book's own Thebe set-up, with the kernel source chosen in ``_config.yml``.

sphinx-thebe 0.3.1 (which Jupyter Book 1 loads) fetches Thebe 0.8.2 from a CDN,
hard-wires mybinder.org and calls ``bootstrap()`` without options. This extension
keeps the theme's **Live Code** button but replaces everything behind it:

* **Pinned Thebe, served by the site.** :mod:`rec11_book.extensions.assets` copies it from
  ``node_modules`` (the exact version is in ``package-lock.json``).
* **One kernel source.** ``rec11_live_code`` in ``_config.yml`` (under
  ``sphinx: config:``) says where kernels come from::

      rec11_live_code:
        source: binder          # or: jupyter-server
        server_url: ""          # jupyter-server: the server's (or JupyterHub's) URL
        token: ""               # jupyter-server: its token; empty = ask the reader
        hub: false              # jupyter-server: server_url is a JupyterHub

  Binder takes its BinderHub from ``launch_buttons.binderhub_url`` and the
  repository and ref from ``repository.url`` and ``repository.branch``.
  Environment variables override the file, for tests and one-off builds:
  ``REC11_LIVE_CODE_SOURCE``, ``REC11_LIVE_CODE_URL``, ``REC11_LIVE_CODE_TOKEN``
  and ``REC11_LIVE_CODE_HUB`` (``1``/``0``).
* **Only our script.** sphinx-thebe's script tags, CSS and per-page
  ``x-thebe-config`` are removed from the pages. A live page loads
  ``static/livecode/main.js``, an ES module (``<script type="module">``) that
  defines ``initThebe()``, which the theme's button calls, and imports the
  other modules of ``static/livecode/`` when it is pressed; they read a
  per-page JSON config written here. Sphinx gives the entry module a checksum
  of its content (``?v=``); an import map gives every other module its own,
  so that after a new deploy a browser never runs old modules with new ones.
* **Other weights, other numbers.** A page whose code trains or loads a model
  (it imports ``rec11.cache``, through any module) says so in its config
  (``trainedModels``): the reader's kernel trains its own copy, or loads one
  trained on other hardware, so its numbers can differ slightly from the page's,
  and the ready message tells the reader why.
* **Live code runs what the page shows.** A cell tagged ``remove-cell`` is not in
  the page, so Live Code never runs it: a shown cell that reads a name only such a
  cell defines is a warning at the page and line.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from urllib.parse import urlparse

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util import logging

from rec11_book.compat.book_theme import live_code_on, live_code_placeholder
from rec11_book.compat.sphinx_thebe import is_asset as is_sphinx_thebe_asset
from rec11_book.compat.sphinx_thebe import is_page_config as is_sphinx_thebe_config
from rec11_book.shared.files import STATIC, package_version
from rec11_book.shared.pagefacts import live_code_gaps, uses_trained_models

logger = logging.getLogger(__name__)

SOURCES = ("binder", "jupyter-server")
ENV = {
    "source": "REC11_LIVE_CODE_SOURCE",
    "server_url": "REC11_LIVE_CODE_URL",
    "token": "REC11_LIVE_CODE_TOKEN",
    "hub": "REC11_LIVE_CODE_HUB",
}
DEFAULTS = {"source": "binder", "server_url": "", "token": "", "hub": False}
CONFIG_ID = "rec11-live-code-config"
MODULES = "livecode"      # static/livecode/: Live Code's ES modules
ENTRY = "main.js"         # the one a page loads; it imports the others


# --- the setting ----------------------------------------------------------------------


def _as_bool(value) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def resolve(config: dict | None, environ=os.environ, theme_options: dict | None = None) -> dict:
    """The live-code setting: ``_config.yml`` overridden by the environment, checked."""
    given = dict(config or {})
    unknown = set(given) - set(DEFAULTS)
    if unknown:
        raise ConfigError(f"rec11_live_code: unknown key(s) {sorted(unknown)}; allowed: {sorted(DEFAULTS)}")
    settings = {**DEFAULTS, **given}
    for key, var in ENV.items():
        if environ.get(var, "") != "":
            settings[key] = environ[var]
    settings["source"] = str(settings["source"]).strip()
    settings["hub"] = _as_bool(settings["hub"])
    settings["server_url"] = str(settings["server_url"] or "").strip()
    settings["token"] = str(settings["token"] or "").strip()
    if settings["source"] not in SOURCES:
        raise ConfigError(
            f"rec11_live_code.source (or ${ENV['source']}) must be one of {SOURCES}, got {settings['source']!r}"
        )
    if settings["source"] == "jupyter-server":
        url = urlparse(settings["server_url"])
        if url.scheme not in {"http", "https"} or not url.netloc:
            raise ConfigError(
                "rec11_live_code.source is 'jupyter-server', so rec11_live_code.server_url "
                f"(or ${ENV['server_url']}) must be an http(s) URL, got {settings['server_url']!r}"
            )
        settings["server_url"] = settings["server_url"].rstrip("/") + "/"
    else:
        theme = theme_options or {}
        launch = theme.get("launch_buttons") or {}
        settings["binderhub_url"] = (launch.get("binderhub_url") or "https://mybinder.org").rstrip("/")
        settings["repository_url"] = (theme.get("repository_url") or "").rstrip("/")
        settings["ref"] = theme.get("repository_branch") or "main"
        if "github.com/" not in settings["repository_url"]:
            raise ConfigError(
                "rec11_live_code.source is 'binder', which needs repository.url in _config.yml to be a "
                f"GitHub repository, got {settings['repository_url']!r}"
            )
    return settings


def source_label(settings: dict) -> str:
    """What the reader is told live code runs on: 'mybinder.org', 'the Jupyter server at ...'."""
    if settings["source"] == "binder":
        return urlparse(settings["binderhub_url"]).netloc or settings["binderhub_url"]
    host = urlparse(settings["server_url"]).netloc
    return f"the JupyterHub at {host}" if settings["hub"] else f"the Jupyter server at {host}"


def apply_settings(app: Sphinx, config) -> None:
    config.rec11_live_code = resolve(config.rec11_live_code, os.environ, config.html_theme_options)


def thebe_version(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.rec11_thebe_version = package_version("thebe", Path(app.srcdir))


# --- what a reader can run ---------------------------------------------------------------


def warn_live_code_gaps(app: Sphinx, docname: str, source: list[str]) -> None:
    if not str(app.env.doc2path(docname)).endswith(".md") or "{code-cell}" not in source[0]:
        return
    for line, names in live_code_gaps(source[0]):
        logger.warning(
            f"this cell reads {', '.join(names)}, which only a `remove-cell` cell defines: Live Code "
            "does not run removed cells; define it in a shown or hidden (hide-input) cell",
            location=(docname, line), type="rec11", subtype="livecode")


# --- the pages -------------------------------------------------------------------------


def drop_sphinx_thebe_config(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Remove the ``x-thebe-config`` and ``kernelName`` scripts sphinx-thebe appends."""
    for raw in list(doctree.findall(nodes.raw)):
        if is_sphinx_thebe_config(raw.astext()):
            raw.parent.remove(raw)


def kernel_name(app: Sphinx, docname: str) -> str:
    spec = app.env.metadata.get(docname, {}).get("kernelspec") or {}
    if isinstance(spec, str):
        spec = json.loads(spec)
    return spec.get("name") or "python3"


def source_config(settings: dict) -> dict:
    """The kernel-source part of a page's live-code JSON (what static/livecode/ reads)."""
    config = {"source": settings["source"], "label": source_label(settings)}
    if settings["source"] == "binder":
        repo = settings["repository_url"].split("github.com/", 1)[1]
        config["binder"] = {"binderUrl": settings["binderhub_url"], "repo": repo, "ref": settings["ref"],
                            "repoProvider": "github"}
    else:
        config["server"] = {"url": settings["server_url"], "token": settings["token"], "hub": settings["hub"]}
    return config


def page_config(app: Sphinx, pagename: str, pathto) -> dict:
    book_path = (app.config.html_theme_options.get("path_to_docs") or "").strip("/")
    notebook = "/".join(p for p in (book_path, f"{pagename}.ipynb") if p)
    return {
        "trainedModels": uses_trained_models(app, pagename),
        "placeholder": live_code_placeholder(),  # the theme's, under the title: the status box goes there
        **source_config(app.config.rec11_live_code),
        "thebeVersion": app.rec11_thebe_version,
        "thebeJs": pathto("_static/thebe/index.js", 1),
        "thebeCss": pathto("_static/thebe/thebe.css", 1),
        "kernel": {"kernelName": kernel_name(app, pagename), "path": notebook},
    }


def update_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    for key in ("script_files", "css_files"):
        if context.get(key) is not None:
            context[key][:] = [asset for asset in context[key] if not is_sphinx_thebe_asset(asset)]
    if doctree is None or not live_code_on(context):
        return
    body = json.dumps(page_config(app, pagename, context["pathto"]), sort_keys=True).replace("</", "<\\/")
    app.add_js_file(None, body=body, type="application/json", id=CONFIG_ID)
    # The import map before any module script (a browser ignores a map that comes after one).
    imports = json.dumps(import_map(context["pathto"]), sort_keys=True).replace("</", "<\\/")
    app.add_js_file(None, body=imports, type="importmap", priority=100)
    app.add_js_file(f"{MODULES}/{ENTRY}", type="module")


def import_map(pathto) -> dict:
    """``{"imports": {module URL: the same URL?v=checksum}}`` for every Live Code module but
    the entry (Sphinx gives it one): a module imports the others by plain relative URLs,
    which the map turns into URLs that change when the file does. The checksum is Sphinx's
    own (CRC-32 of the content)."""
    imports = {}
    for path in sorted((STATIC / MODULES).glob("*.js")):
        if path.name == ENTRY:
            continue
        url = pathto(f"_static/{MODULES}/{path.name}", 1)
        if not url.startswith(("./", "../", "/")):
            url = "./" + url  # a key that is not URL-like would be a bare name
        checksum = zlib.crc32(path.read_bytes().replace(b"\r", b""))
        imports[url] = f"{url}?v={checksum:08x}"
    return {"imports": imports}


def setup(app: Sphinx) -> dict:
    app.add_config_value("rec11_live_code", dict(DEFAULTS), "html", types=[dict])
    app.setup_extension("rec11_book.extensions.assets")  # Thebe's files, and static/livecode/
    app.connect("config-inited", apply_settings)
    app.connect("builder-inited", thebe_version)
    app.connect("source-read", warn_live_code_gaps)
    app.connect("doctree-resolved", drop_sphinx_thebe_config, priority=900)
    # after sphinx-book-theme's launch buttons (priority 500) have set `use_thebe`
    app.connect("html-page-context", update_page, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
