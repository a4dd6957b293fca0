"""Do the pages' claims hold for retrainings nobody has tried? Pages under freshly drawn seeds.

    python -m rec11_tools.robustness                     # 10 new retrainings of the book; writes ROBUSTNESS.md
    python -m rec11_tools.robustness --count 20          # 20 of them
    python -m rec11_tools.robustness --pages book/vae.md --count 10 --no-report   # make claims
    python -m rec11_tools.robustness --until 30          # every page topped up to 30 retrainings

A sentence about a trained model is a claim about a distribution: training at this scale is
chaotic, and the seed, the number of training threads (float rounding), torch's vector kernels
and MKL's code path each give other weights. So each retraining here draws a seed nobody has
used (at random from 1 to 999,999, never a fixed list) and a thread count and set of kernels
(every combination of 1 or 2 threads with this machine's own, AVX2 and portable kernels comes
up once in every six retrainings), retrains every model the pages need into an empty model
cache, and runs the pages with ``rec11_tools.claims`` (claims recorded, not raised).

Retrainings accumulate in ``--work``. The report pools, per page, every retraining that ran
the page's current code (its code cells and the ``rec11`` package): an edit to a page's prose
keeps them, an edit to its code or to the package starts its count again, except a commit that
rewords only claim messages (``rec11_tools.renames``, ``robustness/renamed.yml``). For each claim it
gives the number of retrainings, the failures, the worst value against the threshold, and the
**margin**: the mean distance from the threshold in standard deviations of that distance across
the retrainings. From the margins (a normal approximation) it estimates the chance that one
fresh retraining passes every claim of the book.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

THREADS = (1, 2)
KERNELS = {  # name: the environment that selects them ("" removes the variable)
    "native": {"ATEN_CPU_CAPABILITY": "", "MKL_CBWR": ""},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"},
    "default": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},
}
X86 = {"x86_64", "amd64", "i386", "i686"}  # where torch has AVX2 kernels to ask for
SEED_RANGE = (1, 1_000_000)  # seed 0 is the published book's
BAR = 4.0  # a claim's threshold must be this many standard deviations from its mean
VACUOUS = 10.0  # a threshold this many standard deviations beyond the worst value cannot fail
TARGET = 0.99  # the chance that a fresh retraining passes the whole book


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

    def environment(self, cache: Path, shared_cores: bool = False, root: Path | None = None) -> dict:
        env = {**os.environ, "REC11_SEED": str(self.seed), "REC11_TRAIN_THREADS": str(self.threads),
               "REC11_CACHE_DIR": str(cache)}
        if root is not None:  # the book's own packages, whatever checkout this Python has installed
            env["PYTHONPATH"] = os.pathsep.join([str((root / "src").resolve()),
                                                 *filter(None, [os.environ.get("PYTHONPATH")])])
        if shared_cores:  # threads that wait sleep instead of spinning; the arithmetic is the same
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        for key, value in KERNELS[self.kernels].items():
            if value:
                env[key] = value
            else:
                env.pop(key, None)
        return env


def kernel_axis(arch: str | None = None) -> list[str]:
    """The kernels this machine can be asked for: AVX2 only on x86.

    On Arm (GitHub's Linux arm64 and macOS runners) torch's own kernels are NEON or SVE,
    and Apple's BLAS is Accelerate: "native" reaches them, "default" is the portable code.
    """
    arch = (arch or platform.machine()).lower()
    return [name for name in KERNELS if name != "avx2" or arch in X86]


def draw(count: int, used: set[int] = frozenset(), rng: random.Random | None = None,
         kernels: list[str] | None = None) -> list[Variant]:
    """``count`` retrainings with seeds never used before, cycling through threads x kernels.

    The seeds come from the operating system's randomness (unless ``rng`` is given), so no
    two runs draw the same list; the axes are shuffled in blocks of every combination (six on
    x86, four on Arm), so that any such block of consecutive retrainings covers each once.
    """
    kernels = kernels or kernel_axis()
    rng = rng or random.SystemRandom()
    seeds: list[int] = []
    while len(seeds) < count:
        seed = rng.randrange(*SEED_RANGE)
        if seed not in used and seed not in seeds:
            seeds.append(seed)
    axes: list[tuple[int, str]] = []
    while len(axes) < count:
        block = [(t, k) for t in THREADS for k in kernels]
        rng.shuffle(block)
        axes += block
    return [Variant(seed, t, k) for seed, (t, k) in zip(seeds, axes)]


def commit_seed(root: Path) -> tuple[int, str]:
    """(seed, why): the retraining ``make test`` builds the book with.

    ``$REC11_SEED`` if set (to reproduce a run), else the commit's hash modulo 10,000, so
    that every commit CI tests is a new retraining while a re-run of one commit repeats it.
    """
    if os.environ.get("REC11_SEED", "").strip():
        return int(os.environ["REC11_SEED"]), "REC11_SEED was set"
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return 0, "no git commit: the published book's seed"
    return int(sha, 16) % 10_000, f"commit {sha[:10]} modulo 10,000"


def page_fingerprint(root: Path, page: str) -> str:
    """What a page's claims depend on: its code cells, comments included, and what the
    ``rec11`` modules they import do, transitively (not prose, nor modules the page does not
    reach). A comment edited in a page's cell therefore asks for the page's 30 retrainings again."""
    from rec11.sources import code_hash
    from rec11_book.shared.pagefacts import page_modules
    from rec11_book.shared.pages import code_cells

    text = (root / page).read_text()
    package = root / "src" / "rec11"  # the book's own package, not whichever this Python imports
    h = hashlib.sha256("\0".join(code_cells(text)).encode())
    h.update(code_hash(sorted(page_modules(text)), package if package.is_dir() else None).encode())
    return h.hexdigest()[:16]


def legacy_fingerprint(root: Path, page: str) -> str:
    """The fingerprint records made before 2026-12-03 carry: the page's code cells and the
    whole package. A record whose fingerprint is this page's legacy one ran its current code."""
    from rec11.sources import code_hash, module_closure
    from rec11_book.shared.pages import code_cells

    h = hashlib.sha256("\0".join(code_cells((root / page).read_text())).encode())
    package = sorted(name for name in module_closure(["rec11"]) if not name.startswith("rec11.book"))
    h.update(code_hash(package).encode())
    return h.hexdigest()[:16]


def migrate(results: dict[str, dict], root: Path, pages: list[str], fingerprints: dict[str, str]) -> None:
    """Give records of a page's current code made under the legacy fingerprint today's."""
    legacy = {page: legacy_fingerprint(root, page) for page in pages}
    for result in results.values():
        for page, run in result["pages"].items():
            if page in legacy and run.get("fingerprint") == legacy[page]:
                run["fingerprint"] = fingerprints[page]


def check_package(root: Path, env: dict) -> None:
    """Stop unless the pages' kernels would import the book's own ``rec11``: a record is
    labelled with the code under ``root``, so that is the code that must run. A book with no
    ``src/`` (one ``rec11_book.commands.newbook`` started) runs the packages it installed."""
    found = subprocess.run([sys.executable, "-c", "import rec11, rec11_tools; print(rec11.__file__); "
                            "print(rec11_tools.__file__)"], cwd=root / "book", env=env, capture_output=True,
                           text=True, check=False).stdout.split()
    src = (root / "src").resolve()
    if not src.is_dir() and len(found) == 2:  # a book that installs its packages (commands.newbook)
        return
    if len(found) != 2 or not all(Path(f).resolve().is_relative_to(src) for f in found):
        raise SystemExit(f"rec11_tools.robustness: the pages would import {found or 'no rec11'}, not the "
                         f"packages in {src}. Fix: run from that book's checkout, with its packages installed")


def run_variant(variant: Variant, work: Path, pages: list[str], root: Path, shared_cores: bool = False,
                code: str = "unknown", all_pages: bool = True) -> dict:
    """Retrain into an empty cache and run the pages; saves and returns the claims' JSON."""
    out = work / f"{variant.name}.part.json"  # the runner writes after every page; load() skips it
    cache = work / f"{variant.name}-models"
    shutil.rmtree(cache, ignore_errors=True)
    fingerprints = {page: page_fingerprint(root, page) for page in pages}
    env = variant.environment(cache, shared_cores, root)
    check_package(root, env)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rec11_tools.claims", "--json", str(out),
                           *[str(root / p) for p in pages]],
                          cwd=root, env=env, capture_output=True, text=True, check=False)
    (work / f"{variant.name}.log").write_text(proc.stdout + proc.stderr)
    shutil.rmtree(cache, ignore_errors=True)
    if not out.is_file():
        raise SystemExit(f"{variant.label}: the pages did not run\n{proc.stderr[-3000:]}")
    result = json.loads(out.read_text())
    for page, run in result["pages"].items():
        run["fingerprint"] = fingerprints.get(page)
    result.update(seed=variant.seed, threads=variant.threads, kernels=variant.kernels, commit=code,
                  date=datetime.date.today().isoformat(), seconds=time.perf_counter() - start,
                  complete=set(result["pages"]) == set(pages), all_pages=all_pages)
    if not result["complete"]:  # the runner stopped, not a claim: keep why, from its log
        result["stopped"] = stopped_because(proc.stdout + proc.stderr) or f"exit {proc.returncode}"
    out.write_text(json.dumps(result, indent=1))
    out.replace(work / f"{variant.name}.json")  # whole or not at all, for another run reading work
    return result


