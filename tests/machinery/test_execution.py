"""rec11_book.shared.execution: one way from a page to its run, for the build, the downloads and the tools."""

import re
from pathlib import Path

import yaml

from rec11_book.shared import execution
from rec11_book.shared.pages import FINGERPRINT_KEY

ROOT = Path(__file__).resolve().parents[2]
PAGE = """---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# A page

```{code-cell} ipython3
from rec11 import seeds
x = 1
```
"""


def book(tmp_path: Path, execute: dict | None = None) -> Path:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["execute"] = {**config["execute"], **(execute or {})}
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "page.md").write_text(PAGE)
    return tmp_path


def test_the_cache_and_the_timeout_are_where_config_puts_them(tmp_path):
    root = book(tmp_path)
    assert execution.cache_path(root) == root / "_build" / ".jupyter_cache"
    assert execution.cache_path(root, tmp_path / "out") == tmp_path / "out" / "_build" / ".jupyter_cache"
    (tmp_path / "moved").mkdir()
    moved = book(tmp_path / "moved", {"cache": ".mycache", "timeout": 42})
    assert execution.cache_path(moved, tmp_path / "out") == moved / ".mycache"
    assert execution.timeout(execution.book_config(moved)) == 42
    assert execution.timeout({}) == 30  # myst-nb's default


def test_the_tools_notebook_is_the_builds_without_its_fingerprint(tmp_path):
    root = book(tmp_path)
    page = root / "book" / "page.md"
    built = execution.page_notebook(page)
    tools = execution.page_notebook(page, fingerprint=False)
    assert [c.source for c in built.cells] == [c.source for c in tools.cells]  # no cell added
    assert built.metadata.source_map == tools.metadata.source_map  # every line where it was
    stamp = built.metadata.kernelspec.pop(FINGERPRINT_KEY)
    assert "code:" in stamp  # the page imports rec11: its code is in the fingerprint
    assert built.metadata.kernelspec == tools.metadata.kernelspec
    assert FINGERPRINT_KEY not in tools.metadata.kernelspec


def test_the_fingerprint_changes_the_cache_key_and_keeps_every_line():
    """jupyter-cache hashes the kernelspec (compat.jupyter_cache.keyed_metadata): another
    stamp is another key, and the page's lines keep their numbers; a page without a
    kernelspec (myst-nb does not run it) is left as it is."""
    from jupyter_cache.cache.main import JupyterCacheBase

    from rec11_book.compat.myst_nb import page_notebook as read

    block = PAGE.replace("kernelspec: {display_name: Python 3, language: python, name: python3}",
                         "kernelspec:\n  display_name: Python 3\n\n  # the kernel\n  name: python3\n"
                         "title: after it")
    config = execution.parser_config({})
    for text in (PAGE, block):
        stamped = {s: execution.with_fingerprint(text, s) for s in ("a", "b")}
        notebooks = {s: read(t, config, Path("p.md")) for s, t in stamped.items()}
        assert all(t.count("\n") == text.count("\n") for t in stamped.values())
        assert notebooks["a"].metadata.kernelspec[FINGERPRINT_KEY] == "a"
        assert notebooks["a"].metadata.source_map == read(text, config, Path("p.md")).metadata.source_map
        keys = {JupyterCacheBase.create_hashed_notebook(None, nb)[1] for nb in notebooks.values()}
        assert len(keys) == 2
    assert yaml.safe_load(execution.with_fingerprint(block, "a").split("---")[1])["title"] == "after it"
    bare = "# A page\n\n```{code-cell} ipython3\nprint(1)\n```\n"
    assert execution.with_fingerprint(bare, "a") == bare
    assert execution.with_fingerprint(PAGE, "") == PAGE


def test_a_page_outside_any_book_is_read_with_myst_nbs_defaults(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    assert execution.book_root(page) is None
    assert [c.cell_type for c in execution.page_notebook(page, fingerprint=False).cells] == ["markdown", "code"]


def test_only_the_execution_module_reads_a_page_or_finds_the_cache():
    """Every other module goes through shared.execution (compat.myst_nb holds the reliances)."""
    allowed = {"compat/myst_nb.py", "shared/execution.py"}
    for path in sorted((ROOT / "src").rglob("*.py")):
        relative = path.relative_to(ROOT / "src" / path.relative_to(ROOT / "src").parts[0]).as_posix()
        if relative in allowed:
            continue
        text = path.read_text()
        assert not re.search(r"read_myst_markdown_notebook|default_cache_folder\(.*_build", text), \
            f"{path.relative_to(ROOT)}: reads a page or finds the cache itself; use rec11_book.shared.execution"


def test_kernels_started_at_once_each_get_sockets_of_their_own():
    """Over TCP two kernels started together can draw one port (a retraining's kernel died with
    zmq's "Address already in use"); kernel_sockets gives each Unix sockets in a folder of its own."""
    from concurrent.futures import ThreadPoolExecutor

    import nbformat
    from nbclient import NotebookClient

    from rec11_book.shared.execution import kernel_sockets

    def where(_):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
            "from ipykernel.kernelapp import IPKernelApp\nprint(IPKernelApp.instance().transport,"
            " IPKernelApp.instance().ip)")])
        with kernel_sockets() as sockets:
            NotebookClient(nb, timeout=60, kernel_name="python3", **sockets).execute()
        return nb.cells[0].outputs[0]["text"].split()

    with ThreadPoolExecutor(3) as pool:
        found = list(pool.map(where, range(3)))
    assert {transport for transport, _ in found} == {"ipc"}
    assert len({ip for _, ip in found}) == 3, found
