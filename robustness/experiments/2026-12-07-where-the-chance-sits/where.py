"""Where the whole book's chance to fail a fresh retraining sits, model by model.

Reads the committed records (robustness/) exactly as ``make robustness --report`` does, then
asks the report's own method (``rec11_tools.robustness.fitted_pass_chance``) for the chance that
a fresh retraining passes every claim of a set of pages, with its 95 % lower bound: the whole
book, the pages that load the tiny GPT, and the rest. If the GPT's pages alone have a lower
bound under 99 %, no change to any other page can bring the book's to 99 %.

    PYTHONPATH=src python robustness/experiments/2026-12-07-where-the-chance-sits/where.py

About two minutes per set on one core (the parametric draws of every claim's tail).
"""

from pathlib import Path

from rec11_tools import renames
from rec11_tools.robustness import fitted_pass_chance, percent, read_records, summarize
from rec11_tools.run_pages import book_pages

ROOT = Path(__file__).resolve().parents[3]
# the pages whose claims are about the tiny GPT on the grammar (exercises.md: its fell claim)
GPT_PAGES = {"book/attention-maps.md", "book/further/attention-maps.md", "book/generation.md",
             "book/further/generation.md", "book/surprisal.md", "book/further/surprisal.md",
             "book/exercises.md"}


def current_claims():
    """Every claim, over the retrainings of its page's current code (as the report pools them)."""
    every = [p.relative_to(ROOT).as_posix() for p in book_pages(ROOT)]
    records = ROOT / "robustness"
    return summarize(*read_records(ROOT, every, renames.load(records / "renamed.yml"), records))


def main() -> None:
    claims = current_claims()
    sets = {"every page": claims,
            "the GPT's pages": [c for c in claims if c.page in GPT_PAGES],
            "every other page": [c for c in claims if c.page not in GPT_PAGES]}
    rows, top = [], []
    for name, chosen in sets.items():
        found = fitted_pass_chance(chosen, ROOT)
        rows.append(f"| {name} | {len(chosen)} | {percent(found['point'])} | {percent(found['lower'])} |")
        if not top:  # the whole book's fit, as ROBUSTNESS.md shows it (a subset's draws differ)
            top = sorted(((c.tail[0], c) for c in chosen if c.tail), key=lambda t: -t[0])[:12]
    print("| pages | claims | pass chance (point) | 95 % lower bound |\n|---|---:|---:|---:|")
    print("\n".join(rows))
    print("\nThe claims most likely to fail (fitted chance, the whole book's fit; GPT: a page of the GPT's):")
    for chance, c in top:
        print(f"  {chance:.1e}  {'GPT' if c.page in GPT_PAGES else '   '}  {c.message[:100]}")


if __name__ == "__main__":
    main()
