"""What retraining every model of the book costs, before and after training went side by side.

    python -m rec11_tools.trainbench [--runs 3]      # about 6 minutes a run on 2 cores

Trains every model of ``rec11.models`` into an empty model cache, alternately

* the old way: two intra-op threads per model, one model at a time;
* the book's way: one thread per model, two models side by side (``python -m rec11.models``),

``--runs`` times each, and writes the section "Retraining every model" of BENCHMARKS.md: the
wall time of the whole set (median of the runs, with min and max) and, per kind of model, the
seconds its training loop took (median over runs, summed over that kind's models). Nothing
else may run on the machine meanwhile: two busy cores are exactly what the comparison is about.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WAYS = {"old: 2 threads, one model at a time": {"REC11_TRAIN_THREADS": "2", "jobs": "1"},
        "new: 1 thread, two models side by side": {"REC11_TRAIN_THREADS": "1", "jobs": "2"}}
SECTION = "## Retraining every model"


def run_once(way: dict, work: Path) -> tuple[float, dict[str, list[float]]]:
    """(wall seconds, {model name: [training seconds of each of its models]}) for one full retraining."""
    cache, log = work / "models", work / "trained.jsonl"
    shutil.rmtree(cache, ignore_errors=True)
    log.unlink(missing_ok=True)
    env = {**os.environ, "REC11_CACHE_DIR": str(cache), "REC11_TRAIN_THREADS": way["REC11_TRAIN_THREADS"],
           "REC11_TRAINING_LOG": str(log), "REC11_QUIET_TRAINING": "1"}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rec11.models", "--jobs", way["jobs"]], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    per_model: dict[str, list[float]] = defaultdict(list)
    for line in log.read_text().splitlines():
        row = json.loads(line)
        per_model[row["name"]].append(row["seconds"])
    return wall, per_model


def render(results: dict[str, list[tuple[float, dict]]], runs: int, machine: str, commit: str) -> str:
    ways = list(results)
    names = sorted({name for way in ways for _, per in results[way] for name in per})
    lines = [SECTION, "",
             f"Written by `python -m rec11_tools.trainbench` on {time.strftime('%Y-%m-%d')}, commit `{commit}`,",
             f"on {machine}: every model the pages train (`rec11.models`), retrained into an empty cache,",
             f"{runs} runs of each way, alternating. Median (min–max) seconds.", "",
             "| | " + " | ".join(ways) + " |", "|---|" + "---:|" * len(ways)]
    walls = {w: [wall for wall, _ in results[w]] for w in ways}
    lines.append("| **every model, wall clock** | " + " | ".join(
        f"**{statistics.median(walls[w]):.0f}** ({min(walls[w]):.0f}–{max(walls[w]):.0f})" for w in ways) + " |")
    for name in names:
        cells = []
        for w in ways:
            totals = [sum(per.get(name, [])) for _, per in results[w]]
            count = len(results[w][0][1].get(name, []))
            cells.append(f"{statistics.median(totals):.0f} ({count} model{'s' * (count != 1)})")
        lines.append(f"| {name}, training loops | " + " | ".join(cells) + " |")
    lines += ["", "A training loop's seconds are its own wall clock: side by side, two loops share the"
              " machine's memory bandwidth, so each takes somewhat longer while the set finishes sooner."]
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    text = path.read_text() if path.is_file() else "# Benchmarks\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.M | re.S)
    text = pattern.sub(section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    path.write_text(text)


def main(argv=None) -> int:
    from rec11_tools.robustness import commit, machine

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args(argv)
    results: dict[str, list] = {w: [] for w in WAYS}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for name, way in WAYS.items():
                wall, per = run_once(way, Path(tmp))
                results[name].append((wall, per))
                print(f"run {i + 1}, {name}: {wall:.0f} s", flush=True)
    write_section(args.out, render(results, args.runs, machine(), commit(ROOT)))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
