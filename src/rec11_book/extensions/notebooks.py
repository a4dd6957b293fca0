"""The notebooks readers download: each page as it ran, with its outputs.

The theme's download menu offers ``_sources/<page>.ipynb``, a copy of the notebook
myst-nb writes to ``jupyter_execute/``. For a page taken from jupyter-cache that
notebook has no outputs at all (myst-nb merges the cached outputs into a copy it
renders, after writing the file). So, once the build has finished, this extension
writes every download again:

* the outputs come from the jupyter-cache record that matches the page, which is
  exactly what the page rendered (``executed_notebooks``; the figure export reads
  the same);
* the build's own bookkeeping goes: the dependency fingerprint that
  ``rec11_book.extensions.fingerprints`` puts in the kernelspec, the glue records
  (outputs only the book's text reads), myst-nb's source map;
* each figure keeps one image format, PNG: JupyterLab shows it whether or not the
  notebook is trusted, and it is the lighter one;
* the markdown is plain Markdown that reads as the page does in any notebook tool
  (``rec11_book.shared.plainmd``): glued numbers and course facts filled in, links to the
  published pages, no MyST markup and no instructor notes;
* a cell the page hides or removes keeps its code, collapsed (the notebook must still
  run top to bottom);
* a page with worked answers (``{solution}``, ``{solution-start}``) becomes a worksheet
  and an answers notebook beside it, ``<page>-solutions.ipynb``. The worksheet leaves the
  answers out, text and code: a folded cell shows in Colab and VS Code, which honour no
  ``source_hidden``. Its cells keep no outputs, since a check's saved verdict names the
  bugs the reader is asked to find; a last cell links to the answers. The answers
  notebook is the page as it ran, each answer under a heading and its code run;
* a first cell installs the course package where it is missing (Colab, a fresh
  virtual environment): ``rec11`` at the commit the site was built from, its
  dependencies at the versions the build ran with, and torch's CPU build. It installs nothing where
  ``rec11`` is already importable (Binder, the course hub, a clone).

A cell that cannot be converted fails the build with the page and its line. The
deploy publishes the downloads to the ``notebooks`` branch, which the pages' "Colab"
launch link opens.

Sphinx-side: imports no torch and no model code.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path
from typing import ClassVar

import nbformat
from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from rec11.explore import MIME as EXPLORABLE
from rec11_book.compat.book_theme import add_launch_link, notebook_download, offers_notebook
from rec11_book.compat.jupyter_cache import cache_records
from rec11_book.compat.myst_nb import default_cache_folder, glue_file, kernels_inherit, output_folder_name
from rec11_book.shared import execution, figures, plainmd
from rec11_book.shared.execution import built_commit
from rec11_book.shared.figures import STAGED, figures_in, stage
from rec11_book.shared.pagefacts import uses_trained_models
from rec11_book.shared.pages import (
    AGENDA_MARKDOWN,
    FINGERPRINT_KEY,
    QUIET_TRAINING,
    Memo,
    build_failed,
    digest,
    package_dir,
)
from rec11_book.shared.plainmd import has_answers

logger = logging.getLogger(__name__)

GLUE_RECORD = "application/papermill.record/"
BUILD_METADATA = ("source_map", "jupytext")  # myst-nb's line map; the .md pairing
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
COLAB = "https://colab.research.google.com/github"
NOTEBOOKS_BRANCH = "notebooks"  # where the deploy publishes the downloads
SOLUTIONS = "-solutions"  # a page's answers notebook: <page>-solutions.ipynb, beside its own
REMOVED = {"remove-cell", "remove-input"}  # code the page never shows
HIDDEN_SOURCE = REMOVED | {"hide-cell", "hide-input"}
HIDDEN_OUTPUT = {"remove-output", "hide-output"}
# What rec11.cache reads to keep its training messages off the pages: they are for
# readers running a download, and a page shows the same outputs however warm the cache.


class Executed:
    """One executed page: the notebook myst-nb wrote, with the execution cache's outputs merged
    in when it is first asked for (``notebook``: reading a cache record is most of the cost).
    ``key`` says what that notebook is made from without reading the cache: the file myst-nb
    wrote and the cache's records (each run of a page adds a record of its own)."""

    def __init__(self, path: Path, cache, records: str):
        self.path, self._cache, self._records = path, cache, records

    @functools.cached_property
    def key(self) -> str:
        return digest(self.path.read_bytes(), self._records)

    @functools.cached_property
    def notebook(self):
        nb = nbformat.read(self.path, as_version=4)
        if self._cache is not None:
            try:
                _, nb = self._cache.merge_match_into_notebook(nb)
            except KeyError:
                pass
        return nb


