"""The one seam for other packages' internals: one module per dependency.

Everything the build uses that another package does not promise (a private attribute, a
module layout, a log message, a file it writes, an HTML class or id) is one small function
in the module named for that package. The book's modules call the function, never the
internal itself, so an upgrade that breaks one is fixed in one place.

Each function is registered with :func:`reliance`, and its docstring ends in a fixed form
(:func:`parse`)::

    Relies on: <what, precisely>.
    Package: myst-nb. Checked against: 1.4.0.
    Public alternative: <one, and why it is not used; or "none">.

and its ``probe`` (cheap: an import, an attribute, a look at the package's source; never a
build) returns what it finds missing in the installed version, an empty list when the
reliance holds. ``tests/machinery/test_compat.py`` runs every probe (``make check``) and fails,
naming the reliance, when a probe finds something missing or when the installed version is
not the one checked against. ``python -m rec11_book.compat`` prints the table of them all
that docs/architecture.md holds (``--write`` puts it there).

The course code (``rec11``, which a student's kernel imports) cannot import this package;
its one reliance, torch's private switch for deterministic algorithms in
``rec11.style.setup_page``, says so in that function's docstring in the same form, and
:data:`COURSE` registers it with a probe that reads torch's installed sources without
importing torch (``torch_probe``).

Sphinx-side: no module here imports torch, and none imports the package it describes
before one of its functions is called.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# The modules of this package, one per dependency (each registers its functions on import).
MODULES = ("sphinx", "docutils", "myst_nb", "myst_parser", "jupyter_cache", "nbclient", "jupyter_book",
           "sphinx_external_toc", "jsonschema", "sphinx_autobuild", "theme", "book_theme", "sphinx_thebe",
           "sphinx_exercise", "pyzmq", "jupyter_client", "ipykernel")
# The course code's reliances, in the same form (it cannot import this package): the function
# whose docstring states it, and the name of its probe in this module. Left in rec11.style
# itself: moving the call would change the code every page's retraining records are keyed on.
COURSE = {"rec11.style.setup_page": "torch_probe"}
# Live Code's seam in the browser, in the same form (a comment before each export); its
# probes are Node tests, tests/js/thebe-compat.test.mjs.
JS_MODULES = ("livecode/thebe-compat.js",)

SRC = Path(__file__).resolve().parents[2]  # src/: rec11_book and rec11
STATIC = SRC / "rec11_book" / "static"
NODE_MODULES = SRC.parent / "node_modules"

_FORM = re.compile(
    r"Relies on:\s*(?P<relies>.+?)\s*"
    r"Package:\s*(?P<package>[\w.-]+)\.\s*Checked against:\s*(?P<checked>[\w.+-]+?)\.?\s*"
    r"Public alternative:\s*(?P<alternative>.+?)\s*$",
    re.S,
)


@dataclass(frozen=True)
class Reliance:
    """One thing the build relies on, as its function's docstring says."""

    name: str          # as the table shows it: "myst_nb.glue_file", "rec11.style.setup_page", "livecode/x.js y"
    qualified: str     # what its callers import: "rec11_book.compat.myst_nb.glue_file", "livecode/x.js y"
    module: str        # the seam's module: "myst_nb", "rec11.style", "livecode/thebe-compat.js"
    relies_on: str
    package: str       # the distribution, as pip (or npm) names it
    checked: str       # the version it was checked against
    alternative: str
    probe: Callable[[], list[str]] | None  # None: probed by a Node test (tests/js)
    npm: bool = False

    def installed(self) -> str | None:
        """The installed version of its package."""
        return npm_version(self.package) if self.npm else installed_version(self.package)


def parse(doc: str | None) -> dict[str, str]:
    """The fixed form at the end of a reliance's docstring, as a dict; ValueError if absent."""
    match = _FORM.search(doc or "")
    if not match:
        raise ValueError("its docstring must end with 'Relies on: ... Package: P. Checked against: V. "
                         "Public alternative: ...'")
    return {key: " ".join(value.split()) for key, value in match.groupdict().items()}


_REGISTRY: dict[str, Reliance] = {}


def register(function: Callable, probe: Callable[[], list[str]]) -> Callable:
    """Register ``function`` (its docstring in the fixed form) with ``probe``; return it."""
    try:
        form = parse(function.__doc__)
    except ValueError as err:
        raise ValueError(f"{function.__module__}.{function.__qualname__}: {err}") from None
    module = function.__module__.removeprefix(__name__ + ".")
    qualified = f"{function.__module__}.{function.__name__}"
    name = f"{module}.{function.__name__}"
    _REGISTRY[name] = Reliance(name=name, qualified=qualified, module=module, relies_on=form["relies"],
                               package=form["package"], checked=form["checked"], alternative=form["alternative"],
                               probe=probe)
    return function


def reliance(probe: Callable[[], list[str]]):
    """Decorator: register the function as a reliance on another package, checked by ``probe``."""

    def decorate(function: Callable) -> Callable:
        return register(function, probe)

    return decorate


def all_reliances() -> list[Reliance]:
    """Every reliance of the build and of the course code, in table order."""
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")
    for qualified, probe in COURSE.items():  # the course code's, by its docstring
        module, _, function = qualified.rpartition(".")
        if qualified not in _REGISTRY:
            register(getattr(importlib.import_module(module), function), globals()[probe])
    order = {name: index for index, name in enumerate((*MODULES, *(q.rpartition(".")[0] for q in COURSE)))}
    # by module, in the order MODULES lists them; within one, as the module defines them
    python = sorted(_REGISTRY.values(), key=lambda r: order[r.module])
    return python + [r for path in JS_MODULES for r in js_reliances(path)]


