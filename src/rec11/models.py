"""Every model the book's pages train, trained side by side before the pages run.

    python -m rec11.models [--jobs N] [--modules rec11.vae ...]   # from the book's root

Each model trains on one intra-op thread (``rec11.cache``): two threads per model on two
busy cores collapse, while two one-thread models on two cores each keep a core. So the
build (``rec11_book.commands.build``) first trains every model below, ``--jobs`` at a time in
separate processes, into the model cache; the pages then load them. A page that asks for
a model missing here still gets it (trained when the page runs, one at a time): the
build names any such model, so that it can be added to ``book_models``.

The lists repeat the configurations the pages ask for; a model's cache key is its
config, so a model listed here and asked for by a page is trained once. ``--modules``
trains only the models of those modules (the ones the book's pages import). Once every
model is in the cache, a stamp there (named for the models' code, the seed shift and the
training threads) lets the next build skip this step without importing torch.

Imports no torch at module level: the build reads ``MODULES`` and ``stamp``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rec11 import seeds
from rec11.sources import cache_dir, code_hash

# the modules whose models the pages train, each with models below
MODULES = ("rec11.lm", "rec11.sentence_vae", "rec11.diffusion", "rec11.vae", "rec11.recall")


def stamp_modules(modules) -> list[str]:
    """The code a stamp stands for: the models' modules, and this one's lists. Named, not
    ``__name__``: run as ``python -m rec11.models`` that is ``__main__``, and the stamp it wrote
    was never the one the build looked for, so every build started torch to find nothing to train."""
    return [*modules, "rec11.models"]


def book_models() -> list[tuple[str, str, Callable[[], object]]]:
    """(module, label, load) for every model the pages train, slowest first (a longest-first schedule)."""
    from rec11 import diffusion, lm, recall, sentence_vae, vae
    from rec11.recall import RecallConfig

    models = [("rec11.lm", "tiny GPT on the grammar", lambda: lm.load())]
    models += [("rec11.sentence_vae", f"sentence VAE, {name}", lambda cfg=cfg: sentence_vae.load(cfg))
               for name, cfg in sentence_vae.RUNS.items()]
    models += [("rec11.diffusion", "diffusion on the moons", lambda: diffusion.load(diffusion.DiffusionConfig()))]
    models += [("rec11.vae", f"digits VAE, beta {b:g}", lambda b=b: vae.load(replace(vae.VAEConfig(), beta=b)))
               for b in (0.3, 0.1, 1.0, 2.0, 3.0)]
    models += [("rec11.vae", "digits VAE, Z = 2", lambda: vae.load(vae.LATENT2))]
    # Exercise 1: the four settings, five seeds of d_k = 512 at two rates, and a rate sweep
    recall_cfgs = [RecallConfig(d_k=d_k, scaled=scaled) for d_k, scaled in recall.SETTINGS]
    recall_cfgs += [RecallConfig(d_k=512, scaled=scaled, lr=lr, seed=seed) for seed in range(5)
                    for scaled, lr in [(True, 1e-2), (False, 1e-2), (False, 1e-3), (True, 1e-3)]]
    recall_cfgs += [RecallConfig(d_k=512, scaled=scaled, lr=lr) for lr in (1e-3, 3e-3, 1e-2)
                    for scaled in (True, False)]
    unique = list(dict.fromkeys(recall_cfgs))  # the sweeps share some configs
    models += [("rec11.recall", f"recall d_k={c.d_k} scaled={c.scaled} lr={c.lr:g} seed={c.seed}",
                lambda c=c: recall.load(c)) for c in unique]
    return models


def stamp(modules, code: str | None = None) -> Path:
    """The file that says every model of ``modules`` is in the cache, for this code, seed and threads.

    ``code``: ``code_hash`` of :func:`stamp_modules`, when the caller keeps it (the build does).
    """
    code = code if code is not None else code_hash(stamp_modules(modules))
    key = repr((sorted(modules), code, seeds.shift(), seeds.training_threads()))
    return cache_dir() / f".book-models-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def _train_one(index: int) -> tuple[str, float]:
    """In a worker process: load or train model ``index`` of ``book_models()``."""
    _, label, load = book_models()[index]
    start = time.perf_counter()
    load()
    return label, time.perf_counter() - start


def train_all(modules=MODULES, jobs: int | None = None, log=print) -> float:
    """Train (or find in the cache) every model of ``modules``, ``jobs`` processes at a time."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    done = stamp(modules)
    if done.is_file():
        return 0.0
    jobs = max(1, jobs or len(os.sched_getaffinity(0)))
    start = time.perf_counter()
    wanted = [i for i, (module, _, _) in enumerate(book_models()) if module in modules]
    # spawn: each worker imports torch afresh, with no thread pool inherited from this process
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
        for label, seconds in pool.map(_train_one, wanted):
            if seconds > 1:
                log(f"  {label}: {seconds:.0f} s")
    total = time.perf_counter() - start
    log(f"{len(wanted)} models ready in {total:.0f} s, {jobs} at a time")
    done.parent.mkdir(parents=True, exist_ok=True)
    done.touch()
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="models trained at once (default: the cores)")
    parser.add_argument("--modules", nargs="*", default=list(MODULES), choices=MODULES,
                        help="train only these modules' models (default: all)")
    args = parser.parse_args(argv)
    train_all(args.modules, args.jobs, log=lambda text: print(text, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
