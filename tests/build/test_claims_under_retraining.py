"""Every claim a page asserts holds on models retrained another way, not only on the build's.

The build trains with seed shift 0 on two threads and this machine's own CPU kernels. Here
every model is retrained into an empty cache under another seed (``REC11_SEED=1``), one
training thread and torch's AVX2 kernels with MKL's AVX2 path, and every page runs with its
asserts recorded (``rec11_tools.claims``). A claim that held only for the build's trajectory
fails this test, naming its page and sentence. The full matrix is ``make robustness``.
"""

import json
import subprocess
import sys

import pytest

from rec11_tools.robustness import Variant

pytestmark = pytest.mark.build

PERTURBED = Variant(seed=1, threads=1, kernels="avx2")


def test_every_claim_holds_after_retraining_under_another_seed_thread_count_and_kernels(root, tmp_path):
    out = tmp_path / "claims.json"
    result = subprocess.run([sys.executable, "-m", "rec11_tools.claims", "--json", str(out)], cwd=root,
                            env=PERTURBED.environment(tmp_path / "models"), capture_output=True, text=True,
                            timeout=3000)
    assert out.is_file(), f"the pages did not run:\n{result.stderr[-3000:]}"
    pages = json.loads(out.read_text())["pages"]
    problems = [f"{page}: false: {message}" for page, run in pages.items() for held, message in run["claims"]
                if not held]
    problems += [f"{page}:{e['line']}: {e['error']}" for page, run in pages.items() for e in run["errors"]]
    assert not problems, f"under {PERTURBED.label}:\n" + "\n".join(problems)
    assert sum(len(run["claims"]) for run in pages.values()) > 100, "the pages' claims were not recorded"
    assert result.returncode == 0, result.stdout[-3000:]
