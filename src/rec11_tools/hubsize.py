"""From the kernel measurements (rec11_tools.sizing) to a hub's size and per-user limits.

    python -m rec11_tools.hubsize            # print the tables; write deploy/jupyterhub/SIZING.md

The rules, each from a measured number (``deploy/jupyterhub/sizing.json``):

* **A reader's memory** is their single-user server (``server_mb``) plus their kernels.
  Live Code starts one kernel per page; the page shuts it down when the reader leaves
  (and the server culls kernels left idle), so a reader has one kernel, two while a
  page is being left. Peaks are each page's highest in any round. A recitation's room
  moves through the pages together, so the whole room can be on the heaviest page at
  once: the **guarantee** (what the scheduler reserves, so nodes are never over-packed)
  is the server plus the heaviest page's kernel peak, rounded up to 128 MB; the **limit**
  is the server plus the heaviest page's kernel peak plus a median kernel being left
  behind, with 20 % headroom for a student's own experiments, rounded up to 256 MB. Over
  the limit a kernel is killed (and the page says so).
* **Cores** come from two loads. *Steady*: each active reader runs one page's cells per
  page-time (the session's minutes over its pages), costing the median page's CPU
  seconds. *Burst*: the room clicks Live Code on the same page within ``BURST_S``
  seconds; each kernel costs the first page's CPU seconds (start, imports, set-up
  cells). Cores are provisioned at ``BURST_UTILISATION`` of that work, because the time
  to first output grows with kernels per core (measured for N = 1, 2, 4, 8: at one
  kernel per core it stays near a quiet kernel's; beyond, it grows with the queue).
* A class of S students at 60 % concurrency has ``ceil(0.6 S)`` active readers.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SIZING = ROOT / "deploy" / "jupyterhub" / "sizing.json"
REPORT = ROOT / "deploy" / "jupyterhub" / "SIZING.md"
CLASSES = (50, 150, 300)
CONCURRENCY = 0.6
HEADROOM = 1.2
BURST_S = 60.0            # s: the room clicks Live Code within a minute
BURST_UTILISATION = 0.5   # busy half the time at the burst: first outputs stay near a quiet kernel's
CPU_LIMIT = 1.0       # cores: a kernel runs one thread (REC11_THREADS=1)
CPU_GUARANTEE = 0.1   # cores: the steady need is far below this (see the table); Kubernetes' usual floor


def load(path: Path = SIZING) -> dict:
    import json

    return json.loads(Path(path).read_text())


def session_minutes(book: Path = ROOT) -> float:
    config = yaml.safe_load((book / "_config.yml").read_text())
    subs = config.get("parse", {}).get("myst_substitutions", {})
    found = subs.get("session_minutes") or _find(config, "session_minutes")
    return float(found or 80)


def _find(tree, key):
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k == key:
                return v
            hit = _find(v, key)
            if hit is not None:
                return hit
    return None


def round_up(mb: float, step: int) -> int:
    return int(math.ceil(mb / step) * step)


def per_page(data: dict) -> dict[str, dict]:
    """page -> {peak_mb, cpu_s, first_output_s} from the one-student round (a quiet kernel)."""
    one = next(r for r in data["rounds"] if r["n"] == 1)
    return {page: one["students"][0][page] for page in data["pages"]}


def by_n(data: dict) -> list[dict]:
    """For each N: the first page's time to first output (everyone clicked at once), and the rest."""
    first = data["pages"][0]
    rows = []
    for r in data["rounds"]:
        firsts = [s[first]["first_output_s"] for s in r["students"]]
        every = [s[p]["first_output_s"] for s in r["students"] for p in data["pages"]]
        peaks = [s[p]["peak_mb"] for s in r["students"] for p in data["pages"]]
        cpus = [s[p]["cpu_s"] for s in r["students"] for p in data["pages"]]
        rows.append({"n": r["n"], "kernels_per_core": r["n"] / data["machine"]["cores"],
                     "first_page_median_s": statistics.median(firsts), "first_page_max_s": max(firsts),
                     "all_pages_median_s": statistics.median(every), "peak_mb_max": max(peaks),
                     "cpu_s_median": statistics.median(cpus), "wall_s": r["wall_s"],
                     "load_before": r["load_before"], "load_after": r["load_after"]})
    return rows


def page_peaks(data: dict) -> dict[str, float]:
    """page -> its kernel's highest peak in any round (kernels run side by side peak a little higher)."""
    return {page: max(s[page]["peak_mb"] for r in data["rounds"] for s in r["students"]) for page in data["pages"]}


def recommend(data: dict) -> dict:
    pages = per_page(data)
    peaks = list(page_peaks(data).values())
    server = data["server_mb"]
    guarantee = round_up(server + max(peaks), 128)
    limit = round_up((server + max(peaks) + statistics.median(peaks)) * HEADROOM, 256)
    return {"server_mb": server, "kernel_peak_median_mb": statistics.median(peaks),
            "kernel_peak_max_mb": max(peaks), "memory_guarantee_mb": guarantee, "memory_limit_mb": limit,
            "cpu_guarantee": CPU_GUARANTEE, "cpu_limit": CPU_LIMIT,
            "cpu_s_per_page_median": statistics.median(row["cpu_s"] for row in pages.values()),
            "cpu_s_first_page": pages[data["pages"][0]]["cpu_s"]}


