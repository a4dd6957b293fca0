"""docs/architecture.md is the house: its floors import only downwards, its pipeline table is
every handler the book's extensions register, in the order Sphinx runs them, and its
table of who uses whom is the build's imports. (Its table of the build's reliances on other
packages' internals is generated and probed: tests/machinery/test_compat.py.)"""

import ast
import importlib
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

# Sphinx's events, in the order one HTML build emits them.
EVENTS = ["config-inited", "builder-inited", "env-get-outdated", "env-purge-doc", "env-before-read-docs",
          "source-read", "doctree-read", "env-merge-info", "env-updated", "env-check-consistency",
          "doctree-resolved", "html-page-context", "build-finished",
          # the book's own: notebooks emits it during build-finished, for each download
          "rec11-agenda-markdown"]


class Recorder:
    """Enough of a Sphinx application for the extensions' setup(): it keeps what they connect."""

    def __init__(self):
        self.listeners, self.loaded = [], []

    def connect(self, event, callback, priority=500):
        self.listeners.append((event, priority, len(self.listeners), callback))

    def setup_extension(self, name):
        if name.startswith("rec11_book.") and name not in self.loaded:  # Sphinx loads each once
            self.loaded.append(name)
            importlib.import_module(name).setup(self)

    def __getattr__(self, name):  # add_directive, add_node, add_config_value, ...
        return lambda *args, **kwargs: None


def registered() -> list[tuple[str, str, int]]:
    """(event, module.handler, priority) in the order Sphinx would call them."""
    app = Recorder()
    for name in yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["extra_extensions"]:
        app.setup_extension(name)
    unknown = {event for event, *_ in app.listeners} - set(EVENTS)
    assert not unknown, f"add {unknown} to EVENTS, where Sphinx emits it"
    rows = []
    for event, priority, _, callback in sorted(app.listeners, key=lambda r: (EVENTS.index(r[0]), r[1], r[2])):
        name = f"{module_name(callback.__module__)}.{callback.__qualname__}"
        row = (event, name.replace(".<locals>", ""), priority)
        if row not in rows:  # keep_per_page's three, registered once per record
            rows.append(row)
    return rows


def mapped() -> list[tuple[str, str, int]]:
    table = (ROOT / "docs" / "architecture.md").read_text()
    return [(event, handler, int(priority)) for event, handler, priority in
            re.findall(r"^\| ([a-z0-9-]+) \| ([\w.]+) \| (\d+) \|", table, re.M)]


def test_every_registered_handler_is_in_the_map_in_the_order_it_runs():
    actual, listed = registered(), mapped()
    assert len(actual) > 30
    missing = [row for row in actual if row not in listed]
    stale = [row for row in listed if row not in actual]
    assert not missing, f"registered but not in docs/architecture.md: {missing}"
    assert not stale, f"in docs/architecture.md but not registered: {stale}"
    assert listed == actual, "docs/architecture.md lists the handlers in another order than Sphinx runs them"


