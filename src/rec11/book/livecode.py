"""Live code: the book's own Thebe set-up, with the kernel source chosen in ``_config.yml``.

sphinx-thebe 0.3.1 (which Jupyter Book 1 loads) fetches Thebe 0.8.2 from a CDN,
hard-wires mybinder.org and calls ``bootstrap()`` without options. This extension
keeps the theme's **Live Code** button but replaces everything behind it:

* **Pinned files, served by the site.** Thebe (``lib/``) and MathJax (``es5/``) are
  copied from ``node_modules`` (exact versions in ``package.json`` and
  ``package-lock.json``) into ``_static/thebe`` and ``_static/mathjax``. A missing
  package fails the build with a message that names it. Set
  ``REC11_NODE_MODULES`` to use a ``node_modules`` folder elsewhere.
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
* **Light pages.** The theme's ``fontawesome.js`` (540 kB gzipped on every page) is
  emptied: the theme's CSS draws the same icons from its webfonts. Those fonts
  (275 kB) are cut down to the icons the site uses (``rec11-icons.css``).
* **Only our script.** sphinx-thebe's script tags, CSS and per-page
  ``x-thebe-config`` are removed from the pages; ``rec11-thebe.js`` (static)
  defines ``initThebe()``, which the theme's button calls, and reads a per-page
  JSON config written here.
* **Accessibility fixes** to the stock theme that axe-core finds
  (``static/rec11-a11y.js``; see tests/browser/test_accessibility.py).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlparse

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ConfigError, ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

SOURCES = ("binder", "jupyter-server")
ENV = {
    "source": "REC11_LIVE_CODE_SOURCE",
    "server_url": "REC11_LIVE_CODE_URL",
    "token": "REC11_LIVE_CODE_TOKEN",
    "hub": "REC11_LIVE_CODE_HUB",
}
DEFAULTS = {"source": "binder", "server_url": "", "token": "", "hub": False}
# npm package -> (folder inside it to copy, a file that must exist there, folder in _static)
PACKAGES = {
    "thebe": ("lib", "index.js", "thebe"),
    "mathjax": ("es5", "tex-chtml.js", "mathjax"),
}
CONFIG_ID = "rec11-live-code-config"
PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the checkout, for an editable install


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


STATIC = str(Path(__file__).parent / "static")


def apply_settings(app: Sphinx, config) -> None:
    config.rec11_live_code = resolve(config.rec11_live_code, os.environ, config.html_theme_options)
    if STATIC not in config.html_static_path:  # rec11-thebe.js (rec11.book.sphinxext may add it too)
        config.html_static_path.append(STATIC)


# --- the npm files ---------------------------------------------------------------------


def node_modules_candidates(srcdir: Path) -> list[Path]:
    found = []
    if os.environ.get("REC11_NODE_MODULES"):
        found.append(Path(os.environ["REC11_NODE_MODULES"]))
    found += [folder / "node_modules" for folder in (srcdir, *srcdir.parents)]
    found.append(PACKAGE_ROOT / "node_modules")
    return list(dict.fromkeys(p.resolve() for p in found))


def find_package(name: str, srcdir: Path) -> Path:
    """The folder of an npm package's files to copy, or a build error naming the package."""
    folder, marker, _ = PACKAGES[name]
    candidates = node_modules_candidates(srcdir)
    for modules in candidates:
        if (modules / name / folder / marker).is_file():
            return modules / name / folder
    looked = ", ".join(str(c) for c in candidates)
    raise ExtensionError(
        f"rec11.book.livecode: the npm package {name!r} is missing ({name}/{folder}/{marker} not found "
        f"in any of: {looked}). Run `npm ci` in the repository root (`make build` does it); the exact "
        "version is pinned in package.json and package-lock.json."
    )


def package_version(name: str, srcdir: Path) -> str:
    meta = find_package(name, srcdir).parent / "package.json"
    return json.loads(meta.read_text())["version"]


