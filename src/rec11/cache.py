"""Train once, reuse everywhere: a disk cache for trained models.

A cached model is keyed by its name, its config, the number of threads it was trained
on (see below), the seed shift ``$REC11_SEED`` (``rec11.seeds``) and the hash of the
package code it depends on (the module that defines it, the module that trains it, and
every ``rec11`` module those import). Editing what that code does retrains the model;
editing its comments or docstrings, a page's prose or a plot, does not.

Nothing in the key names the machine. Another CPU (AVX-512, AVX2, Apple silicon), BLAS
code path or thread count trains other weights from the same seed, so the pages claim
only what holds for any fair retraining (``rec11_tools.robustness`` checks that).

The cache lives in ``$REC11_CACHE_DIR`` if set, else in ``.cache/models`` at the root
of the book (found by walking up from the working directory to ``_config.yml``), else
in ``~/.cache/rec11``.

A model trained on a cache miss says so, with its training time: in a downloaded
notebook that is the reader's only sign of a slow first run. The book's build sets
``$REC11_QUIET_TRAINING`` (``rec11_book.extensions.notebooks``), so that a page shows the same
outputs whether its models were cached or not.

Training runs on ``$REC11_TRAIN_THREADS`` intra-op threads, default one, whatever the
page set for its own cells. One, because two threads on two cores that something else is
also using collapse (a page that trains in 26 s took 377 s beside one other job), and a
student's kernel on a shared hub meets exactly that; the book's build uses the second
core by training two models side by side instead (``rec11.models``). The number is fixed
rather than "all cores" because it changes the float rounding, and with it the trained
weights; for the same reason it is part of the key.

Training also flushes subnormal floats to zero. Once a softmax saturates (a trained
attention layer, a confident classifier), its smallest weights and their gradients fall
below 1.2e-38, where x86 CPUs compute in microcode at a fraction of their speed: Exercise
1's models that learn took four times as long as those that fail. Zero in their place
changes no digit a page shows, and the key records it, as it does the threads.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path  # noqa: F401  (unused; removing it would change code_hash and retrain every model)

import torch

from rec11 import seeds
from rec11.seeds import training_threads
from rec11.sources import PACKAGE, cache_dir, code_hash

__all__ = ["cache_dir", "cache_key", "load_or_train", "training_threads"]


def _config_dict(config) -> dict:
    return dataclasses.asdict(config) if dataclasses.is_dataclass(config) else dict(config)


def cache_key(name: str, config, modules: Iterable[str], threads: int) -> str:
    payload = json.dumps(
        {"name": name, "config": _config_dict(config), "threads": threads, "seed_shift": seeds.shift(),
         "code": code_hash(modules), "subnormals": "flushed"},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@contextmanager
def _training_arithmetic(n: int):
    """Run the block with torch on n intra-op threads and subnormals flushed to zero, then
    restore the caller's threads and torch's default (subnormals kept)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    torch.set_flush_denormal(True)  # False where the CPU cannot: then nothing changes
    try:
        yield
    finally:
        torch.set_flush_denormal(False)
        torch.set_num_threads(before)


def _log_training(name: str, config, threads: int, seconds: float) -> None:
    """Append one JSON line per model trained to ``$REC11_TRAINING_LOG``, if set (the benchmark reads it)."""
    log = os.environ.get("REC11_TRAINING_LOG")
    if log:
        row = {"name": name, "config": _config_dict(config), "threads": threads, "seconds": round(seconds, 2)}
        with open(log, "a") as f:
            f.write(json.dumps(row, default=str) + "\n")


def load_or_train(
    name: str,
    config,
    make: Callable[[], torch.nn.Module],
    train: Callable[[torch.nn.Module], dict],
    extra_modules: Iterable[str] = (),
):
    """Return ``(model, info)``, training with ``train(model)`` only on a cache miss.

    ``info`` is whatever ``train`` returned (loss curves, timings): plain Python
    data, saved beside the weights so that pages can plot training history
    without retraining. The model comes back in eval mode.
    """
    model = make()
    modules = {type(model).__module__, inspect.getmodule(train).__name__, *extra_modules}
    modules = {m for m in modules if m.split(".")[0] == PACKAGE}
    threads = training_threads()
    path = cache_dir() / f"{name}-{cache_key(name, config, modules, threads)}.pt"
    if path.is_file():
        saved = torch.load(path, weights_only=True)
        model.load_state_dict(saved["state_dict"])
        return model.eval(), json.loads(saved["info"])
    announce = not os.environ.get("REC11_QUIET_TRAINING")  # the book's build sets it: pages stay the same
    if announce:
        print(f"Training {name} on this computer's CPU, once: later runs load it from {path.parent}.",
              flush=True)
    start = time.perf_counter()
    with _training_arithmetic(threads):
        info = train(model)
    seconds = time.perf_counter() - start
    if announce:
        print(f"Trained {name} in {seconds:.0f} s.", flush=True)
    _log_training(name, config, threads, seconds)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    # info travels as JSON so that torch.load can stay weights_only
    torch.save({"state_dict": model.state_dict(), "info": json.dumps(info)}, tmp)
    tmp.replace(path)  # atomic: a half-written file is never read as a cache hit
    return model.eval(), info
