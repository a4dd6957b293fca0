"""Dependency tracing: which rec11 modules code imports, and a hash of their source."""

import subprocess
import sys

from rec11 import sources


def test_imports_are_found_absolute_relative_and_through_from():
    code = ("import rec11.attention\nfrom rec11 import style\nfrom rec11.cache import x\nimport numpy\n"
            "%matplotlib inline")
    assert sources.imported_modules(code) == {"rec11.attention", "rec11", "rec11.style", "rec11.cache", "rec11.cache.x"}
    assert sources.imported_modules("from .attention import attention", "rec11.gpt") == {"rec11.attention",
                                                                                      "rec11.attention.attention"}
    assert sources.imported_modules("from . import notes", "rec11.plan", is_package=True) == {"rec11.plan",
                                                                                           "rec11.plan.notes"}


def test_the_closure_follows_imports_between_modules(tmp_path):
    pkg = tmp_path / "rec11"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from rec11.b import f\n")
    (pkg / "b.py").write_text("def f(): pass\n")
    (pkg / "c.py").write_text("x = 1\n")
    assert set(sources.module_closure(["rec11.a"], pkg)) == {"rec11.a", "rec11.b"}
    before = sources.code_hash(["rec11.a"], pkg)
    (pkg / "c.py").write_text("x = 2\n")
    assert sources.code_hash(["rec11.a"], pkg) == before, "an unrelated module does not change the hash"
    (pkg / "b.py").write_text("def f(): return 1\n")
    assert sources.code_hash(["rec11.a"], pkg) != before, "an imported module does"


def test_the_hash_follows_what_the_code_does_not_its_comments_or_layout(tmp_path):
    pkg = tmp_path / "rec11"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    model = pkg / "model.py"
    model.write_text('"""A model."""\n\ndef f(x):\n    """Double it."""\n    return 2 * x\n')
    before = sources.code_hash(["rec11.model"], pkg)
    model.write_text('"""A model,\nits docstring reflowed."""\n\n\ndef f(x):  # a new comment\n'
                     '    """Double\n    it."""\n    return (2 *\n            x)\n')
    assert sources.code_hash(["rec11.model"], pkg) == before, "comments, docstrings, layout: same code"
    model.write_text('"""A model."""\n\ndef f(x):\n    return 3 * x\n')
    assert sources.code_hash(["rec11.model"], pkg) != before, "a changed constant is changed code"
    model.write_text('def f(x):\n    "a string that is not the first statement"\n    y = 2\n    return y * x\n')
    assert sources.code_hash(["rec11.model"], pkg) != before
    model.write_text("def f(x):\n    return 2 * x +\n")  # does not parse: taken byte for byte
    broken = sources.code_hash(["rec11.model"], pkg)
    model.write_text("def f(x):\n    return 2 * x + \n")
    assert sources.code_hash(["rec11.model"], pkg) != broken


def test_an_imported_attribute_is_not_mistaken_for_a_module():
    # "from rec11.attention import attention" names a function; the installed package is searched
    assert set(sources.module_closure(["rec11.attention", "rec11.attention.attention"])) == {"rec11.attention"}


def test_the_book_machinery_starts_without_torch():
    """Every build and preview loads the Sphinx extensions; torch is not theirs to load.
    (Nor any other module of the book's machinery: each one is imported here.)"""
    code = ("import importlib, pkgutil, sys, rec11_book; "
            "[importlib.import_module(m.name) for m in pkgutil.walk_packages(rec11_book.__path__, 'rec11_book.')]; "
            "rec11_book.commands.preview.warm_up(__import__('pathlib').Path('.')); rec11_book.compat.table(); "
            "sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0, "a Sphinx extension imports torch"