def check_packages(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    app.rec11_npm = {name: find_package(name, Path(app.srcdir)) for name in PACKAGES}
    app.rec11_thebe_version = package_version("thebe", Path(app.srcdir))
    mathjax = app.config.mathjax_path or ""
    if mathjax and "://" not in mathjax and not mathjax.startswith("/"):
        rel = Path(mathjax)
        if rel.parts[0] == PACKAGES["mathjax"][2] and not (app.rec11_npm["mathjax"].joinpath(*rel.parts[1:])).is_file():
            raise ConfigError(f"mathjax_path {mathjax!r}: no such file in the mathjax npm package")


def _skip(folder: str, names: list[str]) -> set[str]:
    # source maps and type declarations are for developers, not for readers
    return {n for n in names if n.endswith(".map") or n == "types"}


FONTAWESOME_JS = "scripts/fontawesome.js"
FONTAWESOME_STUB = """\
/* Emptied by rec11.book.livecode to keep pages light (1.5 MB, 540 kB gzipped, on every
   page). pydata-sphinx-theme's fontawesome.js only redraws the <i class="fa-..."> icons
   as inline SVG; the theme's CSS already draws the same icons from the Font Awesome
   webfonts (cut down to the icons in use: rec11-icons.css). */
"""


# The theme's Font Awesome webfonts hold some 2,000 icons (275 kB on every page); the
# site shows a few dozen. Each is cut down to the icons the built pages, scripts and
# styles use, and declared again after the theme's CSS, so the small copy is the one
# browsers download (the last @font-face with the same descriptors wins).
ICON_FONTS = {  # the theme's font file (its TrueType copy; reading woff2 needs brotli)
    "fa-solid-900": ("Font Awesome 6 Free", 900),
    "fa-regular-400": ("Font Awesome 6 Free", 400),
    "fa-brands-400": ("Font Awesome 6 Brands", 400),
}
ICONS_CSS = "rec11-icons.css"
_FA_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+::?before\s*,?\s*)+)\{\s*content\s*:\s*"(\\[0-9a-fA-F]{4}|[\ue000-\uf8ff])"\s*\}')
_GLYPH = re.compile(r"\\([ef][0-9a-fA-F]{3})(?![0-9a-fA-F])|([\ue000-\uf8ff])")
_FA_CLASS = re.compile(r"\bfa-([a-z0-9-]+)")


def _codepoint(text: str) -> int:
    return int(text[1:], 16) if text.startswith("\\") else ord(text)


def icon_codepoints(html_root: Path) -> set[int]:
    """Every icon-font codepoint the site can show: by class name in pages and scripts, or in CSS."""
    static = html_root / "_static"
    ours = {static / PACKAGES[name][2] for name in PACKAGES}

    def files(pattern):
        return [f for f in static.rglob(pattern) if not any(d in f.parents for d in ours)]

    classes, used = {}, set()
    for css in files("*.css"):
        text = css.read_text(errors="ignore")
        for selectors, glyph in _FA_RULE.findall(text):
            for name in re.findall(r"\.fa-([a-z0-9-]+)", selectors):
                classes[name] = _codepoint(glyph)
        for escaped, literal in _GLYPH.findall(_FA_RULE.sub("", text)):
            used.add(int(escaped, 16) if escaped else ord(literal))
    names = set()
    for path in [*html_root.rglob("*.html"), *files("*.js")]:
        names.update(_FA_CLASS.findall(path.read_text(errors="ignore")))
    return used | {classes[n] for n in names if n in classes}


