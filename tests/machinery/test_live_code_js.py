"""Live Code's JavaScript, unit-tested under Node: ``node --test tests/js/``.

The modules in ``src/rec11_book/static/livecode/`` take the browser's fetch, timers,
websockets and storage as arguments, so the tests in ``tests/js`` run them against
fakes of a JupyterHub, Thebe and its kernels (``tests/js/fakes.mjs``), in seconds,
without a browser. The browser tests run the same modules against a real server and
hub. This wrapper makes them part of ``make test``.
"""

from __future__ import annotations

import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests" / "js"


def test_live_code_modules_pass_their_node_tests():
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node.js is missing (the README asks for Node.js 20): Live Code's tests need it")
    assert sorted(TESTS.glob("*.test.mjs")), f"no tests in {TESTS}"
    # the spec reporter: each test's name, and for a failure what was expected and the stack
    run = subprocess.run([node, "--test", "--test-reporter=spec", "tests/js/"], check=False, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    report = "\n".join(line for line in run.stdout.splitlines() if not line.lstrip().startswith("✔"))
    assert run.returncode == 0, f"node --test tests/js/ failed:\n{report[-20000:]}{run.stderr[-5000:]}"


def test_the_import_map_gives_every_module_but_the_entry_a_checksum():
    """A page loads ``main.js?v=...`` (Sphinx's checksum); the modules it imports get theirs
    from the page's import map, so a browser never mixes a new module with an old one."""
    from rec11_book.extensions.livecode import ENTRY, MODULES, import_map

    folder = ROOT / "src" / "rec11_book" / "static" / MODULES
    modules = sorted(p.name for p in folder.glob("*.js") if p.name != ENTRY)
    for depth, prefix in ((0, "./"), (1, "../"), (2, "../../")):
        imports = import_map(lambda path, resource, up="../" * depth: up + path)["imports"]
        assert sorted(imports) == [f"{prefix}_static/{MODULES}/{name}" for name in modules]
        for key, url in imports.items():
            checksum = zlib.crc32((folder / key.rsplit("/", 1)[1]).read_bytes())
            assert url == f"{key}?v={checksum:08x}"
