"""Where a page's load spends its style and layout work, and what caused each piece.

    python -m rec11_tools.loadwork [--html _build/html] [--page book/exercises] [--slowdown 4] [--top 8]

Opens the page once in Debian's Chromium on a phone-sized screen (390 x 844), the CPU slowed
as Lighthouse's mobile preset slows it, and records a trace with the browser's invalidation
tracking. Prints each large style recalculation and layout (elements, milliseconds) with the
changes that caused it (an attribute on ``<html>``, nodes a script inserted, a ``:has()``
rule), then the layouts that scripts forced by reading sizes, by script and function. This
is how the two restyles in BENCHMARKS.md ("two restyles the book caused") were found. A
trace's milliseconds move from run to run; what it names does not.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from rec11_tools.pagespeed import CHROMIUM, CHROMIUM_ARGS, PHONE, ROOT, serve

CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline",
              "disabled-by-default-devtools.timeline.stack",
              "disabled-by-default-devtools.timeline.invalidationTracking"]
WORK = ("UpdateLayoutTree", "Layout")  # a style recalculation, a layout
# what made elements need styling again (a layout's own causes, nodes added to it, are left out)
CAUSES = ("StyleRecalcInvalidationTracking", "StyleInvalidatorInvalidationTracking",
          "ScheduleStyleInvalidationTracking")
MIN_ELEMENTS = 1000  # a recalculation this large is listed with its causes


def _cause(event: dict) -> tuple[str, str]:
    """(what changed, on which node) of one invalidation event."""
    data = event.get("args", {}).get("data", {})
    what = (data.get("reason") or data.get("changedAttribute") or data.get("changedClass")
            or data.get("changedPseudo") or ("invalidation set" if data.get("invalidationSet") else "?"))
    return str(what), str(data.get("nodeName") or "")[:40]


def _script(frames: list[dict]) -> str:
    """``function@file`` of the frame that forced the work, and of its caller."""
    return " < ".join(f"{f.get('functionName') or '(top)'}@{f.get('url', '').rsplit('/', 1)[-1].split('?')[0]}"
                      for f in frames[:2])


def summarise(events: list[dict], min_elements: int = MIN_ELEMENTS) -> dict:
    """From a trace's events: ``restyles``, the recalculations of at least ``min_elements``
    elements in time order, each {ms, elements, causes: [(what, node, count)]}; ``forced``,
    {script: [count, ms]} of the style and layout work a script forced by reading sizes;
    ``total_ms`` of all style and layout work."""
    restyles, forced, pending = [], defaultdict(lambda: [0, 0.0]), Counter()
    total = 0.0
    for event in sorted(events, key=lambda e: e.get("ts", 0)):
        name = event.get("name")
        if name in CAUSES:
            pending[_cause(event)] += 1
            continue
        if name not in WORK or event.get("ph") != "X":
            continue
        ms = event.get("dur", 0) / 1000
        total += ms
        args = event.get("args", {})
        frames = [f for f in (args.get("beginData") or {}).get("stackTrace") or []
                  if f.get("url", "").startswith("http")]  # the page's scripts, not the browser's own
        if frames:
            work = forced[_script(frames)]
            work[0] += 1
            work[1] += ms
        elements = args.get("elementCount") or 0
        if name == "UpdateLayoutTree" and elements >= min_elements:
            restyles.append({"ms": ms, "elements": elements, "forced_by": _script(frames) if frames else "",
                             "causes": [(what, node, n) for (what, node), n in pending.most_common()]})
        if name == "UpdateLayoutTree":
            pending.clear()  # what is left was caused after this recalculation
    return {"restyles": restyles, "forced": dict(forced), "total_ms": total}


def trace(html: Path, page: str, slowdown: float) -> list[dict]:
    from playwright.sync_api import sync_playwright

    with serve(html) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
            tab = context.new_page()
            context.new_cdp_session(tab).send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
            browser.start_tracing(page=tab, categories=CATEGORIES)
            tab.goto(f"{base}{page}.html")
            tab.wait_for_load_state("load")
            tab.wait_for_timeout(2000)  # the deferred scripts' later work, and the paints after
            return json.loads(browser.stop_tracing())["traceEvents"]
        finally:
            browser.close()


def report(found: dict, top: int) -> list[str]:
    lines = [f"style and layout, all of it: {found['total_ms']:.0f} ms", "",
             f"recalculations of {MIN_ELEMENTS:,} elements or more, in order, with what caused them:"]
    for r in found["restyles"]:
        forced = f", forced by {r['forced_by']}" if r["forced_by"] else ""
        lines.append(f"  {r['ms']:6.0f} ms  {r['elements']:6,} elements{forced}")
        lines += [f"      {n:4d} x {what} ({node})" for what, node, n in r["causes"][:top]]
    lines += ["", "style and layout forced by scripts reading sizes:"]
    for script, (n, ms) in sorted(found["forced"].items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"  {ms:6.0f} ms  {n:3d} x  {script}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="the built site")
    parser.add_argument("--page", default="book/exercises", help="a page of the site, without .html")
    parser.add_argument("--slowdown", type=float, default=4, help="CPU slowdown (Lighthouse's mobile preset: 4)")
    parser.add_argument("--top", type=int, default=8, help="causes and scripts listed for each")
    args = parser.parse_args(argv)
    if not (args.html / f"{args.page}.html").is_file():
        parser.error(f"{args.html / args.page}.html does not exist: build the book first (make build)")
    print("\n".join(report(summarise(trace(args.html, args.page, args.slowdown)), args.top)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