def record_list(cache_path: Path) -> str:
    """The execution cache's records, (id, page) each, as one string: each run of a page is a
    record of its own (a new id); matching one updates its access time only."""
    return json.dumps(sorted((pk, uri) for pk, uri, _ in cache_records(cache_path))) if cache_path.is_dir() else ""


def executed_pages(build: Path, cache_path: Path | None = None,
                   records: str | None = None) -> list[tuple[Path, Executed]]:
    """(page path relative to the book, ``Executed``) for every executed page (``records``:
    ``record_list`` of the cache, when the caller has it already).

    ``build`` is the ``_build`` folder; ``cache_path`` the execution cache, as the book's
    ``_config.yml`` places it (``shared.execution.cache_path``; default ``build/.jupyter_cache``).
    A page with no matching cache record (a build with execution off) is read as myst-nb wrote it.
    """
    from jupyter_cache import get_cache

    cache_path = cache_path or default_cache_folder(build)
    cache = get_cache(cache_path) if cache_path.is_dir() else None
    records = (record_list(cache_path) if records is None else records) if cache else ""
    executed = build / output_folder_name()
    return [(path.relative_to(executed).with_suffix(".md"), Executed(path, cache, records))
            for path in sorted(executed.rglob("*.ipynb"))]


def executed_notebooks(build: Path, cache_path: Path | None = None):
    """(page path relative to the book, notebook with outputs) for every executed page."""
    for relative, page in executed_pages(build, cache_path):
        yield relative, page.notebook


class GlueValues:
    """Glued values of every page, read from myst-nb's ``<page>.glue.json`` files.

    A key is ``name`` (the page's own) or ``path/page.md::name`` (another page's,
    its path relative to this page's folder, as myst-nb reads it).
    """

    def __init__(self, executed: Path, page: Path):
        self.executed, self.page, self.pages = executed, page, {}

    def _page(self, page: Path) -> dict:
        if page not in self.pages:
            path = glue_file(self.executed, page)
            self.pages[page] = json.loads(path.read_text()) if path.is_file() else {}
        return self.pages[page]

    def __call__(self, key: str) -> dict:
        page, _, name = key.rpartition("::")
        glued = self._page(self.page.parent / page if page else self.page)
        return glued.get(name, {}).get("data", {})


class DownloadError(Exception):
    """Markup a download cannot carry: each message starts with the page's file and line."""


class _SelfChecks(ast.NodeTransformer):
    """Takes the page's own checks out of a cell it removes: ``assert``s, ``claim(...)`` and
    ``glue(...)`` calls. They check the page as it was built; in a reader's copy they would
    stop "Run All" after the reader's first edit, name the mistakes an exercise asks for,
    and read values the reader may have changed (glued values are already in the text)."""

    CALLS: ClassVar[set[str]] = {"claim", "glue"}

    def visit_Assert(self, node):
        return None

    def visit_Expr(self, node):
        call = node.value
        if isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) in self.CALLS:
            return None
        return node

    def generic_visit(self, node):
        super().generic_visit(node)
        if getattr(node, "body", None) == []:  # a loop or branch whose every line was a check
            node.body = [ast.Pass()]
        return node


