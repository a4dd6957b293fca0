"""What only a rebuild shows, on small books rebuilt inside this process.

Each test builds a small book, changes one thing, and builds it again incrementally,
as an instructor's second ``make build`` or ``make preview`` would; ``build_support``
runs Jupyter Book's own build command in the test's process, so a rebuild costs what
Sphinx does, not a new Python. The pages' cells still run in kernels of their own.

* a going-further page grows: the session plan's ``{agenda}`` and the core page show
  its new time, though the rebuild does not read them again;
* the package changes: exactly the pages that import what changed are executed again,
  the others come from the jupyter cache; an edit that changes nothing that runs
  executes nothing;
* the build's own code changes: every page is written again, from the cache;
* a rebuild that reads one page: every page's notebook download keeps its outputs, and
  the slide deck keeps every page's slides, with the edited page's new words.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from build_support import Build, build, text

pytestmark = [
    pytest.mark.build,
    # Jupyter Book's and its LaTeX extension's own deprecations, now in this process
    pytest.mark.filterwarnings("ignore:'BaseCommand' is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:nodes.Node.traverse:PendingDeprecationWarning"),
]

WORDS = "word " * 20  # 20 words: 6 s at 200 words a minute


def built(book) -> Build:
    """Build the book; fail with the end of its log if the build fails."""
    result = build(book.path)
    assert result.ok, result.tail()
    return result


# ------------------------------------------------------------------ the agenda after another page grows


def test_a_grown_going_further_page_updates_the_agenda_and_its_core_page(mini_book):
    """A plan page with an {agenda}, a core page and its going-further page: the
    going-further page grows, and the rebuild reads it alone. Sphinx writes the core
    page again (a toctree parent of the page read); the plan, a page beside them, is
    written again only because ``reading.rewrite_stale`` asks for it."""
    mini_book.page("index", "# The chapter\n\nSome prose.\n")
    mini_book.page("plan", "# Session plan\n\n```{agenda}\n```\n")
    mini_book.page("core", f"# Core\n\n{WORDS * 10}\n")  # 200 words: 1 min
    mini_book.page("aside", "# Aside\n\nA page the change does not touch.\n")
    (mini_book.path / "book" / "further").mkdir()
    deep = mini_book.page("further/deep", f"# Deep\n\n{WORDS * 10}\n")
    (mini_book.path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/index\nchapters:\n"
        "  - file: book/core\n    sections:\n      - file: book/further/deep\n"
        "  - file: book/aside\n  - file: book/plan\n")
    html = mini_book.path / "_build" / "html" / "book"

    built(mini_book)
    assert "Deep · 1 min" in text(html / "plan.html")
    assert "going further 1 min more" in text(html / "core.html")

    deep.write_text(deep.read_text() + f"\n{WORDS * 50}\n")  # now 1,200 words: 6 min
    rebuilt = built(mini_book)
    assert rebuilt.read == {"book/further/deep"}, "the rebuild read more than the grown page"
    assert "book/aside" not in rebuilt.written, "the rebuild wrote every page: it shows nothing"
    assert "reading time 6 min" in text(html / "further" / "deep.html")
    assert "Deep · 6 min" in text(html / "plan.html"), "the agenda kept the old time"
    assert "going further 6 min more" in text(html / "core.html"), "the core page kept the old time"


# ------------------------------------------------------------------ package edits and the jupyter cache

# Pages that import different modules of the book's copy of the package (rec11_book.
# fingerprints reads ``src/rec11`` beside the book), none of which imports torch, so each
# kernel starts in about a second. Cell options (":tags:" lines, a YAML block) come
# first, as on the real pages. rec11.style imports rec11.seeds: a page depends on the
# modules it imports, and on theirs.
PACKAGE_PAGES = {
    "uses_seeds": ":tags: [hide-input]\nfrom rec11.seeds import shifted\nprint(shifted(1))",
    "uses_style": "---\ntags: [hide-input]\nmystnb:\n  figure:\n    name: none-here\n---\n"
                  "from rec11 import style\nprint(style.HEATMAP)",
    "uses_sources": "import rec11.sources\nprint(rec11.sources.PACKAGE)",
    "plain": "print(6 * 7)",
}


def executed(book) -> set[str]:
    """Rebuild; the pages whose cells ran (each other page read again came from the cache)."""
    result = built(book)
    assert result.executed.isdisjoint(result.cached)
    assert result.read == result.executed | result.cached, "a page was read but neither run nor cached"
    return {docname.removeprefix("book/") for docname in result.executed}


def test_package_edits_re_execute_exactly_the_pages_that_import_them(mini_book):
    for name, code in PACKAGE_PAGES.items():
        mini_book.page(name, f"# {name}\n\nSome prose.\n\n```{{code-cell}} ipython3\n{code}\n```\n")
    mini_book.toc(*PACKAGE_PAGES)
    package = mini_book.path / "src" / "rec11"

    assert executed(mini_book) == set(PACKAGE_PAGES), "a cold build executes every page"
    assert executed(mini_book) == set(), "a no-op rebuild executes nothing"

    page = mini_book.path / "book" / "uses_seeds.md"
    page.write_text(page.read_text().replace("Some prose.", "Some edited prose."))
    assert executed(mini_book) == set(), "a prose edit executes nothing"

    # An edit that changes no behaviour: a comment, a reflowed docstring, a line break.
    seeds = package / "seeds.py"
    source = seeds.read_text()
    docstring = source.split('"""')[1]
    edited = source.replace(docstring, " ".join(docstring.split()).replace(". ", ".\n\n", 1), 1)
    edited = edited.replace("\nimport ", "\n# a comment an instructor added\nimport ", 1) + "\n\n# the end\n"
    assert edited != source
    seeds.write_text(edited)
    assert executed(mini_book) == set(), "comments, docstrings and layout re-execute nothing"

    with (package / "sources.py").open("a") as f:
        f.write("\nEDITED = True\n")
    assert executed(mini_book) == {"uses_sources"}, "a code edit re-executes the pages that import it"

    with seeds.open("a") as f:
        f.write("\nDEFAULT = 1\n")
    assert executed(mini_book) == {"uses_seeds", "uses_style"}, \
        "a code edit re-executes the pages that import it, directly or through another module"

    page = mini_book.path / "book" / "plain.md"
    page.write_text(page.read_text().replace("6 * 7", "7 * 6"))
    assert executed(mini_book) == {"plain"}, "a code edit re-executes its own page only"


