"""Each claim's values in an experiment's retrainings beside the current code's, by the report's method.

    python robustness/experiments/2026-12-06-variance/compare.py DIR PAGE [PAGE ...]

DIR holds an arm's retraining records (``seed*.json`` or ``.json.gz``, as ``make robustness``
writes them); the current code's come from ``robustness/``, the records whose page
fingerprint is the page's today. For each measured claim: n, mean and sd of its value, and
its chance to fail from ``rec11_tools.tails`` over all the current code's values, over only
as many as the arm has (the fair comparison: few values widen the predictive tail), and over
the arm's.
"""

import gzip
import json
import sys
from pathlib import Path

import numpy as np

from rec11_tools import tails
from rec11_tools.robustness import page_fingerprint

ROOT = Path(__file__).resolve().parents[3]


def values(files, pages, fingerprints=None) -> dict:
    found = {}
    for path in sorted(files):
        record = json.loads((gzip.open if path.suffix == ".gz" else open)(path, "rt").read())
        for page, run in record["pages"].items():
            if page not in pages or (fingerprints and run.get("fingerprint") != fingerprints[page]):
                continue
            for claim in run["claims"]:
                if "value" in claim:
                    found.setdefault((page, claim["message"]), (claim["op"], claim["threshold"], []))[2].append(
                        claim["value"])
    return found


def main(arm_dir: str, *pages: str) -> None:
    fingerprints = {page: page_fingerprint(ROOT, page) for page in pages}
    current = values((ROOT / "robustness").glob("seed*.json.gz"), pages, fingerprints)
    arm = values([p for p in Path(arm_dir).glob("seed*.json*") if ".part." not in p.name], pages)
    rows = []
    for key, (op, threshold, new) in arm.items():
        if key in current:
            old = current[key][2]
            rows.append((tails.fail_chance(old, threshold, op)[0], key[1], op, threshold, old, new,
                         tails.fail_chance(old[:len(new)], threshold, op)[0], tails.fail_chance(new, threshold, op)[0]))
    for chance, message, op, threshold, old, new, chance_same_n, chance_arm in sorted(rows, reverse=True):
        print(f"{message[:70]:70s} {op}{threshold:<6g} now n={len(old):3d} {np.mean(old):.3f}±{np.std(old):.3f} "
              f"p={chance:.1e} (first {len(new)}: {chance_same_n:.1e}) | arm n={len(new)} "
              f"{np.mean(new):.3f}±{np.std(new):.3f} p={chance_arm:.1e}")


if __name__ == "__main__":
    main(*sys.argv[1:])