def subset_icon_fonts(html_root: Path) -> list[str]:
    """Write the cut-down fonts and their @font-face rules; return what was written."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    static = html_root / "_static"
    webfonts = static / "vendor" / "fontawesome" / "webfonts"
    codepoints = icon_codepoints(html_root) if webfonts.is_dir() else set()
    # The same icons as the last build: its fonts stand (a prose edit rebuilds no font).
    stamp = static / "rec11-icons" / ".codepoints"
    key = ",".join(f"{c:x}" for c in sorted(codepoints))
    if codepoints and stamp.is_file() and stamp.read_text() == key and (static / ICONS_CSS).is_file():
        return []
    rules, written = [], []
    for name, (family, weight) in ICON_FONTS.items():
        source = webfonts / f"{name}.ttf"
        if not codepoints or not source.is_file():
            continue
        font = TTFont(source)
        options = subset.Options()
        options.flavor = "woff"
        options.notdef_outline = True
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codepoints)
        subsetter.subset(font)
        target = static / "rec11-icons" / f"{name}.woff"
        target.parent.mkdir(exist_ok=True)
        font.flavor = "woff"
        font.save(target)
        rules.append(f'@font-face {{ font-family: "{family}"; font-style: normal; font-weight: {weight}; '
                     f'font-display: block; src: url("rec11-icons/{name}.woff") format("woff"); }}')
        written.append(f"{name} ({target.stat().st_size // 1000} kB)")
    header = "/* Written by rec11.book.livecode: the theme's icon fonts, cut down to the icons this site uses. */\n"
    (static / ICONS_CSS).write_text(header + "\n".join(rules) + "\n")
    if written:
        stamp.write_text(key)
    return written


def copy_packages(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for name, source in app.rec11_npm.items():
        target = static / PACKAGES[name][2]
        # Copied once per version: a rebuild after a prose edit skips the 500 files again.
        stamp = target / ".rec11-npm"
        copied = f"{name} {package_version(name, Path(app.srcdir))} {source}"
        if stamp.is_file() and stamp.read_text() == copied:
            continue
        shutil.copytree(source, target, ignore=_skip, dirs_exist_ok=True)
        stamp.write_text(copied)
    logger.info("rec11: copied %s into _static", ", ".join(f"{n} ({p})" for n, p in app.rec11_npm.items()))
    fontawesome = static / FONTAWESOME_JS
    if fontawesome.is_file():
        fontawesome.write_text(FONTAWESOME_STUB)
        fontawesome.with_name(fontawesome.name + ".map").unlink(missing_ok=True)
    fonts = subset_icon_fonts(Path(app.outdir))
    if fonts:
        logger.info("rec11: icon fonts cut down to the icons in use: %s", ", ".join(fonts))


# --- the pages -------------------------------------------------------------------------


def _is_sphinx_thebe_js(js) -> bool:
    filename = str(getattr(js, "filename", "") or "")
    body = str(getattr(js, "attributes", {}).get("body", ""))
    return filename.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body


def _is_sphinx_thebe_css(css) -> bool:
    return str(getattr(css, "filename", "") or "").endswith("sphinx-thebe.css")


def drop_sphinx_thebe_config(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Remove the ``x-thebe-config`` and ``kernelName`` scripts sphinx-thebe appends."""
    for raw in list(doctree.findall(nodes.raw)):
        text = raw.astext()
        if "text/x-thebe-config" in text or text.strip().startswith("<script>kernelName"):
            raw.parent.remove(raw)


def kernel_name(app: Sphinx, docname: str) -> str:
    spec = app.env.metadata.get(docname, {}).get("kernelspec") or {}
    if isinstance(spec, str):
        spec = json.loads(spec)
    return spec.get("name") or "python3"


def source_config(settings: dict) -> dict:
    """The kernel-source part of a page's live-code JSON (what rec11-thebe.js reads)."""
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
        **source_config(app.config.rec11_live_code),
        "thebeVersion": app.rec11_thebe_version,
        "thebeJs": pathto("_static/thebe/index.js", 1),
        "thebeCss": pathto("_static/thebe/thebe.css", 1),
        "kernel": {"kernelName": kernel_name(app, pagename), "path": notebook},
    }


def update_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if scripts is not None:
        scripts[:] = [js for js in scripts if not _is_sphinx_thebe_js(js)]
    styles = context.get("css_files")
    if styles is not None:
        styles[:] = [css for css in styles if not _is_sphinx_thebe_css(css)]
    if doctree is None or not context.get("use_thebe"):
        return
    body = json.dumps(page_config(app, pagename, context["pathto"]), sort_keys=True).replace("</", "<\\/")
    app.add_js_file(None, body=body, type="application/json", id=CONFIG_ID)


def setup(app: Sphinx) -> dict:
    app.add_config_value("rec11_live_code", dict(DEFAULTS), "html", types=[dict])
    app.connect("config-inited", apply_settings)
    app.connect("builder-inited", check_packages)
    app.connect("doctree-resolved", drop_sphinx_thebe_config, priority=900)
    # after sphinx-book-theme's launch buttons (priority 500) have set `use_thebe`
    app.connect("html-page-context", update_page, priority=900)
    app.connect("build-finished", copy_packages)
    app.add_js_file("rec11-thebe.js", defer="defer")
    app.add_js_file("rec11-a11y.js", defer="defer")
    app.add_css_file(ICONS_CSS, priority=900)  # after the theme's CSS: its @font-face rules win
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