def without_self_checks(source: str) -> str:
    """``source`` without the page's own checks; "" if nothing else is left."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    tree = _SelfChecks().visit(tree)
    if all(isinstance(node, ast.Pass) or (isinstance(node, (ast.For, ast.While, ast.If, ast.With))
                                          and all(isinstance(n, ast.Pass) for n in node.body))
           for node in tree.body):
        return ""
    return ast.unparse(tree)


def for_download(nb, context: plainmd.Context | None = None, install: str | None = None,
                 page: list[str] = (), answers: bool = False):
    """A copy of an executed page's notebook, fit to hand to a reader.

    ``context`` converts the markdown (default: a page with no links or glue);
    ``install``, if given, is the source of a first code cell; ``page`` is the lines of
    the page's file, for the line numbers of problems. ``answers`` asks for the page's
    answers notebook; without it, a page with worked answers becomes a worksheet.
    """
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # a deep copy
    context = context or plainmd.Context(docname="page", site="")
    context.answers = answers
    worksheet = not answers and any(has_answers(c.source) for c in nb.cells if c.cell_type == "markdown")
    starts = nb.metadata.get("source_map") or []
    kept = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            # myst-nb maps a cell to the line where it starts; its text starts at the first non-blank one
            first = starts[index] if index < len(starts) else 0
            while first < len(page) and not page[first].strip():
                first += 1
            cell.source = plainmd.convert(cell.source, context, first + 1)
            if cell.source.strip():
                kept.append(cell)
            continue
        if cell.cell_type != "code":
            kept.append(cell)
            continue
        if context.solution and not answers:
            continue  # a worked answer's code: in the answers notebook
        tags = set(cell.metadata.get("tags", []))
        if "remove-cell" in tags:  # the page's own checks: not the reader's to run
            cell.source = without_self_checks(cell.source)
            cell.outputs = []
            if not cell.source.strip():
                continue
        kept.append(cell)
        if tags & HIDDEN_SOURCE:
            cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
        if worksheet:
            cell.outputs = []  # a saved verdict names the bugs; the reader's own shows unfolded
            continue
        if tags & HIDDEN_OUTPUT:
            cell.metadata.setdefault("jupyter", {})["outputs_hidden"] = True
        cell.outputs = _shown_outputs(cell)
    if worksheet:
        kept.append(nbformat.v4.new_markdown_cell(_answers_elsewhere(context)))
    if answers:
        kept.insert(0, nbformat.v4.new_markdown_cell(_answers_here(context)))
    if install:
        kept.insert(0, nbformat.v4.new_code_cell(install))
    nb.cells = kept
    for key in BUILD_METADATA:
        nb.metadata.pop(key, None)
    nb.metadata.get("kernelspec", {}).pop(FINGERPRINT_KEY, None)
    nb.nbformat_minor = max(nb.nbformat_minor, 5)  # 4.5: every cell has an id
    for number, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{number}"
    nbformat.validate(nb)
    return nb


def _shown_outputs(cell) -> list:
    """A cell's outputs as a notebook shows them: no glue records (the text has the
    values), one image format per figure."""
    outputs = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if any(kind.startswith(GLUE_RECORD) for kind in data):
            continue
        data.pop(EXPLORABLE, None)  # a notebook shows the default frame's PNG
        if "image/png" in data:
            data.pop("image/svg+xml", None)
        outputs.append(output)
    return outputs


def _answers_elsewhere(context: plainmd.Context) -> str:
    """The worksheet's last cell: where its answers are, once the reader has tried."""
    where = f"[{context.docname.rsplit('/', 1)[-1]}{SOLUTIONS}.ipynb]({context.solutions_url})"
    if context.solutions_colab:
        where += f" ([open it in Colab]({context.solutions_colab}))"
    return ("## Answers\n\n"
            f"The worked answers to these exercises, with their code run, are in a notebook of their own: "
            f"{where}. Try each exercise, and its check, before you read its answer.")


def _answers_here(context: plainmd.Context) -> str:
    """The answers notebook's first words: what it is, and where to work the exercises."""
    page = plainmd.page_url(context, context.docname)
    own = f"{context.site}{notebook_download(context.docname)}"
    return (f"**Worked answers.** This notebook is [the page]({page}) with each answer shown after its "
            f"exercise and its code run. To work the exercises yourself, start from "
            f"[the page's own notebook]({own}).")


