"""Which ``rec11`` modules a piece of code depends on, and a hash of what that code does.

The model cache keys a trained model on it (``rec11.cache``), and the book's build
fingerprints each page with it (``rec11_book.extensions.fingerprints``), so that an edit to the
package retrains exactly the models and re-runs exactly the pages that depend on the
edited code. The hash is taken over the parsed code, not the file's bytes: comments,
docstrings, blank lines and line breaks change nothing that runs, so editing them
retrains no model and re-runs no page. Standard library only: the build reads it
without loading torch.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import re
from collections.abc import Iterable
from pathlib import Path

PACKAGE = "rec11"
_IMPORT_LINE = re.compile(r"^\s*(?:from|import)\s+(rec11(?:\.\w+)*)", re.M)


def book_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` holding ``_config.yml``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_config.yml").is_file():
            return folder
    return None


def cache_dir() -> Path:
    """Where trained models are kept (``rec11.cache``): ``$REC11_CACHE_DIR``, else the book's ``.cache/models``."""
    if os.environ.get("REC11_CACHE_DIR"):
        return Path(os.environ["REC11_CACHE_DIR"])
    root = book_root()
    return root / ".cache" / "models" if root else Path.home() / ".cache" / "rec11"


def _module_file(name: str, package_dir: Path | None) -> Path | None:
    """The source file of module ``name`` (dotted), without importing it."""
    if package_dir is not None:
        parts = name.split(".")[1:]
        if not parts:  # the package itself
            return package_dir / "__init__.py"
        rel = Path(*parts)
        for candidate in (package_dir / rel.with_suffix(".py"), package_dir / rel / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:  # "rec11.x.name" where rec11.x is a module, name an attribute
        return None
    return Path(spec.origin) if spec and spec.origin and spec.origin.endswith(".py") else None


def imported_modules(source: str, current: str | None = None, is_package: bool = False) -> set[str]:
    """Every ``rec11`` module that ``source`` imports, absolute or relative.

    Lines that are not Python (IPython magics, shell escapes) are skipped, so the
    code cells of a page can be passed in as one string.
    """
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:  # not Python after all: fall back to the import lines alone
        return set(_IMPORT_LINE.findall(source)) if _IMPORT_LINE.search(source) else set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and current:
                # a package's "." is itself; a module's "." is its package
                parent = current.split(".") if is_package else current.split(".")[:-1]
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join([*parent, base]) if base else ".".join(parent)
            if base.split(".")[0] != PACKAGE:
                continue
            found.add(base)
            # "from rec11 import attention" names a module, not an attribute
            found.update(f"{base}.{a.name}" for a in node.names)
    return found


def module_closure(modules: Iterable[str], package_dir: Path | None = None) -> dict[str, Path]:
    """The given modules plus every ``rec11`` module they import, transitively."""
    todo, files = list(modules), {}
    while todo:
        name = todo.pop()
        if name in files:
            continue
        path = _module_file(name, package_dir)
        if path is None:
            continue  # an attribute picked up by "from rec11 import x"
        files[name] = path
        todo.extend(imported_modules(path.read_text(), name, path.name == "__init__.py"))
    return files


def _drop_docstrings(tree: ast.AST) -> ast.AST:
    """The tree without the docstrings of its module, classes and functions."""
    scopes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, scopes) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


def behaviour(source: str) -> str:
    """What ``source`` does, as text: its syntax tree without positions or docstrings.

    Two sources that differ only in comments, docstrings or layout give the same text.
    A file that does not parse is taken as it is, so any edit to it counts.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    return ast.dump(_drop_docstrings(tree), include_attributes=False)


def code_hash(modules: Iterable[str], package_dir: Path | None = None) -> str:
    """sha256 over what the modules' import closure does (``behaviour``), in a stable order."""
    h = hashlib.sha256()
    for name, path in sorted(module_closure(modules, package_dir).items()):
        h.update(name.encode() + b"\0" + behaviour(path.read_text()).encode() + b"\0")
    return h.hexdigest()[:16]