def stopped_because(log: str) -> str:
    """The exceptions a runner's log ends on, first (the cause) to last, each once, e.g.
    "zmq.error.ZMQError: Address already in use ... -> RuntimeError: Kernel died ..."."""
    found = []
    for line in log.splitlines():
        match = re.match(r"([\w.]*(?:Error|Exception)): (\S.*)", line.strip())
        if match and line.strip() not in found:
            found.append(line.strip())
    return " -> ".join(found)[:300]


def load(*folders: Path) -> dict[str, dict]:
    """Every finished retraining saved in ``folders`` (``.json``, or ``.json.gz`` as the
    committed records are kept), by variant name: one whose runner stopped before its last page
    too (``complete`` false, ``stopped`` saying why), for the pages it ran."""
    results = {}
    for folder in folders:
        for path in sorted(folder.glob("seed*.json*")) if folder.is_dir() else ():
            if path.name.endswith(".part.json") or not path.name.endswith((".json", ".json.gz")):
                continue
            name = path.name.removesuffix(".gz").removesuffix(".json")
            text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
            results.setdefault(name, json.loads(text))
    # by name, whichever folder each came from: the report's held-out check draws which values to
    # hold out by position, so the same records must give the same report
    return dict(sorted(results.items()))


def read_records(root: Path, pages: list[str], renamed: list[dict],
                 *folders: Path) -> tuple[dict[str, dict], dict[str, str]]:
    """Every record in ``folders``, as the report reads them: renamed claims carried to their
    new names and each record of ``pages`` labelled current or not by the page's fingerprint.
    Returns the records and those fingerprints."""
    from rec11_tools import renames

    results = load(*folders)
    fingerprints = {p: page_fingerprint(root, p) for p in pages}
    renames.carry(results, renamed)
    migrate(results, root, pages, fingerprints)
    return results, fingerprints