def markdown_download(nb, context: plainmd.Context, source: Path) -> str:
    """A page's ``.md`` download: plain Markdown that reads as the page does.

    ``nb`` is the page's notebook download (its markdown already plain; for a page with
    worked answers, the worksheet), or None for a page without code. The code the page
    shows stays, as Python blocks; the install cell and the cells the page removes go.
    """
    if nb is None:
        text = source.read_text()
        front = re.match(r"---\n.*?\n---\n", text, re.S)
        first = text.count("\n", 0, front.end()) + 1 if front else 1
        return plainmd.convert(text[front.end() if front else 0:], context, first) + "\n"
    parts = []
    for cell in nb.cells[1:]:  # after the install cell
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        elif cell.cell_type == "code" and not set(cell.metadata.get("tags", [])) & REMOVED:
            parts.append(f"```python\n{cell.source}\n```")
    return "\n\n".join(parts) + "\n"


@functools.lru_cache(maxsize=1)
def pins() -> list[str]:
    """The course package's runtime dependencies, at the versions this build runs with
    (``requirements.txt`` pins them for the book's own environment). Read once per process:
    the installed packages do not change during a build."""
    from importlib.metadata import PackageNotFoundError, metadata, requires, version

    try:
        needs = requires("rec11") or []
    except PackageNotFoundError:
        raise DownloadError("rec11 is not installed: the install cell pins its dependencies") from None
    names = [re.split(r"[<>=!~ \[;]", dep, maxsplit=1)[0] for dep in needs if "extra ==" not in dep]
    return [f"{metadata(name)['Name']}=={version(name)}" for name in names]


def install_cell(repository: str, commit: str, packages: list[str], trains: bool, source: str = "") -> str:
    """The first cell of a download: install ``rec11`` and its pins where it is missing.

    ``source`` is ``rec11_package_source`` from ``_config.yml``: where pip gets ``rec11`` when
    the book does not hold it (a book started by ``rec11_book.commands.newbook``); by default
    the book's own repository at the commit the site is built from.
    """
    # the course package alone: its project is src/ (the repository's root is the book's build)
    course = f"rec11 @ {source}" if source else f"rec11 @ git+{repository}@{commit}#subdirectory=src"
    built_from = "from the source named below" if source else f"commit {commit[:7]}"
    requirements = ",\n".join(f'        "{r}"' for r in [course, *packages])
    lines = [
        "# Run this cell first. Where the course package rec11 is missing (Colab, a fresh",
        f"# virtual environment) it installs rec11 as this book was built ({built_from}),",
        "# with the versions the book was built with and torch's CPU build (about 200 MB).",
        "# On Binder, the course hub or in a clone of the book it installs nothing.",
    ]
    if trains:
        lines += [
            "# Some cells train small models on this computer's CPU the first time they run:",
            "# such a cell says so, and how long it took. Later runs load the models from the",
            "# model cache (~/.cache/rec11).",
        ]
    lines += [
        "import importlib.util",
        "import subprocess",
        "import sys",
        "",
        'if importlib.util.find_spec("rec11") is None:',
        '    print("Installing rec11, torch and what they need (once) ...", flush=True)',
        "    subprocess.run([",
        '        sys.executable, "-m", "pip", "install", "--quiet",',
        f'        "--extra-index-url", "{TORCH_INDEX}",',
        f"{requirements},",
        "    ], check=True)",
        "    importlib.invalidate_caches()  # so that the imports below find what was just installed",
    ]
    return "\n".join(lines)


def site_url(config) -> str:
    """The published book: ``html_baseurl`` if set, else GitHub Pages for the repository."""
    if config.html_baseurl:
        return config.html_baseurl.rstrip("/") + "/"
    org, repo = _github(config)
    return f"https://{org.lower()}.github.io/{repo}/"


def _github(config) -> tuple[str, str]:
    url = (config.html_theme_options.get("repository_url") or "").rstrip("/").removesuffix(".git")
    if "github.com/" not in url:
        raise DownloadError(f"_config.yml: repository.url must be a GitHub repository, got {url!r}")
    org, _, repo = url.split("github.com/", 1)[1].partition("/")
    return org, repo


