"""jupyter-cache keys a page on its own cells; rec11.book.fingerprints adds the package.

Three pages: one imports rec11.attention, one imports rec11.style, one imports
nothing from the package. Each edit below must re-execute exactly the pages that
depend on what changed; a prose edit, and an edit to the package's comments,
docstrings or layout, must re-execute nothing.
"""

import pytest

from rec11.book.build import execution_summary

pytestmark = pytest.mark.build

# Cell options (":tags:" lines, a YAML block) come first, as on the real pages.
PAGES = {
    "uses_attention": ":tags: [hide-input]\nimport torch\nfrom rec11.attention import causal_mask\nprint(causal_mask(3).sum())",
    "uses_style": "---\ntags: [hide-input]\nmystnb:\n  figure:\n    name: none-here\n---\nfrom rec11 import style\nprint(style.HEATMAP)",
    "plain": "print(6 * 7)",
}


def executed_pages(mini_book) -> set[str]:
    result = mini_book.build()
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return {p.rsplit("/", 1)[-1] for p in execution_summary(result.stdout)["executed"]}


def test_package_edits_re_execute_exactly_the_pages_that_import_them(mini_book):
    for name, code in PAGES.items():
        mini_book.page(name, f"# {name}\n\nSome prose.\n\n```{{code-cell}} ipython3\n{code}\n```\n")
    mini_book.toc(*PAGES)
    package = mini_book.path / "src" / "rec11"

    assert executed_pages(mini_book) == set(PAGES), "a cold build executes every page"
    assert executed_pages(mini_book) == set(), "a no-op rebuild executes nothing"

    page = mini_book.path / "book" / "uses_attention.md"
    page.write_text(page.read_text().replace("Some prose.", "Some edited prose."))
    assert executed_pages(mini_book) == set(), "a prose edit executes nothing"

    # An edit that changes no behaviour: a comment, a reflowed docstring, a line break.
    attention = package / "attention.py"
    source = attention.read_text()
    docstring = source.split('"""')[1]
    edited = source.replace(docstring, " ".join(docstring.split()).replace(". ", ".\n\n", 1), 1)
    edited = edited.replace("\nimport ", "\n# a comment an instructor added\nimport ", 1) + "\n\n# the end\n"
    assert edited != source
    attention.write_text(edited)
    assert executed_pages(mini_book) == set(), "comments, docstrings and layout re-execute nothing"

    with attention.open("a") as f:
        f.write("\nEDITED = True\n")
    assert executed_pages(mini_book) == {"uses_attention"}, "a code edit re-executes its importers"

    with (package / "style.py").open("a") as f:
        f.write("\nEDITED = True\n")
    assert executed_pages(mini_book) == {"uses_style"}

    page = mini_book.path / "book" / "plain.md"
    page.write_text(page.read_text().replace("6 * 7", "7 * 6"))
    assert executed_pages(mini_book) == {"plain"}, "a code edit re-executes its own page only"
