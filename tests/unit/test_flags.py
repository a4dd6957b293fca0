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

import ast
import collections
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from rec11_book.shared.pages import code_cells
from rec11_tools import renames
from rec11_tools.robustness import flags, load, page_fingerprint, summarize

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "robustness"
MIN_RETRAININGS = 10  # make claims' default: the evidence a new claim is merged with
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
    renames.carry(found, renames.load(RECORDS / "renamed.yml"))  # messages reworded since
    return found


def judged_fingerprints(results: dict[str, dict]) -> dict[str, str]:
    """Per page, the code whose claims are judged: today's, once at least MIN_RETRAININGS
    records ran it (as the report judges), else the code most records ran (a page edited and
    not yet retrained keeps the verdicts of its evidence until the weekly run tops it up)."""
    chosen = majority_fingerprints(results)
    for page in chosen:
        today = page_fingerprint(ROOT, page) if (ROOT / page).is_file() else None
        ran = sum(1 for r in results.values() if r["pages"].get(page, {}).get("fingerprint") == today)
        if today and ran >= MIN_RETRAININGS:
            chosen[page] = today
    return chosen


@pytest.fixture(scope="module")
def flagged(results):
    claims = summarize(results, judged_fingerprints(results))
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


def message_parts(node: ast.AST) -> list[str | None]:
    """A claim's fourth argument as literal pieces, None for each part computed at run time."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):  # an f-string: its {...} parts are computed
        return [v.value if isinstance(v, ast.Constant) else None for v in node.values]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return message_parts(node.left) + message_parts(node.right)
    return [None]  # a variable or a call


def page_messages(root: Path = ROOT) -> list[re.Pattern]:
    """The message of every claim(...) call in the pages' code cells today, as a pattern: a
    string constant as itself, an f-string's or a concatenation's computed parts as wildcards."""
    patterns = []
    for page in sorted((root / "book").rglob("*.md")):
        for code in code_cells(page.read_text()):
            try:
                tree = ast.parse(code)
            except SyntaxError:  # a cell that is not plain Python (magics)
                continue
            for node in ast.walk(tree):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id == "claim" and len(node.args) >= 4):
                    parts = message_parts(node.args[3])
                    if any(parts):  # at least one literal piece: a message that names something
                        patterns.append(re.compile(
                            "".join(".*" if p is None else re.escape(p) for p in parts), re.S))
    return patterns


def test_page_messages_reads_constants_and_fstrings(tmp_path):
    page = tmp_path / "book" / "p.md"
    page.parent.mkdir()
    page.write_text("```{code-cell} ipython3\n"
                    "where = 'p.md: '\n"
                    "claim(x, '>', 0, where + \"'a'\")\n"
                    "claim(y, '<', 1, f\"p.md: 'b', {where}\")\n"
                    "claim(z, '<', 1, \"p.md: 'c'\")\n"
                    "```\n")
    patterns = page_messages(tmp_path)
    live = lambda m: any(p.fullmatch(m) for p in patterns)
    assert live("p.md: 'a'") and live("p.md: 'b', anything") and live("p.md: 'c'")
    assert not live("p.md: 'c' (older)") and not live("p.md: 'd'")


def test_flags_yml_names_only_recorded_claims(results):
    """Every key of flags.yml names a claim in some committed record, or one the pages make today
    (a message the page has reworded since the records ran: its new records will carry it)."""
    notes = yaml.safe_load((RECORDS / "flags.yml").read_text()) or {}
    recorded = {c["message"] for r in results.values() for run in r["pages"].values()
                for c in run["claims"]}
    today = page_messages()
    assert today, "no claim() call found in the pages' code cells"
    named = [("reasons", m) for m in notes.get("reasons") or {}]
    for item in notes.get("implied") or []:
        named += [("implied claim", item["claim"]), ("implied follows_from", item["follows_from"])]
    stale = [(where, m) for where, m in named
             if m not in recorded and not any(p.fullmatch(m) for p in today)]
    assert not stale, (
        f"{len(stale)} entr(ies) of robustness/flags.yml name no claim in any record in"
        f" robustness/ nor any claim the pages make today (reworded or removed since, or"
        f" mistyped); copy the message as the page's claim() prints it, or delete the entry:\n"
        + "\n".join(f"  {where}: {m}" for where, m in stale))


def test_flags_yml_names_each_claim_once():
    """A key the page has reworded is renamed, not kept beside its new one."""
    text = (RECORDS / "flags.yml").read_text()
    keys = re.findall(r'^  "(.*)":$', text, re.M)
    assert len(keys) == len(set(keys)), "robustness/flags.yml: a reason is keyed twice"


def test_reasons_are_not_empty():
    notes = yaml.safe_load((RECORDS / "flags.yml").read_text()) or {}
    empty = [m for m, reason in (notes.get("reasons") or {}).items()
             if not isinstance(reason, str) or not reason.strip()]
    assert not empty, "robustness/flags.yml: reasons without text:\n" + "\n".join(f"  {m}" for m in empty)


def test_every_claim_the_pages_make_has_been_retrained(results):
    """A new or reworded claim comes with its evidence: `make claims PAGE=... SEEDS=10` runs its
    page under 10 fresh seeds and keeps the records in robustness/, committed with the page
    (docs/claims-and-robustness.md). A claim no committed record holds that often fails here,
    by its message; an edit to a page's code alone does not (the weekly run tops it up)."""
    runs_of: collections.Counter = collections.Counter()
    for result in results.values():
        runs_of.update({c["message"] for run in result["pages"].values() for c in run["claims"]})
    thin = [re.sub(r"\\(.)", r"\1", p.pattern).replace(".*", "…") for p in page_messages()
            if max((n for m, n in runs_of.items() if p.fullmatch(m)), default=0) < MIN_RETRAININGS]
    assert not thin, (
        f"{len(thin)} claim(s) the pages make are in fewer than {MIN_RETRAININGS} committed retraining"
        " records (… is a part the code computes):\n" + "\n".join(f"  {t}" for t in thin)
        + f"\nFix: make claims PAGE=<its page> SEEDS={MIN_RETRAININGS}, then commit robustness/ with the page.")