def colab_url(config, pagename: str) -> str:
    """Colab's link to a page's download on the ``notebooks`` branch."""
    org, repo = _github(config)
    book = (config.html_theme_options.get("path_to_docs") or "").strip("/")
    path = "/".join(p for p in (book, f"{pagename}.ipynb") if p)
    return f"{COLAB}/{org}/{repo}/blob/{NOTEBOOKS_BRANCH}/{path}"


def page_context(app, docname: str, glue, problems: list[str]) -> plainmd.Context:
    labels = {name: (doc, anchor) for name, (doc, anchor, _) in
              app.env.domaindata.get("std", {}).get("labels", {}).items()}
    source = Path(app.env.doc2path(docname))
    where = source.relative_to(Path(app.srcdir)).as_posix()
    site = site_url(app.config)
    answered = has_answers(source.read_text())
    return plainmd.Context(
        docname=docname, site=site, labels=labels, facts=app.config.myst_substitutions,
        glue=glue, agenda=lambda doc, slides: app.emit_firstresult(AGENDA_MARKDOWN, doc, slides, site),
        handout=app.config.myst_substitutions.get("handout", ""), book=Path(app.srcdir),
        warn=lambda line, message: problems.append(f"{where}:{line}: {message}"),
        solutions_url=f"{site}{notebook_download(docname + SOLUTIONS)}" if answered else "",
        solutions_colab=colab_url(app.config, docname + SOLUTIONS) if answered else "")


def write_downloads(app) -> list[Path]:
    """Rewrite each ``_sources/<page>.ipynb`` download the theme offers, and each
    ``_sources/<page>.md`` as plain Markdown; write ``_sources/<page>-solutions.ipynb``
    beside a page with worked answers. Returns every download. A page whose downloads were made from
    the same inputs at the last build, and are still as written then, is left as it is
    (``page_inputs``: a prose edit rewrites the edited page's downloads, not every page's)."""
    html = Path(app.outdir)
    build = html.parent
    root = Path(app.srcdir)
    repository = (app.config.html_theme_options.get("repository_url") or "").rstrip("/")
    commit = built_commit(root, app.config.html_theme_options.get("repository_branch") or "main")
    packages = pins()
    problems, notebooks = [], {}
    executed = build / output_folder_name()
    memo, book_wide = Memo(Path(app.doctreedir), "download-pages"), book_inputs(app, executed)
    inputs, files, kept = {}, {}, set()
    for relative, page in app.rec11_executed:  # found by check_figures, earlier in build-finished
        docname = relative.with_suffix("").as_posix()
        target = html / notebook_download(docname)
        if not target.is_file():  # the theme offers no download for this page
            continue
        inputs[docname] = page_inputs(app, docname, book_wide, page.key)
        if memo.unchanged(docname, inputs[docname]) is not None:
            kept.add(docname)
            continue
        nb = page.notebook
        context = page_context(app, docname, GlueValues(executed, relative), problems)
        install = install_cell(repository, commit, packages, uses_trained_models(app, docname),
                               app.config.rec11_package_source)
        lines = Path(app.env.doc2path(docname)).read_text().split("\n")
        download = for_download(nb, context, install, lines)
        nbformat.write(download, target)
        files[docname] = [target]
        notebooks[docname] = download
        if context.solutions_url:  # the page has worked answers: they go beside it
            context = page_context(app, docname, GlueValues(executed, relative), problems)
            solutions = target.with_name(f"{target.stem}{SOLUTIONS}.ipynb")
            nbformat.write(for_download(nb, context, install, lines, answers=True), solutions)
            files[docname].append(solutions)
    for docname in sorted(app.env.found_docs):
        source = Path(app.env.doc2path(docname))
        target = html / "_sources" / f"{docname}{source.suffix}{app.config.html_sourcelink_suffix}"
        if docname in kept or not (target.is_file() and source.suffix == ".md"):
            continue
        if docname not in inputs:  # a page without code: its Markdown alone
            inputs[docname] = page_inputs(app, docname, book_wide, "")
            if memo.unchanged(docname, inputs[docname]) is not None:
                continue
        context = page_context(app, docname, GlueValues(executed, Path(f"{docname}.md")), problems)
        target.write_text(markdown_download(notebooks.get(docname), context, source))
        files.setdefault(docname, []).append(target)
    if problems:
        # dict.fromkeys: an answers download is converted twice, so its problems come twice
        raise DownloadError("the notebook downloads:\n" + "\n".join(dict.fromkeys(problems)))
    for docname, made in files.items():
        memo.record(docname, inputs[docname], made)
    memo.save()
    # every download of the book, the ones left as they were included
    return [Path(f) for docname in inputs for f in memo.kept.get(docname, {}).get("files", {})]