def current_runs(results: dict[str, dict], fingerprints: dict[str, str]) -> dict[str, int]:
    """Per page, the retrainings in ``results`` that ran its current code."""
    counts = dict.fromkeys(fingerprints, 0)
    for result in results.values():
        for page, run in result["pages"].items():
            if page in fingerprints and run.get("fingerprint") == fingerprints[page]:
                counts[page] += 1
    return counts


def top_up(counts: dict[str, int], until: int) -> list[list[str]]:
    """The pages each new retraining runs so that every page reaches ``until`` retrainings of
    its current code: the first runs every page still short, the last only the thinnest."""
    short = {page: until - n for page, n in counts.items() if n < until}
    return [[page for page, need in short.items() if need > i] for i in range(max(short.values(), default=0))]


def ran_current_code(result: dict, fingerprints: dict[str, str]) -> bool:
    """Whether a retraining ran some page's current code (else nothing it found counts now)."""
    return any(fingerprints.get(page) == run.get("fingerprint") for page, run in result["pages"].items())


def save_records(results: dict[str, dict], records: Path, fingerprints: dict[str, str]) -> int:
    """Keep, gzipped in ``records`` (committed with the report), every retraining that ran some
    page's current code, so that the next run, on any machine, pools with them; move the
    records in which no page's code is current any more to ``records/history/``, never
    deleting one: a failure stays on the record. Returns how many are current."""
    records.mkdir(parents=True, exist_ok=True)
    history = records / "history"
    kept = set()
    for name, result in results.items():
        # rewritten every time (a migrated fingerprint); the same record gives the same bytes
        data = gzip.compress(json.dumps(result, separators=(",", ":")).encode(), mtime=0)
        if ran_current_code(result, fingerprints):
            kept.add(name)
            (records / f"{name}.json.gz").write_bytes(data)
        elif not (records / f"{name}.json.gz").exists():
            # a fresh retraining whose pages changed before it was reported: straight to history
            history.mkdir(exist_ok=True)
            (history / f"{name}.json.gz").write_bytes(data)
    for path in records.glob("seed*.json.gz"):
        if path.name.removesuffix(".json.gz") not in kept:
            history.mkdir(exist_ok=True)
            path.replace(history / path.name)
    return len(kept)


@dataclass
class Claim:
    """One claim over the retrainings that ran its page's current code."""

    page: str
    message: str
    runs: int = 0  # retrainings that asserted it
    failures: int = 0
    slacks: tuple = ()  # per retraining, the worst distance on the right side of the threshold
    worst: dict | None = None  # the record (value, op, threshold) with the smallest slack
    exact: bool = False  # a bare assert: held or not, no value to measure a margin by
    values: tuple = ()  # per retraining, the value of the worst call
    keys: tuple = ()  # per retraining, its record's name, beside ``values``
    decades: bool = False  # stated as log10 of the quantity (tails reads it back)
    tail: tuple | None = None  # (fail chance, family) from the fitted tail (rec11_tools.tails)

    @property
    def margin(self) -> float:
        """Mean slack over its standard deviation across retrainings; inf if it never moves."""
        if self.exact or len(self.slacks) < 2:
            return math.nan
        mean, sd = statistics.fmean(self.slacks), statistics.stdev(self.slacks)
        if sd == 0:
            return math.inf if mean > 0 else -math.inf
        return mean / sd

    @property
    def fail_chance(self) -> float:
        """The chance one fresh retraining fails it: normal tail beyond the margin, or the failure rate."""
        if self.exact or math.isnan(self.margin):
            return self.failures / self.runs if self.runs else 0.0
        return 0.5 * math.erfc(self.margin / math.sqrt(2))