def class_table(data: dict, book: Path = ROOT) -> list[dict]:
    rec = recommend(data)
    page_seconds = session_minutes(book) * 60 / len(data["pages"])
    rows = []
    for students in CLASSES:
        active = math.ceil(CONCURRENCY * students)
        steady = active * rec["cpu_s_per_page_median"] / page_seconds
        burst = active * rec["cpu_s_first_page"] / BURST_S / BURST_UTILISATION
        rows.append({
            "students": students, "active": active,
            "memory_guaranteed_gb": active * rec["memory_guarantee_mb"] / 1024,
            "memory_all_at_limit_gb": active * rec["memory_limit_mb"] / 1024,
            "cores_steady": steady, "cores_burst": burst, "cores": math.ceil(max(steady, burst)),
        })
    return rows


def gigabytes(mb: int) -> str:
    """Kubernetes quantity for a Zero to JupyterHub config: 512M, 1.5G."""
    return f"{mb / 1024:g}G" if mb >= 1024 and mb % 512 == 0 else f"{mb}M"


def markdown(data: dict, book: Path = ROOT) -> str:
    rec = recommend(data)
    pages = per_page(data)
    lines = [
        "# Sizing the hub for Recitation 11",
        "",
        f"Measured by `python -m rec11_tools.sizing` on {data['machine']['date']}, {data['machine']['cores']} cores "
        f"(shared with other work: the load average is listed with each round), Python {data['machine']['python']}; "
        "tables by `python -m rec11_tools.hubsize`. Each kernel runs one thread and loads the models from the cache.",
        "",
        "## One kernel per page (one student, a quiet kernel)",
        "",
        "| page | kernel peak memory (MB) | highest peak, any N (MB) | kernel CPU (s) "
        "| kernel start to first output (s) |",
        "|---|---:|---:|---:|---:|",
    ]
    highest = page_peaks(data)
    for page, row in pages.items():
        lines.append(f"| {page} | {row['peak_mb']:.0f} | {highest[page]:.0f} | {row['cpu_s']:.1f} | "
                     f"{row['first_output_s']:.1f} |")
    lines += [
        "",
        f"A reader's single-user server (idle Jupyter server with this environment's extensions): "
        f"{rec['server_mb']:.0f} MB.",
        "",
        "## N students at once on this machine",
        "",
        "| N kernels | per core | first page: first output, median / max (s) | any page: first output, median (s) "
        "| peak kernel memory (MB) | load average before → after |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for row in by_n(data):
        lines.append(f"| {row['n']} | {row['kernels_per_core']:g} | {row['first_page_median_s']:.1f} / "
                     f"{row['first_page_max_s']:.1f} | {row['all_pages_median_s']:.1f} | {row['peak_mb_max']:.0f} | "
                     f"{row['load_before'][0]:.1f} → {row['load_after'][0]:.1f} |")
    lines += [
        "",
        "## Per-user limits (Zero to JupyterHub `singleuser`)",
        "",
        f"- memory guarantee **{gigabytes(rec['memory_guarantee_mb'])}**: server {rec['server_mb']:.0f} MB + the "
        f"heaviest page's highest kernel peak {rec['kernel_peak_max_mb']:.0f} MB, rounded up to 128 MB (the room moves "
        "through the pages together, so all can be on the heaviest page at once);",
        f"- memory limit **{gigabytes(rec['memory_limit_mb'])}**: server + the heaviest page's kernel peak "
        f"+ a median kernel ({rec['kernel_peak_median_mb']:.0f} MB) being left behind, ×{HEADROOM} headroom, "
        "rounded up to 256 MB (within Binder's 2 GB);",
        f"- CPU guarantee **{rec['cpu_guarantee']:g}**, limit **{rec['cpu_limit']:g}** core: a kernel runs one "
        "thread; the steady need per reader is far below the guarantee.",
        "",
        f"## The class: {CONCURRENCY:.0%} of students active at once",
        "",
        f"Steady cores: active readers × the median page's CPU ({rec['cpu_s_per_page_median']:.1f} s) per "
        f"page-time ({session_minutes(book):.0f} min over {len(data['pages'])} pages). Burst cores: the room "
        f"clicks Live Code on the same page within {BURST_S:.0f} s, each kernel costing the first page's "
        f"{rec['cpu_s_first_page']:.1f} CPU seconds, with the cores busy at most {BURST_UTILISATION:.0%} of "
        "that minute: the table above shows the time to first output growing once kernels outnumber cores. "
        "(If the whole room clicked in the same second, a quiet first output would need a core per active "
        "reader for those seconds.)",
        "",
        "| students | active | memory to provision: guarantees (GB) | memory if all reach the limit (GB) "
        "| cores, steady | cores, burst | cores to provision |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in class_table(data, book):
        lines.append(f"| {row['students']} | {row['active']} | {row['memory_guaranteed_gb']:.0f} | "
                     f"{row['memory_all_at_limit_gb']:.0f} | "
                     f"{row['cores_steady']:.1f} | {row['cores_burst']:.1f} | {row['cores']} |")
    lines += [
        "",
        "Provision the guaranteed memory (plus the hub's own pods) and the last column's cores; the limit column "
        "is the worst case, every active reader at the limit at once (each with a second kernel and their own "
        "experiments), which the limit allows but a class following the pages does not reach. The numbers "
        "come from one shared 2-core machine: re-run both commands on the hub's nodes before a large class.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizing", type=Path, default=SIZING)
    parser.add_argument("--out", type=Path, default=REPORT)
    args = parser.parse_args(argv)
    text = markdown(load(args.sizing))
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
