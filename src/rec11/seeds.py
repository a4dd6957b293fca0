"""The knobs that make one retraining differ from another: ``$REC11_SEED`` and ``$REC11_TRAIN_THREADS``.

Every seed the package uses (a model's initialisation, its training batches, the data
it draws, the page's global random state set by ``rec11.style.setup_page``) is shifted
by the integer ``$REC11_SEED``, default 0. A build with ``REC11_SEED=1`` is a fair
retraining of every model: another draw of the same experiments, as another machine's
floating point would give. The model cache keys a model on the shift (``rec11.cache``).

The shift is applied once, where a generator is seeded (``shifted``), never on the way
there, so two seeds that differ on a page still differ, by the same amount, in a run.
"""

from __future__ import annotations

import os


def shift() -> int:
    """``$REC11_SEED`` as an integer, default 0."""
    value = os.environ.get("REC11_SEED", "0").strip() or "0"
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"REC11_SEED must be an integer, not {value!r}") from None


def shifted(seed: int) -> int:
    """The seed a generator gets for the package's ``seed``: ``seed + $REC11_SEED``."""
    return seed + shift()


def training_threads() -> int:
    """Intra-op threads for training (``rec11.cache``): ``$REC11_TRAIN_THREADS``, else 1, on any machine.

    Like the seed, the number changes the trained weights (the float rounding), so it is
    part of a model's cache key and of a page's execution fingerprint.
    """
    return max(1, int(os.environ.get("REC11_TRAIN_THREADS", "1")))