def summarize(results: dict[str, dict], fingerprints: dict[str, str]) -> list[Claim]:
    """Every claim of the pages in ``fingerprints``, pooled over the retrainings of that code.

    A claim asserted more than once in a run (in a loop) counts its worst call. A cell that
    raised is a claim of its own, "runs without error". A claim missing from a run in which
    a cell raised was not reached: a failure; missing from a run without an error, it was
    not asserted there (it sits in a branch that did not run) and that run does not count.
    Thinnest margin first.
    """
    from rec11.claims import slack

    def slack_of(record: dict) -> float:
        return slack(record["value"], record["op"], record["threshold"])

    claims: list[Claim] = []
    for page, fingerprint in fingerprints.items():
        runs = []  # per retraining of this code: ({message: [records]}, stopped by an error, its name)
        for key, result in results.items():
            run = result["pages"].get(page)
            if run is None or run.get("fingerprint") != fingerprint:
                continue
            seen: dict[str, list[dict]] = {}
            for record in run["claims"]:
                seen.setdefault(record["message"], []).append(record)
            for error in run["errors"]:
                seen[f"line {error['line']} runs without error ({error['error'].splitlines()[0][:80]})"] = [
                    {"held": False}]
            runs.append((seen, bool(run["errors"]), key))
        messages = dict.fromkeys(m for seen, _, _ in runs for m in seen)
        for message in messages:
            c = Claim(page, message)
            for seen, stopped, key in runs:
                records = seen.get(message)
                if records is None:
                    if stopped and "runs without error" not in message:  # not reached
                        c.runs, c.failures = c.runs + 1, c.failures + 1
                    elif "runs without error" in message:  # the error did not happen here
                        c.runs += 1
                        c.exact = True
                    continue
                c.runs += 1
                c.failures += not all(r["held"] for r in records)
                if "value" in records[0]:
                    worst = min(records, key=slack_of)
                    if c.worst is None or slack_of(worst) < slack_of(c.worst):
                        c.worst = worst
                    c.slacks += (slack_of(worst),)
                    c.values += (worst["value"],)
                    c.keys += (key,)
                else:
                    c.exact = True
            claims.append(c)
    return sorted(claims, key=lambda c: (-c.fail_chance, c.margin if not math.isnan(c.margin) else math.inf,
                                         c.page, c.message))


def percent(chance: float) -> str:
    """A chance to two decimals, never rounded up to certainty (99.996 % is "> 99.99 %")."""
    return "> 99.99 %" if chance < 1 and round(100 * chance, 2) >= 100 else f"{100 * chance:.2f} %"


def book_pass_chance(claims: list[Claim]) -> float:
    """The chance a fresh retraining passes every claim, taking the claims as independent."""
    return math.prod(1 - c.fail_chance for c in claims)


def fitted_pass_chance(claims: list[Claim], root: Path) -> dict:
    """The tail-fitted estimate (``rec11_tools.tails``): each measured claim's failure chance
    on its natural scale, and the whole book's pass chance with its 95 % lower bound."""
    from rec11_tools import simulable, tails

    decades = {page: tails.decade_claims((root / page).read_text())
               for page in {c.page for c in claims} if (root / page).is_file()}
    measured = [c for c in claims if not c.exact and c.values and c.worst]
    for c in measured:
        c.decades = c.message in decades.get(c.page, set())
    known = [simulable.rate(c.page, c.message, root) for c in measured]  # where draws alone decide
    same = same_quantity(measured)
    values = pooled(measured, same)
    together, implied = with_implied(measured, same, root)
    edge = tails.edge_check([(c.values, c.worst["op"], c.decades) for c, k in zip(measured, known)
                             if not k and not c.failures])
    out = tails.book_pass([(v, c.worst["threshold"], c.worst["op"], c.decades, k and k[2])
                           for c, v, k in zip(measured, values, known)], together,
                          counted=[(c.failures, c.runs) for c in claims if c not in measured and c.runs],
                          calibration=edge)
    out["edge"] = edge
    for c, tail in zip(measured, out["per_claim"]):
        c.tail = tail
    out["same"] = [(measured[first], c) for c, first in zip(measured, same) if c is not measured[first]]
    out["implied"] = implied
    return out


def with_implied(claims: list[Claim], same: list[int], root: Path) -> tuple[list[int], list[tuple[Claim, Claim]]]:
    """``same``, with each claim that follows from another (``robustness/flags.yml``, "implied",
    each with its written reason) put in the group of the claim it follows from: if that one
    holds, so does this one, so this one fails only in a retraining where that one fails too,
    and the pair fails as often as the likelier of the two (``tails.book_pass`` takes a group's
    largest chance). Values are not pooled: they are two quantities. Returns the groups, and
    the (claim, the claim it follows from) pairs that joined them."""
    notes = flag_notes(root)
    index = {c.message: i for i, c in enumerate(claims)}
    together, pairs = list(same), []
    for item in notes.get("implied") or []:
        i, j = index.get(item["claim"]), index.get(item["follows_from"])
        if i is None or j is None or together[i] == together[j]:
            continue
        if refuted(claims[i], claims[j]):
            raise ValueError(f"robustness/flags.yml: {item['claim']!r} failed in a retraining where"
                             f" {item['follows_from']!r}, which it is said to follow from, held: the reason"
                             " is wrong; take the entry out or correct it")
        old, new = together[i], together[j]
        together = [new if group == old else group for group in together]
        pairs.append((claims[i], claims[j]))
    return together, pairs


SAME_LEAST = 10  # retrainings two claims must share, every one with one value, to count as one quantity


def same_quantity(claims: list[Claim], least: int = SAME_LEAST) -> list[int]:
    """For each claim, the first claim before it that measures the same quantity (itself when
    none does): the same operator and threshold, and one value in each of at least ``least``
    retrainings that ran both, values that vary (two claims that never move are not evidence of
    one quantity). Two pages that compute one number from one trained model fail together."""
    first = list(range(len(claims)))
    by_key = [dict(zip(c.keys, c.values)) for c in claims]
    for j, b in enumerate(claims):
        for i in range(j):
            a = claims[i]
            if first[i] != i or (a.worst["op"], a.worst["threshold"]) != (b.worst["op"], b.worst["threshold"]):
                continue
            shared = by_key[i].keys() & by_key[j].keys()
            values = [by_key[i][k] for k in shared]
            if (len(shared) >= least and len(set(values)) > 1
                    and all(math.isclose(by_key[i][k], by_key[j][k], rel_tol=1e-12, abs_tol=1e-300) for k in shared)):
                first[j] = i
                break
    return first


