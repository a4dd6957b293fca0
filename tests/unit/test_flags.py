"""Every claim the robustness report flags as checking little carries a written reason.

The report's section "Claims that check little" (``rec11_tools.robustness.flags``) lists
claims whose value never moved across retrainings (constant: an exact fact reported as a
measurement), whose threshold lies more than 10 standard deviations beyond the worst value
seen (vacuous), and those written down as following from another claim (implied). Each
must either have its threshold set to what its sentence's words mean, or carry a reason
under ``reasons:`` in ``robustness/flags.yml``. These tests read the committed retraining
records in ``robustness/`` (no retraining, no page run), so they take well under a second.

Which records count, per page: the fingerprint (the page's code, ``page_fingerprint``) that
most of the page's records carry; on a tie, the one whose newest record is newest (by the
record's date, then by its commit's time in git). Not today's fingerprint: a page's records
are kept until the page's code changes, and the committed records are of older code until
``make robustness`` retrains the changed pages, so requiring today's fingerprint would leave
most pages with nothing to check. Once new records land, the newest code has the most
records (``--until 30`` gives it 30, as many as any older code kept), or ties with the older
code and wins the tie by date: the report and this test then look at the same retrainings.
On 2026-12-04 this choice picks, for every page, the records the committed ROBUSTNESS.md
pooled (its 7 constant, 96 vacuous and 2 implied claims).
"""

from __future__ import annotations

import collections
import subprocess
from pathlib import Path

import pytest
import yaml

from rec11_tools.robustness import flags, load, summarize

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "robustness"
FIX = ("tighten the threshold to what its words mean, restate it (robustness/ledger.yml),"
       " or write a reason under `reasons:` in robustness/flags.yml")


def commit_times(results: dict[str, dict]) -> dict[str, int]:
    """Each record's commit's time (seconds since 1970), or 0 where git cannot say."""
    commits = sorted({r.get("commit", "") for r in results.values()} - {"", "unknown"})
    try:
        out = subprocess.run(["git", "log", "--no-walk", "--format=%H %ct", *commits], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    full = dict(line.split() for line in out.splitlines() if line.strip())
    return {c: int(t) for c in commits for h, t in full.items() if h.startswith(c)}


def majority_fingerprints(results: dict[str, dict]) -> dict[str, str]:
    """Per page, the fingerprint most of its records carry; ties to the newest record."""
    times = commit_times(results)
    seen: dict[str, dict[str, list]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for result in results.values():
        when = (result.get("date", ""), times.get(result.get("commit", ""), 0))
        for page, run in result["pages"].items():
            seen[page][run.get("fingerprint")].append(when)
    return {page: max(by_print, key=lambda f: (len(by_print[f]), max(by_print[f]), f or ""))
            for page, by_print in seen.items()}


@pytest.fixture(scope="module")
def results():
    found = load(RECORDS)
    assert found, f"no retraining records in {RECORDS}"
    return found


@pytest.fixture(scope="module")
def flagged(results):
    claims = summarize(results, majority_fingerprints(results))
    return flags(claims, ROOT)


def unreasoned(flagged) -> list[tuple[str, str, str]]:
    """(kind, page, message) of every flagged claim without a written reason."""
    return [(kind, c.page, c.message) for kind, items in flagged.items()
            for c, reason in items if not reason.strip()]


def test_every_flagged_claim_has_a_reason(flagged):
    assert any(flagged.values()), "the report flags nothing: did the records load?"
    missing = unreasoned(flagged)
    assert not missing, (
        f"{len(missing)} claim(s) the report flags as checking little have no reason:\n"
        + "\n".join(f"  {kind}: {page}: {message}" for kind, page, message in missing)
        + f"\nFor each: {FIX}.")


def test_flags_yml_names_only_recorded_claims(results):
    notes = yaml.safe_load((RECORDS / "flags.yml").read_text()) or {}
    recorded = {c["message"] for r in results.values() for run in r["pages"].values()
                for c in run["claims"]}
    named = [("reasons", m) for m in notes.get("reasons") or {}]
    for item in notes.get("implied") or []:
        named += [("implied claim", item["claim"]), ("implied follows_from", item["follows_from"])]
    stale = [(where, m) for where, m in named if m not in recorded]
    assert not stale, (
        f"{len(stale)} entr(ies) of robustness/flags.yml name no claim in any record in"
        f" robustness/ (reworded or removed since, or mistyped); copy the message as the report"
        f" prints it, or delete the entry:\n"
        + "\n".join(f"  {where}: {m}" for where, m in stale))


def test_reasons_are_not_empty():
    notes = yaml.safe_load((RECORDS / "flags.yml").read_text()) or {}
    empty = [m for m, reason in (notes.get("reasons") or {}).items()
             if not isinstance(reason, str) or not reason.strip()]
    assert not empty, "robustness/flags.yml: reasons without text:\n" + "\n".join(f"  {m}" for m in empty)