def book_inputs(app, executed: Path) -> str:
    """What every page's downloads read besides the page: the code that makes them, the pins,
    the commit and the settings of the install cell and the links, every page's glued values
    (a page may show another's) and the labels a link can point to."""
    from importlib.metadata import version

    code = [Path(m.__file__).read_bytes() for m in (plainmd, execution)] + [Path(__file__).read_bytes()]
    root = Path(app.srcdir)
    labels = sorted((name, doc, anchor) for name, (doc, anchor, _) in
                    app.env.domaindata.get("std", {}).get("labels", {}).items())
    glued = [(p.relative_to(executed).as_posix(), p.read_bytes()) for p in sorted(executed.rglob("*.glue.json"))]
    return digest(*code, version("nbformat"), pins(), built_commit(root, "main"), app.config.rec11_package_source,
                  sorted(app.config.myst_substitutions.items()), app.config.html_baseurl,
                  app.config.html_sourcelink_suffix,
                  [app.config.html_theme_options.get(k) for k in ("repository_url", "repository_branch",
                                                                  "path_to_docs")],
                  labels, glued)


def page_inputs(app, docname: str, book_wide: str, notebook: str) -> str:
    """What one page's downloads are made from: the book-wide inputs, the page, its executed
    notebook (``Executed.key``: what myst-nb wrote and the cache records its outputs come
    from), the code it imports, and, for a page that shows the agenda, every page (the agenda
    lists their reading times)."""
    text = Path(app.env.doc2path(docname)).read_text()
    # the code the page imports, whose hash is kept per state of the package: whether the page
    # trains a model (the install cell says so) follows from it and the page's text
    modules = execution.page_modules_kept(Path(app.srcdir), text)
    code = execution.package_hash(Path(app.srcdir), modules, package_dir(app)) if modules else ""
    parts = [book_wide, docname, text, notebook, code]
    if "{agenda}" in text:
        parts += [Path(app.env.doc2path(d)).read_bytes() for d in sorted(app.env.found_docs)]
    return digest(*parts)


def check_figures(app, exception) -> None:
    """Read the executed notebooks once (the downloads reuse them), check every figure they
    draw, and stage the figures for ``figures/`` (``rec11_book.shared.figures``). A figure problem is a
    warning at the page's line, raised before the session plan is put back and the deck
    written, so that both see a failed build."""
    app.rec11_executed = None
    app.rec11_downloads_inputs = None
    if exception is not None or app.builder.format != "html":
        return
    build = Path(app.outdir).parent
    cache = execution.cache_path(Path(app.srcdir), build.parent)
    # a build that changed none of what the figures and the downloads are made from redoes neither
    records = record_list(cache)
    inputs = downloads_inputs(app, build, records)
    memo = Memo(Path(app.doctreedir), DOWNLOADS)
    if not build_failed(app, exception) and memo.unchanged(DOWNLOADS, inputs) is not None:
        logger.info("rec11: figures and downloads as the last build wrote them (no page, output or setting changed)")
        app.rec11_executed = []
        return
    app.rec11_downloads_inputs = inputs
    app.rec11_executed = executed_pages(build, cache, records)
    # a page whose notebook is as it was when its figures were last staged is not read again
    memo, code = Memo(Path(app.doctreedir), FIGURES), Path(figures.__file__).read_bytes()
    keys, kept, seen = {}, {}, {}
    for relative, page in app.rec11_executed:
        keys[relative] = digest(page.key, code)
        earlier = memo.unchanged(relative.as_posix(), keys[relative])
        if earlier is not None:
            kept[relative] = earlier["figures"]
            seen.update(earlier["figures"])
    read = [(relative, page.notebook) for relative, page in app.rec11_executed if relative not in kept]
    found, problems = figures_in(read, Path(app.srcdir), seen)
    for relative, line, message in problems:
        docname = relative.with_suffix("").as_posix()
        logger.warning(message, location=(docname, line) if line else docname, type="rec11", subtype="figures")
    if problems or build_failed(app, exception):
        return
    staged = stage(found, build, keep=[name for names in kept.values() for name in names])
    for relative, _ in read:
        names = {f.name: f.where for f in found if f.page == relative}
        files = [staged[f"{name}{suffix}"] for name in names for suffix in (".png", ".svg")]
        memo.record(relative.as_posix(), keys[relative], files, {"figures": names})
    memo.save()