def pooled(claims: list[Claim], same: list[int]) -> list[tuple]:
    """Each claim's values for its fit: for claims that measure one quantity (``same``), the
    quantity's value in every retraining that measured it, on any of their pages (a retraining
    that ran both pages gave both the same value, so it counts once). A page run on its own adds
    its retrainings to the quantity's evidence instead of standing apart with fewer values."""
    union: dict[int, dict[str, float]] = {}
    for c, first in zip(claims, same):
        union.setdefault(first, {}).update(zip(c.keys, c.values))
    return [tuple(union[first].values()) if len(union[first]) > len(c.values) else c.values
            for c, first in zip(claims, same)]


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


def unfit_code(root: Path, pages: list[str]) -> str:
    """Why the pages' code cannot be committed as it is, or "" when it can: a code line too wide
    for a phone fails ``make check``, and wrapping it afterwards changes the page's code, so the
    retrainings about to run would no longer count as that page's (they did not, once)."""
    from rec11_book.shared.pages import CODE_COLUMNS, long_code_lines

    wide = [(page, line, text) for page in pages for line, text in long_code_lines((root / page).read_text())]
    if not wide:
        return ""
    page, line, text = wide[0]
    return (f"{page}:{line}: a code line of {len(text)} characters, over {CODE_COLUMNS}"
            " (tests/unit/test_page_code.py). Fix: wrap it first: a wrap after the"
            " retrainings changes the page's code, and their records would not count as its")


def commit(root: Path) -> str:
    """The code a run starts from: the commit, and where ``src`` or ``book`` differ from it,
    a digest of the difference ("abc1234+d41d8cd9"), so that a record names the code that
    ran, not only the commit it was edited from."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, check=True).stdout.strip()
        diff = subprocess.run(["git", "diff", "HEAD", "--", "src", "book"], cwd=root,
                              capture_output=True, check=True).stdout
        new = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "--", "src", "book"],
                             cwd=root, capture_output=True, text=True, check=True).stdout.split()
        for name in sorted(new):  # files not yet in git are part of the code too
            diff += name.encode() + (root / name).read_bytes()
        return sha + (f"+{hashlib.sha256(diff).hexdigest()[:8]}" if diff else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _number(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else ("∞" if x > 0 else "−∞")


def _margin(c: Claim) -> str:
    if c.exact:
        return "exact"
    return _number(c.margin) if not math.isnan(c.margin) else "n/a"


def _worst(c: Claim) -> str:
    if c.worst is None:
        return ""
    return f"{_number(c.worst['value'])} {c.worst['op']} {_number(c.worst['threshold'])}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def verdict(c: Claim, bar: float = BAR) -> str:
    if c.failures:
        return "**fails**"
    if c.exact:
        return "held"
    if math.isnan(c.margin) or c.margin < bar:
        return "**thin**"
    return "holds"


def table(claims: list[Claim]) -> list[str]:
    """The claims as a Markdown table, thinnest margin first."""
    lines = ["| page | claim | retrainings | failures | worst value | chance to fail (fit) |"
             " margin (σ) | verdict |",
             "|---|---|---:|---:|---|---|---:|---|"]
    for c in sorted(claims, key=lambda c: -(c.tail[0] if c.tail else c.fail_chance)):
        lines.append(f"| {c.page} | {_cell(c.message)} | {c.runs} | {c.failures} | {_worst(c)} |"
                     f" {_tail(c)} | {_margin(c)} | {verdict(c)} |")
    return lines


def _tail(c: Claim) -> str:
    if c.tail is None:
        return "exact" if c.exact else ""
    chance, family = c.tail
    if family == "simulated":
        return f"{chance:.1e} (simulated: 95 % upper bound)"
    return f"{chance:.1e} ({family}{', in decades' if c.decades else ''})"


def failed_pages(result: dict, fingerprints: dict[str, str] | None = None) -> list[str]:
    """The pages of one retraining that failed a claim or stopped on an error: of every page it
    ran, or only of those whose code is ``fingerprints``' (the current code)."""
    return [page for page, run in result["pages"].items()
            if (fingerprints is None or fingerprints.get(page) == run.get("fingerprint"))
            and (any(not c["held"] for c in run["claims"]) or run["errors"])]


def whole_book_line(books: list[dict], fingerprints: dict[str, str] | None) -> str:
    """How the whole-book retrainings went: the ones that ran every page's current code, with
    the distribution-free bound they give, and beside them failures in code changed since."""
    if fingerprints is None:  # every record counts as current
        fingerprints = {page: run.get("fingerprint") for r in books for page, run in r["pages"].items()}
    stopped = [r for r in books if not r.get("complete", True)]  # the runner stopped before the last page
    books = [r for r in books if r.get("complete", True)]
    current = [r for r in books if all(fingerprints.get(page) == run.get("fingerprint")
                                       for page, run in r["pages"].items())]
    failed = sum(1 for r in current if failed_pages(r, fingerprints))
    line = (f"- Whole-book retrainings that ran every page's current code: {len(current)} of {len(books)};"
            f" {failed} of them failed a claim")
    if current:
        from rec11_tools.simulable import upper_bound  # Clopper-Pearson: 1 - 0.05 ** (1 / n) with none failing

        bound = upper_bound(failed, len(current))
        line += (f". With {failed or 'none'} failing in {len(current)}, a whole-book failure rate"
                 f" above {100 * bound:.0f} % is ruled out at 95 % confidence, whatever the distribution")
    older = sum(1 for r in books if failed_pages(r) and not failed_pages(r, fingerprints))
    if older:
        line += (f". {older} more failed only on pages whose code has changed since (the claim restated or"
                 " removed, in the ledger below, or the model or code it checks changed)")
    if stopped:
        line += (f". {len(stopped)} more stopped before their last page, not on a claim (the runner failed:"
                 f" {'; '.join(sorted({r.get('stopped', 'no reason kept') for r in stopped}))}); they are not"
                 " counted as whole-book retrainings, and the pages they ran count as single pages")
    return line + "."


