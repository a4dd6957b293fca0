"""A page's set-up: deterministic, one thread, and quick to run in a fresh kernel."""

import subprocess
import sys

# Run in a fresh interpreter: this test process has long since imported everything.
CHECK = """
import sys, torch
from rec11 import style
style.setup_page()
assert torch.are_deterministic_algorithms_enabled()
assert torch.get_num_threads() == 1
assert "torch._inductor" not in sys.modules, "setup_page imported the compiler"
"""


def test_setup_page_is_deterministic_on_one_thread_without_importing_the_compiler(monkeypatch):
    monkeypatch.delenv("REC11_THREADS", raising=False)
    result = subprocess.run([sys.executable, "-c", CHECK], check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
