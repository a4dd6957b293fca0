"""Every Python file lints clean under ruff, as pyproject.toml configures it.

`make check` runs ruff first for a fast answer; this test puts it in `make test`, which is
what CI runs (`.ci/run`), so that CI fails on a finding too.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