def edge_line(edge: dict) -> str:
    """The method against held-out retrainings at the edge of the data (``tails.edge_check``)."""
    parts = []
    for name, what in (("upper", "a claim that fails above its threshold"),
                       ("lower", "one that fails below it")):
        t = edge[name]
        if t["claims"]:
            parts.append(f"for {what} ({t['claims']} claims), {t['predicted']:.1f} values beyond the worst of"
                         f" the others, where exchangeable retrainings put {t['exchangeable']:.1f} and"
                         f" {t['observed']} were")
    if not parts:
        return "- The edge check (held-out retrainings) had no claim with enough values to check."
    factors = [f"{name} {edge[name]['factor']:.2f}" for name in ("upper", "lower") if edge[name]["factor"] > 1]
    return ("- **Checked on held-out retrainings**: each claim's values held out one at a time, the method"
            " given the rest expected " + "; ".join(parts) + ". "
            + (f"Where it expected fewer than exchangeability requires, every fitted chance on that side is"
               f" multiplied by the shortfall ({', '.join(factors)}), so that the estimate is not too hopeful"
               " where it can be checked; how far the tail goes beyond the data, no check can say."
               if factors else "At the edge the method is not too hopeful on either side; beyond the data no"
               " check can say."))


def _pages_cell(r: dict) -> str:
    if r.get("all_pages"):
        return "all" if r.get("complete", True) else f"all planned; stopped after {len(r['pages'])}"
    return ", ".join(r["pages"])


def refuted(claim: Claim, source: Claim) -> bool:
    """Whether some retraining that measured both saw ``claim`` fail while ``source`` held."""
    from rec11.claims import OPS

    def held(c: Claim, value: float) -> bool:
        return OPS[c.worst["op"]](value, c.worst["threshold"])

    theirs = dict(zip(source.keys, source.values))
    return any(not held(claim, v) and held(source, theirs[k]) for k, v in zip(claim.keys, claim.values)
               if k in theirs)


def implied_line(pairs: list[tuple[Claim, Claim]]) -> str:
    """The claims counted within the claim they follow from, said after the headline."""
    if not pairs:
        return ": none here"
    return ": " + "; ".join(f"{a.page} '{a.message}' within {b.page} '{b.message}'" for a, b in pairs)


def same_line(pairs: list[tuple[Claim, Claim]]) -> str:
    """The claims counted once with another, said after the headline."""
    if not pairs:
        return ": none here"
    named = "; ".join(f"{b.page} '{b.message}' with {a.page}" for a, b in pairs)
    return f": {named}"


