"""Math typeset when the book is built: SVG in the page, no math engine in the browser.

Every formula of the book (``$...$``, ``$$...$$``, ``{math}``, amsmath environments and
LaTeX cell outputs) is typeset by the pinned npm ``mathjax`` (3.2.2, the same copy the
site serves) under Node, in **one Node process per build** for every formula that is
new since the last build (``node/tex2svg.js``). The result is kept in the Sphinx
environment, so a prose edit that adds no formula starts no Node at all.

What a page gets, for each formula, in the same ``span.math`` / ``div.math`` Sphinx's
MathJax extension writes:

* an SVG (``aria-hidden``), sized in ``ex`` so nothing reflows. MathJax gives each formula
  its own glyphs; the page keeps one set of them for all its formulas
  (``rec11_book.shared.pages.share_glyphs``), and the slide deck, whose speaker view copies
  formulas one by one, gives each its own again (``own_glyphs``);
* MathJax's **assistive MathML**: a visually hidden ``<math>`` element, which screen
  readers read (as MathJax in the browser would give them);
* ``_static/rec11-math.css``, MathJax's own stylesheet for its SVG output (about 1 kB),
  linked only from pages that have math.

A TeX error (a missing brace, an undefined macro) is a build warning at the page and line
of the formula, naming the TeX; ``-W`` turns it into a failed build.

Live Code outputs that contain LaTeX are typeset in the browser on demand:
``static/rec11-livemath.js`` loads ``_static/mathjax/tex-svg.js`` only when a live
output has TeX in it.

Enable with ``html_math_renderer: rec11`` (in ``_config.yml``, ``sphinx: config:``).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import time
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

from rec11_book.compat.book_theme import live_code_on
from rec11_book.shared.files import find_package, package_version
from rec11_book.shared.pages import filter_pages, keep_per_page, line_of, share_glyphs

logger = logging.getLogger(__name__)

NAME = "rec11"  # html_math_renderer
SCRIPT = Path(__file__).parents[1] / "node" / "tex2svg.js"
CSS = "rec11-math.css"
LIVE_JS = "rec11-livemath.js"  # static/: MathJax on demand for live outputs
ID_PREFIX = re.compile(r'\bMJX-\d+-')  # MathJax numbers each formula's glyph ids per run
PLACEHOLDER = "MJX-@@-"


# --- which TeX each node is typeset from ----------------------------------------------------


def display_tex(node: nodes.math_block) -> str:
    """The TeX of a display formula, as Sphinx's MathJax extension hands it to MathJax."""
    text = node.astext()
    if node.get("nowrap"):
        return text
    parts = [part for part in text.split("\n\n") if part.strip()]
    body = [rf"\begin{{split}}{part}\end{{split}}" if r"\\" in part else part for part in parts]
    if len(body) > 1:
        return r"\begin{align}\begin{aligned}" + r"\\".join(body) + r"\end{aligned}\end{align}"
    return body[0] if body else ""


def formula(node: nodes.Node) -> tuple[str, bool]:
    if isinstance(node, nodes.math_block):
        return display_tex(node), True
    return node.astext(), False


def key(tex: str, display: bool) -> str:
    return ("D:" if display else "I:") + tex


# --- the environment: formulas per page, and what they typeset to ---------------------------


def engine_version(app: Sphinx) -> str:
    """Changes when MathJax or the script changes: the typeset formulas are then redone."""
    version = package_version("mathjax", Path(app.srcdir))
    return hashlib.sha256(SCRIPT.read_bytes() + version.encode()).hexdigest()[:16]


def init_env(app: Sphinx) -> None:
    env = app.env
    engine = engine_version(app) if app.builder.format == "html" else ""
    if getattr(env, "rec11_math_engine", None) != engine or not hasattr(env, "rec11_math_svg"):
        env.rec11_math_svg = {}  # key -> HTML with PLACEHOLDER ids
        env.rec11_math_css = ""
        env.rec11_math_engine = engine


def collect(app: Sphinx, doctree: nodes.document) -> None:
    found = []
    for node in doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block))):
        found.append((key(*formula(node)), line_of(node)))
    app.env.rec11_math[app.env.docname] = found


def merge_info(app, env, docnames, other) -> None:
    env.rec11_math_svg.update(other.rec11_math_svg)


def node_modules_mathjax(app: Sphinx) -> Path:
    return find_package("mathjax", Path(app.srcdir)).parent