DOWNLOADS = "downloads"  # the memo of the figures staged and the downloads written (shared.pages.Memo)
FIGURES = "figures"  # the memo of each page's staged figures


def downloads_inputs(app, build: Path, records: str) -> str:
    """What the staged figures and the downloads are made from: the pages, what myst-nb wrote
    for them (notebooks, glued values), the execution cache's records (a page that ran again has
    new outputs), the settings and pins the install cell and the links read, and the code that
    makes them (what every page's downloads read, ``book_inputs``, and the figures' code)."""
    executed = build / output_folder_name()
    parts = [book_inputs(app, executed), Path(figures.__file__).read_bytes()]
    for docname in sorted(app.env.found_docs):
        parts += [docname, Path(app.env.doc2path(docname)).read_bytes()]
    for path in sorted(executed.rglob("*")):
        if path.suffix in (".ipynb", ".json"):
            parts += [path.relative_to(executed).as_posix(), path.read_bytes()]
    parts.append(records)  # the execution cache's (record_list)
    return digest(*parts)


def on_build_finished(app, exception) -> None:
    if exception is None and app.builder.format == "html" and app.rec11_downloads_inputs is not None:
        written = write_downloads(app)
        build = Path(app.outdir).parent
        staged = sorted((build / STAGED).iterdir()) if (build / STAGED).is_dir() else []
        memo = Memo(Path(app.doctreedir), DOWNLOADS)
        if build_failed(app, exception):
            memo.forget(DOWNLOADS)
        else:
            memo.record(DOWNLOADS, app.rec11_downloads_inputs, [*written, *staged])
        memo.save()


def add_colab_link(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """A "Colab" entry in the theme's launch menu of every page with a download."""
    if not offers_notebook(context):
        return
    add_launch_link(context, {
        "type": "link", "text": "Colab", "tooltip": "Open this page's notebook in Colab",
        "icon": None, "url": colab_url(app.config, pagename), "label": "colab-button"})


class SolutionsLink(SphinxRole):
    """``{solutions-notebook}`text``` links to the page's answers notebook, which the
    build writes beside the page's download once it has finished. A page with no worked
    answers gets none, so there the role is an error, not a link to nothing."""

    def run(self):
        if not has_answers(Path(self.env.doc2path(self.env.docname)).read_text()):
            message = self.inliner.reporter.error(
                "the {solutions-notebook} role links to the page's worked answers, and this page has none",
                line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, message)], [message]
        uri = "../" * self.env.docname.count("/") + notebook_download(self.env.docname + SOLUTIONS)
        return [nodes.reference(self.rawtext, self.text, refuri=uri, classes=["rec11-solutions-link"])], []


def setup(app) -> dict:
    kernels_inherit(QUIET_TRAINING, "1")
    # where a download's install cell gets rec11, for a book that does not hold it (install_cell)
    app.add_config_value("rec11_package_source", "", "env")
    app.add_role("solutions-notebook", SolutionsLink())
    # before rec11_book.extensions.notes puts back the session plan of a failed build (300), and the deck
    app.connect("build-finished", check_figures, priority=250)
    app.connect("build-finished", on_build_finished)
    app.connect("html-page-context", add_colab_link, priority=600)  # after the theme's launch menu
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
