"""``python -m rec11_book.commands.quickstart``: Jupyter Book's command line, collecting
garbage less often and leaving without the interpreter's teardown once it has returned. A
stand-in ``jupyter_book`` package on ``PYTHONPATH`` plays the build: it prints, registers
exit handlers, leaves a temporary folder to its finalizer and an object whose ``__del__``
only the teardown would run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rec11_book.commands.quickstart import GC_THRESHOLDS

STAND_IN = '''
import atexit, gc, json, os, sys, tempfile
from pathlib import Path

OUT = Path(os.environ["QS_OUT"])


class Held:
    def __del__(self):
        (OUT / "torn-down").write_text("the teardown ran")


def main():
    (OUT / "gc").write_text(json.dumps(gc.get_threshold()))
    sys.stdout.write("x" * 1_000_000)  # more than any pipe's buffer: all of it must arrive
    atexit.register(lambda: (OUT / "exit-handler").write_text("ran"))
    folder = tempfile.TemporaryDirectory()  # removed by its finalizer at exit
    (OUT / "tempdir").write_text(folder.name)
    sys.modules[__name__].held = (Held(), folder)
    if os.environ["QS_HOW"] == "raise":
        raise ValueError("the build broke")
    raise SystemExit(int(os.environ["QS_HOW"]))
'''


def run_quickstart(tmp_path: Path, how: str) -> tuple[subprocess.CompletedProcess, Path]:
    fake = tmp_path / "fake"
    (fake / "jupyter_book" / "cli").mkdir(parents=True)
    (fake / "jupyter_book" / "__init__.py").write_text("")
    (fake / "jupyter_book" / "cli" / "__init__.py").write_text("")
    (fake / "jupyter_book" / "cli" / "main.py").write_text(textwrap.dedent(STAND_IN))
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), *sys.path]), "QS_OUT": str(out), "QS_HOW": how}
    proc = subprocess.run([sys.executable, "-m", "rec11_book.commands.quickstart", "build", "."],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    return proc, out


@pytest.mark.parametrize("code", [0, 3])
def test_it_leaves_with_the_builds_code_output_and_exit_handlers_but_no_teardown(tmp_path, code):
    proc, out = run_quickstart(tmp_path, str(code))
    assert proc.returncode == code, proc.stderr
    assert proc.stdout == "x" * 1_000_000, f"{len(proc.stdout)} characters of output arrived"
    assert (out / "exit-handler").read_text() == "ran", "an exit handler registered by the build did not run"
    assert not Path((out / "tempdir").read_text()).exists(), "a temporary folder was left behind"
    assert not (out / "torn-down").exists(), "the interpreter's teardown ran"
    assert tuple(json.loads((out / "gc").read_text())) == GC_THRESHOLDS


def test_a_build_that_raises_exits_as_python_does(tmp_path):
    proc, out = run_quickstart(tmp_path, "raise")
    assert proc.returncode == 1
    assert "ValueError: the build broke" in proc.stderr
    assert (out / "exit-handler").read_text() == "ran"
