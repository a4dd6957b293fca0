"""Does every claim survive retraining? Every page under seeds, thread counts and CPU kernels.

    python -m rec11_tools.robustness                 # the full matrix, writes ROBUSTNESS.md
    python -m rec11_tools.robustness --design axes   # the default variant and one change at a time

Training at this scale is chaotic: the seed, the number of threads (float rounding), torch's
vector kernels and MKL's code path each give other weights. A claim the pages assert must hold
for any such retraining. Each variant here retrains every model into an empty model cache
and runs every page with ``rec11_tools.claims`` (asserts recorded, not raised), under:

* ``REC11_SEED``: 0, 1, 2 (``rec11.seeds``: every seed of the models and the pages, shifted);
* ``REC11_TRAIN_THREADS``: 1, 2;
* CPU kernels: this machine's own; ``avx2`` (``ATEN_CPU_CAPABILITY=avx2``, ``MKL_CBWR=AVX2``,
  as on many cloud runners); ``default`` (``ATEN_CPU_CAPABILITY=default``,
  ``MKL_CBWR=COMPATIBLE``: no vector kernels, MKL's most portable path).

``--design full`` (the default) is every combination, 18 variants; ``--design axes`` is the
default variant plus each other value of one factor at a time, 6 variants. The report gives,
per page and per claim (the assert's message), in how many variants it held, with the date,
machine and commit. Each variant's result is kept in ``--work`` and reused by ``--resume``;
``--pages P ...`` runs only those pages again in every variant that has a result (after an
edit to their claims) and keeps the other pages' rows. ``--report`` runs nothing and writes
the report from the complete results in ``--work`` (while another run is still going, say).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

SEEDS = (0, 1, 2)
THREADS = (2, 1)
KERNELS = {  # name: the environment that selects them ("" removes the variable)
    "native": {"ATEN_CPU_CAPABILITY": "", "MKL_CBWR": ""},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"},
    "default": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},
}


@dataclass(frozen=True)
class Variant:
    seed: int
    threads: int
    kernels: str

    @property
    def name(self) -> str:
        return f"seed{self.seed}-threads{self.threads}-{self.kernels}"

    @property
    def label(self) -> str:
        return f"seed {self.seed}, {self.threads} training thread{'s' * (self.threads > 1)}, {self.kernels} kernels"

    def environment(self, cache: Path, shared_cores: bool = False) -> dict:
        env = {**os.environ, "REC11_SEED": str(self.seed), "REC11_TRAIN_THREADS": str(self.threads),
               "REC11_CACHE_DIR": str(cache)}
        if shared_cores:  # threads that wait sleep instead of spinning; the arithmetic is the same
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        for key, value in KERNELS[self.kernels].items():
            if value:
                env[key] = value
            else:
                env.pop(key, None)
        return env


def variants(design: str, seeds=SEEDS, threads=THREADS, kernels=tuple(KERNELS)) -> list[Variant]:
    """The matrix: every combination ("full"), or the first of each and one change at a time ("axes")."""
    if design == "full":
        return [Variant(s, t, k) for s, t, k in itertools.product(seeds, threads, kernels)]
    base = Variant(seeds[0], threads[0], kernels[0])
    out = [base]
    out += [Variant(s, base.threads, base.kernels) for s in seeds[1:]]
    out += [Variant(base.seed, t, base.kernels) for t in threads[1:]]
    out += [Variant(base.seed, base.threads, k) for k in kernels[1:]]
    return out


def run_variant(variant: Variant, work: Path, pages: list[str], shared_cores: bool = False,
                code: str = "unknown") -> dict:
    """Retrain everything into an empty cache and run the pages; returns the claims' JSON.

    With ``pages`` and a complete earlier result for the variant, only those pages run
    again (their models retrained from scratch) and replace their rows in that result.
    ``code`` (the commit the pages and the package come from) is recorded with the result,
    since a long matrix may be finished at a later commit than it was started.
    """
    saved = work / f"{variant.name}.json"
    earlier = json.loads(saved.read_text()) if pages and saved.is_file() else None
    if earlier and not earlier.get("complete"):
        earlier = None
    out = work / f"{variant.name}.part.json" if earlier else saved
    cache = work / f"{variant.name}-models"
    shutil.rmtree(cache, ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rec11_tools.claims", "--json", str(out), *pages],
                          env=variant.environment(cache, shared_cores), capture_output=True, text=True)
    (work / f"{variant.name}.log").write_text(proc.stdout + proc.stderr)
    shutil.rmtree(cache, ignore_errors=True)
    if not out.is_file():
        raise SystemExit(f"{variant.label}: the pages did not run\n{proc.stderr[-3000:]}")
    result = json.loads(out.read_text())
    seconds = time.perf_counter() - start
    if earlier:
        out.unlink()
        earlier["pages"].update(result["pages"])
        earlier["rerun_pages"] = sorted(set(earlier.get("rerun_pages", [])) | set(result["pages"]))
        earlier["seconds"] += seconds
        earlier["rerun_commit"] = code
        result = earlier
    elif pages:
        raise SystemExit(f"{variant.label}: re-running {', '.join(pages)} needs a full run of the variant first")
    else:
        result["seconds"], result["complete"], result["commit"] = seconds, True, code
    saved.write_text(json.dumps(result, indent=1))
    return result


def tally(results: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """{page: {claim: {"held": [...], "false": [...], "absent": [...]}}}, of variant names.

    A claim asserted more than once in a run (in a loop) holds if every time held. A cell
    that raised is a claim of its own, "runs without error", false in that variant. A claim
    missing from a run in which a cell raised was not reached: false. A claim missing from a
    run with no error, or from a run without the page, was not asserted there (the page ran
    at a version without it or without code, or the assert sits in a branch that did not
    run): absent, neither held nor false.
    """
    table: dict[str, dict[str, dict]] = {}
    errors: set[tuple[str, str]] = set()
    for name, result in results.items():
        for page, run in result["pages"].items():
            seen: dict[str, bool] = {}
            for held, message in run["claims"]:
                seen[message] = seen.get(message, True) and held
            for error in run["errors"]:
                message = f"line {error['line']} runs without error ({error['error'].splitlines()[0][:80]})"
                seen[message] = False
                errors.add((page, message))
            for message, held in seen.items():
                table.setdefault(page, {}).setdefault(message, {"held": [], "false": [], "absent": []})
                table[page][message]["held" if held else "false"].append(name)
    for page, claims in table.items():
        for message, row in claims.items():
            for name in sorted(set(results) - set(row["held"]) - set(row["false"])):
                run = results[name]["pages"].get(page)
                if (page, message) in errors:  # an error not raised in this run held
                    row["held"].append(name)
                elif run is not None and run["errors"]:  # stopped short of it
                    row["false"].append(name)
                else:  # not in the page's version of this run (or the page had no code then)
                    row["absent"].append(name)
    return table


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def commit(root: Path) -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "book"], cwd=root,
                               capture_output=True, text=True).stdout.strip()
        return sha + (" with uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def report(results: dict[str, dict], order: list[Variant], root: Path, design: str = "full") -> str:
    table = tally(results)
    n = len(results)
    claims = [(page, msg, row) for page, rows in table.items() for msg, row in rows.items()]
    failing = [c for c in claims if c[2]["false"]]
    lines = [
        "# Robustness: the pages' claims under retraining",
        "",
        "Written by `make robustness` (`python -m rec11_tools.robustness`). Each variant retrains every",
        "model into an empty model cache and runs every page, its asserts recorded rather than raised.",
        "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Machine: {machine()}",
        f"- Commit when the report was written: {commit(root)} (each variant's own is in the table)",
        f"- Design: {design} ({len(order)} variants"
        + (", every combination of seed, training threads and kernels)" if design == "full"
           else ": the first variant, then one change at a time; `--design full` crosses them all)"),
        *([f"- **{n} of the {len(order)} variants have run**; the others are not in this report."]
          if n < len(order) else []),
        f"- Claims: {len(claims)} on {len(table)} pages; **{len(claims) - len(failing)} of {len(claims)} held in"
        f" every variant that asserted them**"
        + (f" ({sum(1 for c in claims if not c[2]['absent'])} were asserted in all {n})." if n else "."),
        "",
        "| variant | torch's kernels | commit | minutes | claims false |",
        "|---|---|---|---:|---:|",
    ]
    for v in order:
        if v.name not in results:
            continue
        r = results[v.name]
        false = sum(1 for _, _, row in claims if v.name in row["false"])
        ran_at = r.get("commit", "unknown")
        if r.get("rerun_commit"):
            ran_at += f", edited pages at {r['rerun_commit']}"
        lines.append(f"| {v.label} | {r['environment']['capability']} | {ran_at} | {r['seconds'] / 60:.1f} | {false} |")
    rerun = sorted({page for r in results.values() for page in r.get("rerun_pages", [])})
    if rerun:
        lines += ["", "Edited after their variant ran, and run again on that variant's own trained models: "
                  + ", ".join(rerun) + "."]
    if failing:
        lines += ["", "## Claims that did not hold everywhere", "", "| page | claim | held | false in |",
                  "|---|---|---:|---|"]
        for page, msg, row in failing:
            lines.append(f"| {page} | {_cell(msg)} | {_held(row)} | {', '.join(row['false'])} |")
    partial = [c for c in claims if c[2]["absent"] and not c[2]["false"]]
    if partial:
        lines += ["", "## Claims asserted in only some variants",
                  "", "Held wherever they were asserted; the other variants ran a version of the page "
                  "without them.", "", "| page | claim | held | not asserted in |", "|---|---|---:|---|"]
        for page, msg, row in partial:
            lines.append(f"| {page} | {_cell(msg)} | {len(row['held'])}/{len(row['held'])} |"
                         f" {', '.join(row['absent'])} |")
    lines += ["", "## Every claim", "", "| page | claim | held |", "|---|---|---:|"]
    for page, msg, row in claims:
        lines.append(f"| {page} | {_cell(msg)} | {_held(row)} |")
    return "\n".join(lines) + "\n"


def _held(row: dict) -> str:
    """"k/m": held in k of the m variants that asserted the claim."""
    return f"{len(row['held'])}/{len(row['held']) + len(row['false'])}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv=None) -> int:
    from rec11.sources import book_root

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", choices=("full", "axes"), default="full")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--threads", type=int, nargs="+", default=list(THREADS))
    parser.add_argument("--kernels", nargs="+", choices=tuple(KERNELS), default=list(KERNELS))
    parser.add_argument("--pages", nargs="*", default=[], help="pages to run (default: every page)")
    parser.add_argument("--work", type=Path, default=Path(".cache/robustness"))
    parser.add_argument("--resume", action="store_true", help="reuse the variants already in --work")
    parser.add_argument("--out", type=Path, default=Path("ROBUSTNESS.md"))
    parser.add_argument("--jobs", type=int, default=1, help="variants run at once (default 1)")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: write the report from the complete results in --work")
    args = parser.parse_args(argv)
    root = book_root()
    if root is None:
        sys.exit("rec11_tools.robustness: run it inside the book (no _config.yml above this folder)")
    args.work = args.work.resolve()  # the kernels run in the pages' folders
    args.work.mkdir(parents=True, exist_ok=True)
    code = commit(root)
    order = variants(args.design, args.seeds, args.threads, args.kernels)
    results, todo = {}, []
    for variant in order:
        saved = args.work / f"{variant.name}.json"
        done = saved.is_file() and json.loads(saved.read_text()).get("complete")
        if args.report:
            if done:
                results[variant.name] = json.loads(saved.read_text())
        elif args.pages and not done:  # its full run, when it comes, runs the pages as they are
            print(f"{variant.label}: not run in full yet, so not re-run", flush=True)
        elif args.resume and done and not args.pages:
            results[variant.name] = json.loads(saved.read_text())
            print(f"{variant.label}: reused", flush=True)
        else:
            todo.append(variant)

    def one(variant: Variant) -> None:
        print(f"{variant.label} ...", flush=True)
        results[variant.name] = run_variant(variant, args.work, args.pages, shared_cores=args.jobs > 1, code=code)
        args.out.write_text(report(results, order, root, args.design))  # after every variant: a stopped run keeps its rows
        false = sum(1 for run in results[variant.name]["pages"].values() for held, _ in run["claims"] if not held)
        print(f"{variant.label}: {results[variant.name]['seconds'] / 60:.1f} min, {false} claims false", flush=True)

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(one, todo))
    args.out.write_text(report(results, order, root, args.design))
    print(f"wrote {args.out}")
    failing = sum(1 for rows in tally(results).values() for row in rows.values() if row["false"])
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