def torch_probe() -> list[str]:
    """rec11.style.setup_page's reliance, read from torch's installed sources (the build side
    imports no torch): the private switch exists, and the public function still calls it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return ["torch is not installed"]
    root = Path(spec.origin).parent
    stub = root / "_C" / "__init__.pyi"
    missing = []
    if not stub.is_file() or "def _set_deterministic_algorithms(" not in stub.read_text():
        missing.append("torch._C._set_deterministic_algorithms (in torch/_C/__init__.pyi)")
    if "_C._set_deterministic_algorithms(" not in (root / "__init__.py").read_text():
        missing.append("torch.use_deterministic_algorithms calls torch._C._set_deterministic_algorithms")
    return missing


_JS_EXPORT = re.compile(r"/\*\*(?P<doc>(?:(?!\*/).)*)\*/\s*export function (?P<name>\w+)", re.S)


def js_reliances(path: str) -> list[Reliance]:
    """The reliances of a JavaScript module in ``static/`` (each export's ``/** ... */`` comment
    in the fixed form); their probes are Node tests."""
    rows = []
    for match in _JS_EXPORT.finditer((STATIC / path).read_text()):
        doc = "\n".join(line.strip().removeprefix("*").strip() for line in match["doc"].splitlines())
        form = parse(doc)
        name = f"{path} {match['name']}"
        rows.append(Reliance(name=name, qualified=name, module=path, relies_on=form["relies"],
                             package=form["package"], checked=form["checked"], alternative=form["alternative"],
                             probe=None, npm=True))
    if not rows:
        raise ValueError(f"{path}: no export with a comment in the fixed form")
    return rows


def npm_version(package: str) -> str | None:
    """The version of an npm package in the book's ``node_modules``."""
    import json

    manifest = NODE_MODULES / package / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.is_file() else None


def installed_version(package: str) -> str | None:
    """The installed version of a distribution, without a local label (``2.13.0+cpu``: 2.13.0)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package).split("+")[0]
    except PackageNotFoundError:
        return None


# --- what a probe looks at ------------------------------------------------------------------


def package_text(module: str, suffixes=(".py",)) -> str:
    """The source of an installed package (its files with these suffixes), to look for a hook in."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return ""
    folder = Path(spec.origin).parent
    return "\n".join(f.read_text(errors="replace") for f in sorted(folder.rglob("*")) if f.suffix in suffixes)


def lacks_text(module: str, *needles: str, suffixes=(".py",)) -> list[str]:
    """The needles the package's source does not contain."""
    text = package_text(module, suffixes)
    return [f"{module}: {n!r}" for n in needles if n not in text] if text else [f"{module} is not installed"]


def lacks_attributes(*dotted: str) -> list[str]:
    """The ``module.attribute`` names that do not exist."""
    missing = []
    for name in dotted:
        module, _, attribute = name.rpartition(".")
        try:
            found = hasattr(importlib.import_module(module), attribute)
        except ImportError:
            found = False
        if not found:
            missing.append(name)
    return missing


# --- who calls what, read from the code (for the table's "used by") -------------------------


_JS_IMPORT = re.compile(r'^import \{(?P<names>[^}]*)\} from "\./(?P<module>[\w.-]+)";', re.M)


def callers() -> dict[str, list[str]]:
    """{a reliance's import path: the modules that import it}: ``rec11_book`` and ``rec11``
    modules, by their ``from ... import name`` statements, and Live Code's modules, by their
    ``import {name} from "./module.js"``."""
    found: dict[str, list[str]] = {}
    for path in JS_MODULES:
        folder = (STATIC / path).parent
        for script in sorted(folder.glob("*.js")):
            for match in _JS_IMPORT.finditer(script.read_text()):
                module = f"{folder.name}/{match['module']}"
                for name in match["names"].split(","):
                    found.setdefault(f"{module} {name.strip()}", []).append(f"{folder.name}/{script.name}")
    for package in ("rec11_book", "rec11"):
        for path in sorted((SRC / package).rglob("*.py")):
            relative = path.relative_to(SRC).with_suffix("")
            if relative.parts[:2] == ("rec11_book", "compat") or relative.name.endswith("_compat"):
                continue
            module = ".".join(relative.parts).removeprefix("rec11_book.").removesuffix(".__init__")
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    for alias in node.names:
                        users = found.setdefault(f"{node.module}.{alias.name}", [])
                        if module not in users:
                            users.append(module)
    return found


# --- the table ------------------------------------------------------------------------------

TABLE_START = "<!-- compat table: generated by python -m rec11_book.compat; do not edit -->"
TABLE_END = "<!-- end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table() -> str:
    """The markdown table of every reliance (docs/architecture.md holds it)."""
    users = callers()
    rows = ["| reliance | used by | relies on | package | checked against | public alternative |",
            "|---|---|---|---|---|---|"]
    for r in all_reliances():
        used = ", ".join(users.get(r.qualified, [])) or "–"
        rows.append(f"| {r.name} | {used} | {_cell(r.relies_on)} | {r.package} | {r.checked} | "
                    f"{_cell(r.alternative)} |")
    return "\n".join(rows) + "\n"


def in_document(text: str) -> str | None:
    """The table between the markers of a document's text, or None if it has no markers."""
    if TABLE_START not in text or TABLE_END not in text.split(TABLE_START, 1)[1]:
        return None
    return text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip("\n") + "\n"


def with_table(text: str) -> str:
    """The document's text with the generated table between its markers."""
    if in_document(text) is None:
        raise ValueError(f"the document has no {TABLE_START!r} ... {TABLE_END!r} markers")
    head, rest = text.split(TABLE_START, 1)
    tail = rest.split(TABLE_END, 1)[1]
    return f"{head}{TABLE_START}\n{table()}{TABLE_END}{tail}"