def report(results: dict[str, dict], claims: list[Claim], root: Path, runner: str = "",
           fingerprints: dict[str, str] | None = None) -> str:
    from rec11_tools import simulable

    runs = sorted(results.values(), key=lambda r: (r.get("date", ""), r["seed"]))
    books = [r for r in runs if r.get("all_pages")]  # stopped ones too: whole_book_line says why
    whole = [r for r in books if r.get("complete", True)]
    measured = [c for c in claims if not c.exact]
    thin = [c for c in claims if verdict(c) != "holds" and verdict(c) != "held"]
    n = [c.runs for c in claims] or [0]
    chance = book_pass_chance(claims)
    fitted = fitted_pass_chance(claims, root)
    lines = [
        "# Robustness: the pages' claims over fresh retrainings",
        "",
        "Written by `make robustness` (`python -m rec11_tools.robustness`). Each retraining draws a seed",
        "nobody has used, a number of training threads and a set of CPU kernels, retrains every model a",
        "page needs into an empty model cache, and runs the page with its claims recorded, not raised.",
        "Each measured claim's **chance to fail** a fresh retraining is read off a tail fitted to its",
        "values (`rec11_tools.tails`); the claims most likely to fail come first. The **margin**, the",
        "mean distance from the threshold in standard deviations, is kept beside it for comparison"
        f" (bar {BAR:g});",
        "it assumes a normal tail. Failures are never deleted: records of older code move to",
        "`robustness/history/`, and the restated claims are listed at the end.",
        "",
        f"- Date: {datetime.date.today().isoformat()}",
        f"- Machine: {machine()}" + (f" (runner: {runner})" if runner else ""),
        f"- Commit: {commit(root)}",
        f"- Retrainings of the whole book: {len(whole)}; of single pages (`make claims`, or a whole book's"
        f" that stopped): {len(runs) - len(whole)}."
        f" Each claim was checked in {min(n) if min(n) == max(n) else f'{min(n)} to {max(n)}'}"
        " retrainings of its page's current code.",
        f"- Claims: {len(claims)}, of which {len(measured)} measure a value against a threshold and"
        f" {len(claims) - len(measured)} are exact (a bare assert: the code's own facts, no trained model).",
        f"- Failures: {sum(c.failures for c in claims)} in all; claims below the bar of {BAR:g} σ or failing:"
        f" {len(thin)}.",
        f"- **Estimated chance that a fresh retraining passes every claim: at least"
        f" {percent(fitted['lower'])}** (95 % lower bound; point estimate {percent(fitted['point'])};"
        f" target: a lower bound of {100 * TARGET:g} %). Each measured claim's chance to fail is"
        " read off a tail fitted to its values on the quantity's own scale (normal, lognormal,"
        " Weibull or half-normal, weighted by AIC), with the spread that n values leave in its"
        " parameters (exact posteriors; a reflected bootstrap for the Weibull);"
        " a claim that has failed gets its chance from its counts instead (failures over retrainings,"
        " with a Beta posterior's spread), since a tail its own failure contradicts is no evidence;"
        " the bound comes from the same parameter draws; the claims are taken as independent"
        " (`rec11_tools.tails`, validated where the failure rate can be simulated exactly),"
        f" except that claims with one value in every retraining that ran both (at least {SAME_LEAST},"
        " values that vary) measure one quantity and count once, fitted to its value in every"
        " retraining that measured it on either page" + same_line(fitted["same"]) + ";"
        " and that a claim that follows from another (`robustness/flags.yml`, each with its"
        " reason) can fail only where that one fails too, so the two count once, with the larger"
        " chance" + implied_line(fitted["implied"]) + "."
        " Where a claim's value comes from random draws alone, with no trained model, its"
        f" chance is instead the 95 % upper bound of its failure rate over {simulable.DRAWS:,}"
        " simulated draws (`rec11_tools.simulable`).",
        edge_line(fitted["edge"]),
        f"- The earlier estimate, each claim's value taken as normal: {percent(chance)}. It assumed"
        " short tails, and was too hopeful for small positive quantities.",
    ]
    if books:
        lines.append(whole_book_line(books, fingerprints))
    lines += ["", "## Retrainings", "",
              "| seed | training threads | kernels | torch's kernels | pages | date | commit | minutes |",
              "|---:|---:|---|---|---:|---|---|---:|"]
    for r in runs:
        lines.append(f"| {r['seed']} | {r['threads']} | {r['kernels']} | {r['environment']['capability']} |"
                     f" {_pages_cell(r)} | {r.get('date', '')} |"
                     f" {r.get('commit', 'unknown')} | {r['seconds'] / 60:.1f} |")
    lines += ["", "## Every claim", "", *table(claims)]
    lines += _flags_section(claims, root)
    lines += _ledger_section(root)
    return "\n".join(lines) + "\n"


def flag_notes(root: Path) -> dict:
    """``robustness/flags.yml`` as written: the implied claims and the reasons ({} if none)."""
    import yaml

    path = root / "robustness" / "flags.yml"
    return (yaml.safe_load(path.read_text()) if path.is_file() else None) or {}


def flags(claims: list[Claim], root: Path) -> dict[str, list[tuple[Claim, str]]]:
    """The claims that check less than their sentence says, each with its written reason
    (``robustness/flags.yml``) or "": constant, vacuous and implied (see that file)."""
    notes = flag_notes(root)
    reasons = notes.get("reasons") or {}
    by_message = {c.message: c for c in claims}
    out: dict[str, list[tuple[Claim, str]]] = {"constant": [], "vacuous": [], "implied": []}
    for c in claims:
        if c.exact or len(c.values) < 2:
            continue
        spread = statistics.stdev(c.values)
        if spread == 0:
            out["constant"].append((c, reasons.get(c.message, "")))
        elif min(c.slacks) > VACUOUS * spread:
            out["vacuous"].append((c, reasons.get(c.message, "")))
    for item in notes.get("implied") or []:
        if item["claim"] in by_message:
            out["implied"].append((by_message[item["claim"]],
                                   f"follows from {item['follows_from']}: {item['reason']}"))
    return out


def _flags_section(claims: list[Claim], root: Path) -> list[str]:
    found = flags(claims, root)
    lines = ["", "## Claims that check little", "",
             "A value that never moved is an exact fact reported as a measurement; a threshold"
             f" more than {VACUOUS:g} standard deviations beyond the worst value seen cannot fail"
             " a fair retraining, so it checks less than its sentence may say; a claim that"
             " follows from another adds nothing. Each needs its threshold set to what its words"
             " mean, or a written reason (`robustness/flags.yml`).", "",
             "| kind | page | claim | worst value | reason |", "|---|---|---|---|---|"]
    for kind, items in found.items():
        for c, reason in items:
            lines.append(f"| {kind} | {c.page} | {_cell(c.message)} | {_worst(c)} |"
                         f" {_cell(reason) or '**none yet**'} |")
    return lines