def imports(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function, and every name it
    imports from one (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_the_floors_import_only_downwards():
    """The course code imports no machinery, and the build no measuring tool."""
    src = ROOT / "src"
    course = list((src / "rec11").glob("*.py"))
    build = list((src / "rec11_book").rglob("*.py"))
    upward = {f"{p.relative_to(src)} imports {name}" for p in course for name in imports(p)
              if name.startswith(("rec11_book", "rec11_tools"))}
    upward |= {f"{p.relative_to(src)} imports {name}" for p in build for name in imports(p)
               if name.startswith("rec11_tools")}
    assert not upward, sorted(upward)
    assert len(course) > 10 and len(build) > 10  # the globs found the floors


ROLES = ("extensions", "commands", "shared")  # rec11_book's folders, one per role


def module_name(dotted: str) -> str | None:
    """The map's name of a build module: ``rec11_book.extensions.notes`` is ``notes``, and a
    package of the seam (``rec11_book.compat.sphinx``) is ``compat``."""
    parts = dotted.split(".")
    if len(parts) < 2:
        return None
    if parts[1] in ROLES:
        return parts[2] if len(parts) > 2 else None
    return parts[1]


def role_modules() -> dict[str, set[str]]:
    """{role: the modules in its folder}."""
    build = ROOT / "src" / "rec11_book"
    return {role: {p.stem for p in (build / role).glob("*.py") if p.stem != "__init__"} for role in ROLES}


def build_imports() -> dict[str, tuple[set[str], list[str]]]:
    """{module: (the build modules it imports, the private names it imports from them)}. A
    package of the seam (``compat``) is one module: its files' imports together, less its own."""
    found = {}
    build = ROOT / "src" / "rec11_book"
    files = [(p.stem, p) for role in ROLES for p in sorted((build / role).glob("*.py")) if p.stem != "__init__"]
    files += [(folder.name, p) for folder in sorted(build.iterdir())
              if (folder / "__init__.py").is_file() and folder.name not in ROLES
              for p in sorted(folder.glob("*.py"))]
    for module, path in files:
        names = [n for n in imports(path) if n.startswith("rec11_book.")]
        deps, private = found.setdefault(module, (set(), []))
        deps |= {module_name(n) for n in names} - {module, None}
        private += [n for n in names if n.split(".")[-1].startswith("_")]
    return found


def test_the_build_modules_import_what_the_map_says():
    table = (ROOT / "docs" / "architecture.md").read_text().split("## Who uses whom", 1)[1]
    table = table.split("\n## ", 1)[0]  # this section's table only
    listed = {module: set() if imports == "–" else set(imports.split(", "))
              for module, imports in re.findall(r"^\| (\w+) \| ([\w, –]+) \|", table, re.M)
              if module != "module"}
    actual = build_imports()
    assert {m: deps for m, (deps, _) in actual.items()} == listed, "update docs/architecture.md's Who uses whom"
    assert not [name for _, private in actual.values() for name in private], "a private name imported"

    def reaches(start, target, seen=()):
        return any(d == target or (d not in seen and reaches(d, target, (*seen, d))) for d in listed.get(start, ()))

    assert not [m for m in listed if reaches(m, m)], "modules import each other in a circle"


def test_each_folder_holds_one_role():
    """extensions/ holds exactly the book's extensions (_config.yml loads every one of them,
    and nothing else of rec11_book), commands/ what runs the build or works on the built
    site, shared/ what both use; no module is in two."""
    roles = role_modules()
    loaded = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["extra_extensions"]
    ours = [name for name in loaded if name.startswith("rec11_book.")]
    assert {name.removeprefix("rec11_book.extensions.") for name in ours} == roles["extensions"], \
        "_config.yml's extra_extensions and src/rec11_book/extensions/ differ"
    assert all(name.startswith("rec11_book.extensions.") for name in ours), ours
    for role in ROLES:
        for module in roles[role]:
            has_setup = "def setup(app" in (ROOT / "src" / "rec11_book" / role / f"{module}.py").read_text()
            assert has_setup == (role == "extensions"), f"{role}/{module}.py: only an extension has setup(app)"
    assert not roles["extensions"] & roles["commands"] & roles["shared"]
    assert len(roles["extensions"]) > 15 and roles["commands"] >= {"build", "preview", "handout"}, roles


def test_extensions_import_no_other_extension():
    """An extension imports Sphinx and the shared modules, never another extension: what
    one needs from another comes through Sphinx (an event, ``setup_extension``)."""
    roles = role_modules()
    extensions = roles["extensions"]
    actual = build_imports()
    crossing = {m: sorted(deps & extensions) for m, (deps, _) in actual.items()
                if m in extensions and deps & extensions}
    assert not crossing, f"extensions importing extensions (move the shared part to a shared module): {crossing}"
    shared = set(actual) - extensions - roles["commands"]
    upward = {m: sorted(deps - shared) for m in shared for deps in [actual[m][0]] if deps - shared}
    assert not upward, f"shared modules importing an extension or a command: {upward}"
