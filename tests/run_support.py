"""What the processes of one test run share.

``make test`` runs the book tier on two pytest-xdist workers. Each worker is its own process
with its own session fixtures, so what they must share (the book's build, the Jupyter server
its pages point at) is made once in a folder of the run: the first worker to take its lock
makes it, the other waits and reads it. The process that owns the run (the xdist
controller, or pytest alone) creates the folder, then stops what was started and removes the
folder (tests/conftest.py).
"""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

SHARED = "REC11_TEST_SHARED"  # the folder, set by the run's owner for its workers


@contextmanager
def shared(name: str):
    """The run's shared folder, held under the lock ``name`` while the block runs."""
    folder = Path(os.environ[SHARED])
    with FileLock(folder / f"{name}.lock"):
        yield folder


def keep_running(proc: subprocess.Popen, name: str) -> None:
    """Leave ``proc`` (started with ``start_new_session=True``) running for the rest of the
    run: the run's owner stops it, and every process of its session, at the end."""
    (Path(os.environ[SHARED]) / f"{name}.pid").write_text(str(proc.pid))