def _ledger_section(root: Path) -> list[str]:
    """The restated claims and the records kept from older code, so that the report's
    statistics (over the current code) stand beside the history that led to them."""
    from rec11_tools import ledger

    path = root / "robustness" / "ledger.yml"
    if not path.is_file():
        return []
    entries = ledger.load(path)
    counted = [e for e in entries if e["kind"] in ("restated", "removed")]
    history = root / "robustness" / "history"
    kept = len(list(history.glob("seed*.json*"))) if history.is_dir() else 0
    return ["", "## Restated claims", "",
            f"Every claim restated or removed after a retraining broke it, or left it thin:"
            f" {len(counted)} in {len({e['commit'] for e in counted})} commits"
            f" (`robustness/ledger.yml`). The statistics above count only retrainings of the"
            f" current code; this is the history beside them. Records of older code are kept in"
            f" `robustness/history/` ({kept} there), failures included.", "",
            ledger.markdown_table(entries).rstrip("\n")]


def main(argv=None) -> int:
    from rec11.sources import book_root
    from rec11_tools import renames
    from rec11_tools.run_pages import book_pages

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10, help="new retrainings to run (default 10)")
    parser.add_argument("--pages", nargs="*", default=[], help="pages to run (default: every page)")
    parser.add_argument("--until", type=int, default=0,
                        help="instead of --count: as many retrainings as it takes for every page (of"
                             " --pages) to have this many of its current code, each running only the"
                             " pages still short")
    parser.add_argument("--work", type=Path, default=Path(".cache/robustness"),
                        help="models and logs of the retrainings that run now (default .cache/robustness)")
    parser.add_argument("--records", type=Path, default=None,
                        help="committed records of earlier retrainings, pooled with --work's and updated"
                             " with the report (default: robustness/ beside ROBUSTNESS.md)")
    parser.add_argument("--out", type=Path, default=Path("ROBUSTNESS.md"))
    parser.add_argument("--no-report", action="store_true", help="print the claims; leave ROBUSTNESS.md alone")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="retrainings at once (default: one per core)")
    parser.add_argument("--report", action="store_true", help="run nothing: report what --work holds")
    parser.add_argument("--runner", default=os.environ.get("REC11_RUNNER", ""),
                        help="a name for this machine in failures (the CI runner's kind)")
    args = parser.parse_args(argv)
    root = book_root()
    if root is None:
        sys.exit("rec11_tools.robustness: run it inside the book (no _config.yml above this folder)")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    every = [p.relative_to(root).as_posix() for p in book_pages(root)]
    pages = [Path(p).resolve().relative_to(root).as_posix() for p in args.pages] or every
    missing = [p for p in pages if not (root / p).is_file()]
    if missing:
        sys.exit(f"rec11_tools.robustness: no such page: {', '.join(missing)}")
    if not args.report:
        unfit = unfit_code(root, pages)
        if unfit:
            sys.exit("rec11_tools.robustness: " + unfit)
    code = commit(root)
    records = (args.records or args.out.resolve().parent / "robustness").resolve()
    earlier = load(work, records)
    renamed = renames.load(records / "renamed.yml")
    if args.until:
        fingerprints = {p: page_fingerprint(root, p) for p in pages}
        renames.carry(earlier, renamed)
        migrate(earlier, root, pages, fingerprints)
        plan = top_up(current_runs(earlier, fingerprints), args.until)
    else:
        plan = [pages] * args.count
    todo = [] if args.report else draw(len(plan), {r["seed"] for r in earlier.values()})
    print(f"{len(todo)} retrainings of {len(pages)} page{'s' * (len(pages) > 1)}, {args.jobs} at a time: "
          + ", ".join(v.label for v in todo), flush=True)
    pages_of = dict(zip(todo, plan))

    def one(variant: Variant) -> None:
        result = run_variant(variant, work, pages_of[variant], root, shared_cores=args.jobs > 1, code=code,
                             all_pages=set(pages_of[variant]) == set(every))
        false = [f"{p}: {c['message']}" for p, run in result["pages"].items() for c in run["claims"]
                 if not c["held"]]
        false += [f"{p}:{e['line']}: {e['error']}" for p, run in result["pages"].items() for e in run["errors"]]
        print(f"{variant.label}: {result['seconds'] / 60:.1f} min, {len(false)} false"
              + "".join(f"\n  {f}" for f in false), flush=True)

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        list(pool.map(one, todo))
    results, fingerprints = read_records(root, every, renamed, work, records)
    claims = summarize(results, {p: fingerprints[p] for p in (every if not args.no_report else pages)})
    if args.no_report:
        print("\n".join(table(claims)))
        fitted = fitted_pass_chance(claims, root)
        print(f"\nChance a fresh retraining passes these {len(claims)} claims (fitted tails):"
              f" {percent(fitted['point'])}, 95 % lower bound {percent(fitted['lower'])}")
        # make claims: the evidence for a new claim is committed with its page
        kept = save_records(results, records, fingerprints)
        print(f"{kept} retrainings' records in {records}: commit them with the page")
    else:
        current = {name: r for name, r in results.items() if ran_current_code(r, fingerprints)}
        args.out.write_text(report(current, claims, root, args.runner, fingerprints))
        kept = save_records(results, records, fingerprints)
        print(f"wrote {args.out}; {kept} retrainings' records in {records}")
    failed = [c for c in claims if c.failures]
    where = args.runner or machine()
    for c in failed:  # one line each; GitHub shows "::error::" lines on the run's page
        prefix = "::error::" if os.environ.get("GITHUB_ACTIONS") else "FAILED: "
        print(f"{prefix}{c.page}: {c.message}: failed {c.failures} of {c.runs} retrainings on {where}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
