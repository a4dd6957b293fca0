"""The knobs that make one retraining differ from another: ``$REC11_SEED`` and ``$REC11_TRAIN_THREADS``.

Every seed the package uses (a model's initialisation, its training batches, the data
it draws, the page's global random state set by ``rec11.style.setup_page``) is moved by
the integer ``$REC11_SEED``, default 0. A build with ``REC11_SEED=1`` is a fair
retraining of every model: another draw of the same experiments, as another machine's
floating point would give. The model cache keys a model on it (``rec11.cache``).

At 0 every seed is the page's own (the published book). Any other value replaces each
seed by a hash of the pair (``$REC11_SEED``, seed), never by their sum: with a sum, the
retraining at 2 would reuse the streams of the one at 1 shifted by one seed (a page that
uses seeds 0 to 4 shares four of them), and two retrainings drawn close together would
not be independent. The hash is applied once, where a generator is seeded (``shifted``).
"""

from __future__ import annotations

import hashlib
import os


def shift() -> int:
    """``$REC11_SEED`` as an integer, default 0."""
    value = os.environ.get("REC11_SEED", "0").strip() or "0"
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"REC11_SEED must be an integer, not {value!r}") from None


def shifted(seed: int) -> int:
    """The seed a generator gets for the package's ``seed``: the seed itself at
    ``$REC11_SEED`` = 0, else 32 bits (numpy's seeds stop there) of a hash of the pair."""
    offset = shift()
    if offset == 0:
        return seed
    digest = hashlib.blake2b(f"rec11:{offset}:{seed}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big")


def training_threads() -> int:
    """Intra-op threads for training (``rec11.cache``): ``$REC11_TRAIN_THREADS``, else 1, on any machine.

    Like the seed, the number changes the trained weights (the float rounding), so it is
    part of a model's cache key and of a page's execution fingerprint.
    """
    return max(1, int(os.environ.get("REC11_TRAIN_THREADS", "1")))