def test_an_edit_to_the_build_code_writes_every_page_again(mini_book, tmp_path, monkeypatch):
    """Sphinx reads again only the pages whose own files changed, but every page's HTML comes
    from the book's extensions too: after an edit to them (here to a copy, which the build
    is pointed at) every page is read and written again, from the cache, and none runs."""
    from rec11_book.extensions import assets

    code = tmp_path / "rec11_book"
    shutil.copytree(assets.BUILD_CODE, code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(assets, "BUILD_CODE", code)
    mini_book.page("index", "# Home\n\nSome prose.\n" + cell("print(6 * 7)"))
    mini_book.page("other", "# Other\n\nMore prose.\n")
    mini_book.toc("index", "other")
    built(mini_book)
    assert not built(mini_book).read, "a rebuild with nothing changed read pages again"

    extension = code / "extensions" / "trim.py"
    extension.write_text(extension.read_text() + "\n# an edit to the build's code\n")
    rebuilt = built(mini_book)
    assert rebuilt.read == rebuilt.written == {"book/index", "book/other"}, rebuilt.tail()
    assert rebuilt.executed == set(), "an edit to the build's code ran a page"


# ------------------------------------------------------------------ downloads and the deck after cached builds


def slide(point: str, title: str, block: str, minutes: float) -> str:
    """Slide content, then the instructor note that makes it a slide."""
    return (f"\n:::{{slide}}\n{point}\n:::\n\n:::{{instructor-note}}\n:slide: {title}\n"
            f":minutes: {minutes:g}\n:block: {block}\n\nSay it once.\n:::\n")


def cell(code: str) -> str:
    return f"\n```{{code-cell}} ipython3\n{code}\n```\n"


def download(build_dir, page: str):
    """A page's notebook download, and the text of its outputs."""
    import nbformat

    nb = nbformat.read(build_dir / "html" / "_sources" / "book" / f"{page}.ipynb", as_version=4)
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    return nb, outputs


def test_downloads_and_the_deck_survive_cached_rebuilds(mini_book, tmp_path_factory, monkeypatch):
    """A page's notebook download takes its outputs from the jupyter cache: myst-nb writes
    the notebook of a page it takes from the cache without outputs, and leaves a page it
    does not read again as an earlier build wrote it. The deck is composed from the
    written pages, read again or not."""
    from rec11.chapter import load_substitutions
    from rec11_book.shared.pages import FINGERPRINT_KEY

    facts = load_substitutions(mini_book.path)  # the notes must fill the session's budget
    mini_book.page("index", "# Home\n" + slide("The home point.", "Home", "attention", facts["budget_attention"])
                   + cell('print("home output", 6 * 7)'))
    other = mini_book.page("other", "# Other\n" + "".join(
        slide(f"The {block} point.", block.title(), block, facts[f"budget_{block}"])
        for block in ("generation", "generative", "close"))
        + cell('from rec11.seeds import shifted\nprint("other output", shifted(5))'))
    mini_book.page("third", "# Third\n" + cell('print("third output", 3 * 3)'))
    mini_book.toc("index", "other", "third")
    outputs = {"index": "home output 42", "other": "other output 5", "third": "third output 9"}

    first = built(mini_book)
    assert first.executed == {"book/index", "book/other", "book/third"}, first.tail()

    # A new build folder with only the execution cache, as a CI runner restores it: no page
    # runs, so myst-nb writes every page's notebook without outputs.
    out = tmp_path_factory.mktemp("cached")
    shutil.copytree(mini_book.path / "_build" / ".jupyter_cache", out / "_build" / ".jupyter_cache")
    fresh = build(mini_book.path, out)
    assert fresh.ok, fresh.tail()
    assert fresh.executed == set() and fresh.cached == {"book/index", "book/other", "book/third"}, \
        "a build in a new folder did not take every page from the cache"
    for page, printed in outputs.items():
        nb, shown = download(out / "_build", page)
        assert printed in shown, f"{page}.ipynb lost its outputs in a build that took it from the cache"
        assert "find_spec(\"rec11\")" in nb.cells[0].source, f"{page}.ipynb: the first cell does not install rec11"
        assert FINGERPRINT_KEY not in nb.metadata.kernelspec, f"{page}.ipynb: the fingerprint"
    deck = out / "_build" / "html" / "slides" / "index.html"
    assert "The home point." in text(deck) and "The close point." in text(deck)

    # Edit the words of one slide: the rebuild reads that page alone, from the cache, and
    # writes that page's downloads alone.
    third = out / "_build" / "html" / "_sources" / "book" / "third.ipynb"
    before = third.stat().st_mtime_ns
    other.write_text(other.read_text().replace("The close point.", "The edited point."))
    from rec11_book.extensions import notebooks

    merged, merge = [], notebooks.Executed.notebook.func  # which pages' cache records are read

    def counted(self):
        merged.append(self.path.stem)
        return merge(self)

    monkeypatch.setattr(notebooks.Executed, "notebook", property(counted))
    rebuilt = build(mini_book.path, out)
    monkeypatch.undo()
    assert rebuilt.ok, rebuilt.tail()
    assert rebuilt.read == {"book/other"} and rebuilt.executed == set(), "the rebuild read more than the edited page"
    # the edited page, and the pages whose downloads the theme replaced when Sphinx wrote them again
    rewritten = {"other"} | {docname.removeprefix("book/") for docname in rebuilt.written}
    assert "other" in merged and set(merged) <= rewritten and "third" not in merged, \
        f"the figures' check or the downloads read the notebook of a page they did not need: {merged}"
    assert "book/third" not in rebuilt.written, rebuilt.tail()
    assert third.stat().st_mtime_ns == before, "the download of a page the edit did not touch was written again"
    for page, printed in outputs.items():
        nb, shown = download(out / "_build", page)
        assert printed in shown, f"{page}.ipynb lost its outputs in a rebuild that read one page"
    nb, _ = download(out / "_build", "other")
    assert "The edited point." in "".join(c.source for c in nb.cells), "the download kept the old words"
    assert "The home point." in text(deck), "the deck lost the page the rebuild did not read"
    assert "The edited point." in text(deck) and "The close point." not in text(deck)

    # Nothing changed: the deck, the figures and the downloads are not made again, and stay whole.
    same = build(mini_book.path, out)
    assert same.ok and not same.read, same.tail()
    assert "slides/index.html as the last build wrote it" in same.log, same.tail()
    assert "figures and downloads as the last build wrote them" in same.log, same.tail()
    for page, printed in outputs.items():
        assert printed in download(out / "_build", page)[1]
    # A download overwritten since (as the theme does when it writes a page again) is written again.
    target = out / "_build" / "html" / "_sources" / "book" / "index.ipynb"
    target.write_text("{}")
    again = build(mini_book.path, out)
    assert again.ok and "figures and downloads as the last build wrote them" not in again.log, again.tail()
    assert outputs["index"] in download(out / "_build", "index")[1], "the overwritten download was not written again"


# ------------------------------------------------------------------ why a page runs again


def test_each_page_run_before_the_build_says_why(mini_book):
    """rec11_book.commands.preexecute names what differs from each page's last run, in its log and
    in a record beside the execution cache."""
    import json

    from rec11_book.commands import preexecute
    from rec11_book.shared import why

    for name, code in PACKAGE_PAGES.items():
        mini_book.page(name, f"# {name}\n\nSome prose.\n\n```{{code-cell}} ipython3\n{code}\n```\n")
    mini_book.toc(*PACKAGE_PAGES)

    def run() -> dict[str, str]:
        lines = []
        result = preexecute.run(mini_book.path, mini_book.path, jobs=2, log=lines.append)
        assert not result["failed"], lines
        return {line.split(": executing (")[0]: line.split(": executing (")[1].rsplit(")", 1)[0]
                for line in lines if ": executing (" in line}

    assert set(run().values()) == {"no earlier run of it in this cache"}
    assert run() == {}, "nothing changed: nothing runs"

    plain = mini_book.path / "book" / "plain.md"
    plain.write_text(plain.read_text().replace("Some prose.", "Some prose,\nnow longer.").replace("6 * 7", "7 * 6"))
    line = plain.read_text().splitlines().index("print(7 * 6)") + 1
    assert run() == {str(plain): f"the cell at line {line} changed"}

    with (mini_book.path / "src" / "rec11" / "seeds.py").open("a") as f:
        f.write("\nDEFAULT = 1\n")
    because = {Path(page).stem: reason for page, reason in run().items()}
    assert because == {"uses_seeds": "src/rec11/seeds.py changed", "uses_style": "src/rec11/seeds.py changed"}
    cache = preexecute.cache_path(mini_book.path, mini_book.path, preexecute.book_config(mini_book.path))
    record = json.loads((cache / why.WHY).read_text())
    assert record == {"book/uses_seeds.md": ["src/rec11/seeds.py changed"],
                      "book/uses_style.md": ["src/rec11/seeds.py changed"]}
    assert run() == {}
    assert json.loads((cache / why.WHY).read_text()) == {}, "a build that ran nothing keeps no older build's reasons"


# ------------------------------------------------------------------ the preview's warm rebuilds

PREVIEW_PROBE = """
import json, sys
from pathlib import Path
from rec11_book.commands import preview
book = Path(sys.argv[1])
preview.warm_up(book)
preview.warm_first_use()
before = set(sys.modules)
rebuild = preview.Rebuilder(book)
rebuild()  # the first build, in a forked child
learned = sorted(set(sys.modules) - before)
page = book / "book" / "index.md"
page.write_text(page.read_text().replace("Some prose.", "Some edited prose."))
rebuild(changed_paths=[page])
html = (book / "_build" / "html" / "book" / "index.html").read_text()
print(json.dumps({"learned": learned, "edited": "Some edited prose." in html,
                  "sphinx_in_parent": "sphinx.application" in sys.modules}))
"""


def test_the_preview_rebuilds_in_a_child_and_keeps_what_it_imported(mini_book):
    """The preview's parent never builds (each build gets a clean Sphinx, forked), but it
    imports what the child's build imported, so the next child starts with it loaded; and a
    prose edit, rebuilt that way, reaches the page."""
    import json
    import subprocess
    import sys

    mini_book.page("index", "# Home\n\nSome prose.\n")
    mini_book.toc("index")
    run = subprocess.run([sys.executable, "-c", PREVIEW_PROBE, str(mini_book.path)], check=False,
                         capture_output=True, text=True, timeout=600, cwd=mini_book.path)
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["edited"], "the prose edit did not reach the rebuilt page"
    assert "sphinx.builders.epub3" in found["learned"], \
        f"the parent did not import what the build's child imported: {found['learned'][:20]}"


def test_compiled_templates_are_kept_and_a_changed_template_is_compiled_again(mini_book):
    """The theme's templates are compiled once into ``_build/.rec11-templates``; a later
    build loads them compiled, and a template whose source changed is compiled again
    (Jinja's bytecode cache checks each entry against its source's hash)."""
    mini_book.page("index", "# Home\n\nSome prose.\n")
    mini_book.toc("index")
    built(mini_book)
    kept = mini_book.path / "_build" / ".rec11-templates"
    entries = {p.name: p.stat().st_mtime_ns for p in kept.glob("*.cache")}
    assert len(entries) >= 10, f"the build kept {len(entries)} compiled templates"

    config = mini_book.path / "_config.yml"
    config.write_text(config.read_text().replace("  config:\n", "  config:\n    templates_path: [_templates]\n", 1))
    layout = mini_book.path / "_templates" / "layout.html"
    layout.parent.mkdir()
    for words in ("the first footer", "a changed footer"):  # the same file: one cache entry, two sources
        layout.write_text('{% extends "!layout.html" %}{% block footer %}{{ super() }}<p>' + words
                          + "</p>{% endblock %}")
        built(mini_book)
    html = text(mini_book.path / "_build" / "html" / "book" / "index.html")
    assert "a changed footer" in html, "a kept compiled template hid the changed one"


def test_a_prose_edit_runs_nothing_ahead_even_when_the_last_run_was_not_recorded(mini_book):
    """The quick test compares a page's code with its recorded last run; a page whose outputs
    came from a run with no record (the build itself ran it) is asked of the cache instead,
    so a prose edit on it is still a prose edit."""
    from rec11_book.commands.preview import code_edits
    from rec11_book.shared import why
    from rec11_book.shared.execution import cache_path

    page = mini_book.page("index", "# Home\n\nSome prose.\n" + cell("print(6 * 7)"))
    mini_book.toc("index")
    built(mini_book)
    root = mini_book.path
    why.save(cache_path(root), {}, {})  # as if the build had run it, not the pages-ahead step
    page.write_text(page.read_text().replace("Some prose.", "Some edited prose."))
    assert not code_edits(root, [page]), "a prose edit was taken for a code edit"
    assert "book/index.md" in why.load(cache_path(root)), "the page the cache holds was not recorded as run"
    page.write_text(page.read_text().replace("6 * 7", "7 * 6"))
    assert code_edits(root, [page]), "a code edit the cache has no outputs for was taken for prose"


def test_the_preview_leaves_the_books_own_modules_to_each_rebuild():
    """What an instructor edits while the preview runs (the course package, the build's code)
    is never imported into the preview's long-lived process by the learned imports."""
    import sys

    from rec11_book.commands.preview import import_quietly

    names = ["rec11.notes", "rec11_book.commands.handout", "json.tool", "no_such_module_anywhere"]
    held = {name: sys.modules.pop(name, None) for name in names[:3]}
    try:
        assert import_quietly(names) == 1
        assert "json.tool" in sys.modules
        assert "rec11.notes" not in sys.modules and "rec11_book.commands.handout" not in sys.modules
    finally:
        for name, module in held.items():
            if module is not None:
                sys.modules[name] = module