def run_node(app: Sphinx, keys: list[str]) -> tuple[str, list[dict]]:
    """Typeset ``keys`` in one Node process; return (stylesheet, one result per key)."""
    formulas = [{"tex": k[2:], "display": k.startswith("D:")} for k in keys]
    try:
        proc = subprocess.run(["node", str(SCRIPT), str(node_modules_mathjax(app))], input=json.dumps(formulas),
                              capture_output=True, text=True, timeout=600, check=False)
    except FileNotFoundError as err:
        raise ExtensionError("rec11_book.extensions.mathsvg: `node` is not on PATH; the book typesets its math with "
                             "Node.js and the npm `mathjax` package at build time") from err
    if proc.returncode != 0:
        raise ExtensionError(f"rec11_book.extensions.mathsvg: {SCRIPT.name} failed:\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout)
    return out["css"], out["results"]


def typeset_new(app: Sphinx, env) -> None:
    """After reading: typeset every formula the site uses and has not typeset yet."""
    if app.builder.format != "html" or getattr(app.builder, "math_renderer_name", None) != NAME:
        return
    used = {k for found in env.rec11_math.values() for k, _ in found}
    for stale in set(env.rec11_math_svg) - used:  # formulas no page uses any more
        del env.rec11_math_svg[stale]
    new = sorted(used - set(env.rec11_math_svg))
    if not new and env.rec11_math_css:
        return
    start = time.perf_counter()
    css, results = run_node(app, new)
    env.rec11_math_css = css
    failed = {}
    for k, result in zip(new, results):
        if "error" in result:
            failed[k] = result["error"]
        else:
            env.rec11_math_svg[k] = ID_PREFIX.sub(PLACEHOLDER, result["html"])
    for docname, found in sorted(env.rec11_math.items()):
        for k, line in found:
            if k in failed:
                logger.warning(f"math: {failed[k]}, in the TeX: {k[2:]}", location=(docname, line),
                               type="rec11", subtype="math")
    logger.info(f"rec11: typeset {len(new) - len(failed)} new formula(s) to SVG in "
                f"{time.perf_counter() - start:.1f} s (one Node process); {len(env.rec11_math_svg)} in all")


# --- writing the pages ----------------------------------------------------------------------


def rendered(self, node: nodes.Node) -> str:
    """The typeset formula (its glyph ids still carry PLACEHOLDER)."""
    tex, display = formula(node)
    html = self.builder.env.rec11_math_svg.get(key(tex, display))
    if html is None:  # only a formula that failed (already a warning) gets here
        return f"<code>{self.encode(tex)}</code>"
    return html  # its glyphs join the page's one set when the whole page is written (share_glyphs)


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(rendered(self, node) + "</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node.get("number") and not node.get("nowrap"):
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(rendered(self, node) + "</div>")
    raise nodes.SkipNode


def share_glyphs_in_pages(app: Sphinx) -> None:
    """Filter every page the HTML builder renders through ``share_glyphs``: one set of glyphs
    per page, not one per formula."""
    if getattr(app.builder, "math_renderer_name", None) != NAME:
        return
    filter_pages(app, "math glyphs", lambda html, context: share_glyphs(html) if PLACEHOLDER in html else html)


def page_assets(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The math stylesheet on pages with math; the on-demand loader on pages with Live Code."""
    if getattr(app.builder, "math_renderer_name", None) != NAME or doctree is None:
        return
    if app.env.rec11_math.get(pagename):
        app.add_css_file(CSS, priority=900)
    if live_code_on(context):  # the theme's launch buttons run first (priority 500)
        app.add_js_file(LIVE_JS, defer="defer")


def write_css(app: Sphinx, exception) -> None:
    if (exception is not None or app.builder.format != "html"
            or getattr(app.builder, "math_renderer_name", None) != NAME):
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    header = ("/* Written by rec11_book.extensions.mathsvg: MathJax's stylesheet for its SVG output "
              "(math typeset at build time). */\n")
    (static / CSS).write_text(header + app.env.rec11_math_css)


def setup(app: Sphinx) -> dict:
    app.setup_extension("rec11_book.extensions.assets")  # serves static/rec11-livemath.js and MathJax
    app.add_html_math_renderer(NAME, (visit_math, None), (visit_displaymath, None))
    keep_per_page(app, "rec11_math")  # docname -> [(key, line)]
    app.connect("builder-inited", init_env)
    app.connect("builder-inited", share_glyphs_in_pages)
    app.connect("doctree-read", collect)
    app.connect("env-merge-info", merge_info)
    app.connect("env-updated", typeset_new)
    app.connect("html-page-context", page_assets, priority=900)
    app.connect("build-finished", write_css)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
