"""The ledger of restated claims: every commit that changed a claim's threshold, comparison or
sentence after a retraining broke it (or left it below the bar), kept so that the record is not
censored by the restatements (issue 43, "No censoring").

    from rec11_tools import ledger
    entries = ledger.load()                 # robustness/ledger.yml, a list of dicts
    print(ledger.markdown_table())          # for the report: date, commit, page, old -> new, what broke it
    deleted = ledger.load_deleted()         # robustness/deleted-records.yml

Each entry of ``robustness/ledger.yml``:

- ``id`` (``<commit>/<n>``), ``commit`` (short hash), ``date``, ``page`` (``book/...``);
- ``kind``: ``restated`` (threshold, comparison or sentence changed), ``removed`` (the claim and
  its sentence went), ``reworded`` (the sentence's words only, no evidence: kept so that a chain
  of restatements reaches the page's current sentence), ``moved`` (to another page, unchanged);
- ``old`` and ``new``: ``sentence`` (the claim's fourth argument as written, an f-string's or a
  concatenation's variables as ``{name}``), ``claim`` (``value op threshold`` as in the code),
  ``op``, ``threshold``, ``line`` (in that commit's page); ``new`` is null for ``removed``;
- ``broke_it``: the value or evidence the commit message cites ("not stated" if none);
- ``reason``: one line from the commit message;
- ``superseded_by``: the id of a later entry that restated the new claim again, if any.

``claim_calls(text)`` finds the claim() calls of a page the way the ledger was built, so that a
test can check that every entry's new sentence is still on its page.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "robustness" / "ledger.yml"
DELETED = ROOT / "robustness" / "deleted-records.yml"
KINDS = ("restated", "removed", "reworded", "moved")


def load(path: Path | str = LEDGER) -> list[dict]:
    """The ledger's entries, in the file's order (oldest commit first)."""
    import yaml

    entries = yaml.safe_load(Path(path).read_text())
    if not isinstance(entries, list):
        raise TypeError(f"{path}: the ledger is a list of entries, not {type(entries).__name__}")
    return entries


def load_deleted(path: Path | str = DELETED) -> dict:
    """The record of deleted retraining records: per deleting commit, how many and which failed."""
    import yaml

    return yaml.safe_load(Path(path).read_text())


def _message(node: ast.AST) -> str:
    """A claim's fourth argument as written: literal text, variables as ``{name}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _message(node.left) + _message(node.right)
    return "{" + ast.unparse(node) + "}"


def claim_calls(text: str) -> list[dict]:
    """Every ``claim(value, op, threshold, message)`` call in a page's text, in order:
    ``value``, ``op``, ``threshold`` (source text), ``sentence`` (``_message``), ``line``."""
    calls = []
    for match in re.finditer(r"(?<![\w.])claim\(", text):
        i, depth, quote = match.end(), 1, None
        while i < len(text) and depth:
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                end = text.find("\n", i)
                i = end if end >= 0 else len(text)
                continue
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            i += 1
        source = "(" + text[match.start():i] + ")"
        try:
            node = ast.parse(source, mode="eval").body
        except SyntaxError:  # prose that mentions claim(, or a definition
            continue
        if not isinstance(node, ast.Call) or len(node.args) < 4:
            continue
        value, op, threshold, message = node.args[:4]
        calls.append({
            "value": " ".join(ast.get_source_segment(source, value).split()),
            "op": op.value if isinstance(op, ast.Constant) else ast.unparse(op),
            "threshold": " ".join(ast.get_source_segment(source, threshold).split()),
            "sentence": _message(message),
            "line": text.count("\n", 0, match.start()) + 1,
        })
    return calls


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _side(side: dict | None, other: dict | None) -> str:
    """A claim's sentence and its comparison: ``op threshold`` when the value measured is the
    same on both sides, else the whole ``value op threshold``."""
    if not side:
        return "(claim removed)"
    value = side["claim"].removesuffix(f" {side['op']} {side['threshold']}")
    same = other and other["claim"].removesuffix(f" {other['op']} {other['threshold']}") == value
    check = f"{side['op']} {side['threshold']}" if same else f"`{side['claim']}`"
    return f"{side['sentence']} ({check})"


def markdown_table(entries: list[dict] | None = None, kinds: tuple[str, ...] = ("restated", "removed")) -> str:
    """The ledger as a Markdown table sorted by date (then commit order): date, commit, page,
    old -> new (sentence and comparison), the value that broke it. By default the restatements
    and removals; pass ``kinds=KINDS`` to show rewordings and moves too."""
    entries = load() if entries is None else entries
    order = {id(e): n for n, e in enumerate(entries)}
    rows = sorted((e for e in entries if e["kind"] in kinds), key=lambda e: (str(e["date"]), order[id(e)]))
    lines = ["| date | commit | page | old → new | the value that broke it |", "|---|---|---|---|---|"]
    for e in rows:
        change = f"{_side(e['old'], e.get('new'))} → {_side(e.get('new'), e['old'])}"
        lines.append(f"| {e['date']} | {e['commit']} | {e['page'].removeprefix('book/')} | {_cell(change)} "
                     f"| {_cell(e['broke_it'])} |")
    return "\n".join(lines) + "\n"
