"""Why a page runs again: what its code read when it last ran, and what differs now.

The execution cache (jupyter-cache) keys a page on one hash of its notebook, fingerprint
cell included (``rec11_book.extensions.fingerprints``): it knows that a page changed, not what. So
each time a page runs before the build (``rec11_book.commands.preexecute``), its inputs are kept
part by part: each code cell, each ``rec11`` module its code reaches, the seed shift and
training threads, and, for the session plan, the instructor notes. The next time the page
runs, the build prints what differs, for example

    book/vae.md: executing (src/rec11/vae.py changed), side by side before the build
    book/diffusion.md: executing (the cell at line 120 changed), ...

Both files sit beside the execution cache: ``rec11-page-inputs.json`` (each page's inputs
at its last run) and ``rec11-why-executed.json`` (the last build's pages and reasons).
Standard library and the book's own modules only: no torch, no Sphinx.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path

from rec11 import seeds
from rec11.sources import behaviour, module_closure
from rec11_book.shared.pagefacts import facts, notes_hash

INPUTS = "rec11-page-inputs.json"
WHY = "rec11-why-executed.json"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def page_inputs(root: Path, page: Path, package: Path | None) -> dict:
    """What the page's code reads, part by part (the parts ``fingerprints.stamp`` hashes whole)."""
    text = page.read_text()
    found = facts(text)
    inputs = {"cells": [[line, _sha(code)] for line, _, code in found.cells], "modules": {}, "run": None,
              "notes": notes_hash(root, text)}
    if found.modules:
        inputs["modules"] = _module_inputs(root, found.modules, package)
        inputs["run"] = {"seed shift": seeds.shift(), "training threads": seeds.training_threads()}
    return inputs


# The preview asks for a page's inputs on every save, and parsing each module's syntax tree
# twice (its imports, then what it does) was most of the time a save spent before its build
# started. So both are kept while the files they came from are byte for byte the same.
_closures: dict[tuple, tuple[tuple, dict[str, Path]]] = {}  # (modules, package) -> (its files then, closure)
_behaviours: dict[bytes, str] = {}  # sha256 of a module's bytes -> hash of what it does


def _package_files(package: Path) -> tuple:
    """Every source file under ``package`` with a hash of its bytes: all that a module closure
    inside it reads, modules added since included."""
    return tuple((path.relative_to(package).as_posix(), hashlib.sha256(path.read_bytes()).digest())
                 for path in sorted(package.rglob("*.py")))


def _closure(modules, package: Path | None) -> dict[str, Path]:
    """``module_closure``, kept while the package's files are unchanged (the installed package,
    when there is no ``package``, is read every time)."""
    if package is None:
        return module_closure(sorted(modules), package)
    key, files = (tuple(sorted(modules)), package), _package_files(package)
    kept = _closures.get(key)
    if kept is None or kept[0] != files:
        kept = _closures[key] = (files, module_closure(sorted(modules), package))
    return kept[1]


def _behaviour_hash(path: Path) -> str:
    """A short hash of what the module at ``path`` does (``behaviour``), kept per content."""
    digest = hashlib.sha256(path.read_bytes()).digest()
    if digest not in _behaviours:
        _behaviours[digest] = _sha(behaviour(path.read_text()))
    return _behaviours[digest]


def _module_inputs(root: Path, modules, package: Path | None) -> dict:
    """{module: [its file, a hash of what it does]} for ``modules`` and every module they import."""
    found = {}
    for name, path in sorted(_closure(modules, package).items()):
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        found[name] = [shown, _behaviour_hash(path)]
    return found


def _lines(lines: list[int]) -> str:
    if len(lines) == 1:
        return f"line {lines[0]}"
    return "lines " + ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"


def _cell_reasons(before: list, now: list) -> list[str]:
    """The code cells that differ, by their line on the page now (a cell that only moved is the same)."""
    changed, added, removed = [], [], 0
    matcher = difflib.SequenceMatcher(a=[h for _, h in before], b=[h for _, h in now], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if op == "replace" else 0  # an old cell edited into a new one
        changed += [now[j][0] for j in range(j1, j1 + paired)]
        added += [now[j][0] for j in range(j1 + paired, j2)]
        removed += (i2 - i1) - paired
    reasons = []
    if changed:
        reasons.append(f"the cell{'s' * (len(changed) > 1)} at {_lines(changed)} changed")
    if added:
        reasons.append(f"a new cell at {_lines(added)}" if len(added) == 1 else f"new cells at {_lines(added)}")
    if removed:
        reasons.append(f"{removed} cell{'s' * (removed > 1)} removed")
    return reasons


def differ(before: dict | None, now: dict) -> bool:
    """Whether anything the page's code reads differs from its last run (cells compared by
    their code, not their line: prose that moves a cell changes nothing)."""
    if before is None:
        return True
    cells = [h for _, h in before["cells"]] != [h for _, h in now["cells"]]
    return cells or any(before[key] != now[key] for key in ("modules", "run", "notes"))


def reasons(before: dict | None, now: dict) -> list[str]:
    """Why a page whose inputs were ``before`` at its last run runs again with inputs ``now``."""
    if before is None:
        return ["no earlier run of it in this cache"]
    found = _cell_reasons(before["cells"], now["cells"])
    old, new = before["modules"], now["modules"]
    found += [f"{new[name][0]} changed" for name in sorted(new.keys() & old.keys()) if new[name][1] != old[name][1]]
    found += [f"it now reaches {new[name][0]}" for name in sorted(new.keys() - old.keys())]
    found += [f"it no longer reaches {old[name][0]}" for name in sorted(old.keys() - new.keys())]
    if before["run"] and now["run"]:
        found += [f"another {key} ({before['run'][key]} → {value})" for key, value in now["run"].items()
                  if before["run"].get(key) != value]
    if before["notes"] != now["notes"]:
        found.append("the instructor notes changed")
    # nothing the page's code reads changed: the cache lost it, or the notebook's settings changed
    return found or ["its outputs were not in the execution cache"]


def load(folder: Path) -> dict:
    """Each page's inputs at its last run, from beside the execution cache."""
    path = folder / INPUTS
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def remember(folder: Path, page: str, inputs: dict) -> None:
    """Keep ``inputs`` as ``page``'s last run, the other pages' and the last build's reasons
    as they were: for a page whose outputs in the cache came from a run with no record."""
    _write(folder / INPUTS, {**load(folder), page: inputs})


def save(folder: Path, inputs: dict, why: dict[str, list[str]]) -> None:
    """Keep the pages' inputs and this build's reasons beside the execution cache."""
    _write(folder / INPUTS, inputs)
    _write(folder / WHY, why)


def _write(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
