"""A sentence about a trained model, checked as a statistic: a measured value held to a threshold.

    claim(kl_max, "<", 0.01, "vae.md: 'at beta 2 and 3 the KL has gone to zero'")

Training at this scale is chaotic: another seed, thread count or CPU trains other weights,
so a sentence about a trained model is a statement about a distribution of retrainings.
``claim`` checks ``value op threshold`` and, when it is false, raises an AssertionError
naming the sentence, the value measured, and the command that retrains every model the
same way and shows it again. Unlike a bare ``assert``, it also records the value and the
threshold (``RECORD``), so that a report over many retrainings can say how far from its
threshold each claim stays (``rec11_tools.robustness``).

With ``$REC11_CLAIMS_RECORD_ONLY`` set, a false claim is recorded and not raised: the
claims runner (``rec11_tools.claims``) uses it to see every claim of a page, not only
the first false one.
"""

from __future__ import annotations

import math
import operator
import os

from rec11 import seeds

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
RECORD_ONLY = "REC11_CLAIMS_RECORD_ONLY"
# the knobs besides the seed that change how a model trains (rec11.cache; docs/claims-and-robustness.md)
KNOBS = ("REC11_TRAIN_THREADS", "ATEN_CPU_CAPABILITY", "MKL_CBWR")

RECORD: list[dict] = []  # one row per call, in order: message, value, op, threshold, held


def slack(value: float, op: str, threshold: float) -> float:
    """How far ``value`` is on the right side of ``threshold``: negative when the claim is false."""
    return value - threshold if op in (">", ">=") else threshold - value


def reproduce() -> str:
    """The one command that retrains every model as this run did and builds the book."""
    knobs = [f"{k}={os.environ[k]}" for k in KNOBS if os.environ.get(k)]
    return " ".join([f"REC11_SEED={seeds.shift()}", *knobs, "make build"])


def claim(value, op: str, threshold, message: str) -> float:
    """Check ``value op threshold`` (op one of < <= > >=), record it, and return the value.

    ``value`` may be a Python or NumPy number or a one-element tensor. A NaN is false.
    """
    if op not in OPS:
        raise ValueError(f"claim({message!r}): op must be one of {' '.join(OPS)}, not {op!r}")
    if not isinstance(message, str) or not message.strip():
        raise ValueError("claim(): the message must name the page and the sentence it protects")
    value, threshold = float(value), float(threshold)
    held = bool(OPS[op](value, threshold)) and not math.isnan(value)
    RECORD.append({"message": message, "value": value, "op": op, "threshold": threshold, "held": held})
    if not held and not os.environ.get(RECORD_ONLY):
        raise AssertionError(
            f"{message}: measured {value:.6g}, which is not {op} {threshold:.6g}. "
            f"This retraining: REC11_SEED={seeds.shift()}. Reproduce it with: {reproduce()}")
    return value
