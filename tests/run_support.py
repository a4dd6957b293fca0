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


# The book's test files that take longest on one worker, longest first (pytest's --durations
# in make test). make test's second part hands out whole files in collection order
# (--dist loadfile --no-loadscope-reorder), so these start first: ordered by their number of
# tests, the downloads (about 450 s on one worker) started late and ran on alone at the end
# while the other core sat idle. The rest keep their folder order.
LONGEST_FIRST = ("test_notebook_downloads.py", "test_hub.py", "test_handout.py")


def longest_first(items: list) -> None:
    """Sort collected test items in place: the files of ``LONGEST_FIRST`` first, in its order;
    every other test keeps its place relative to the rest (a stable sort)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
