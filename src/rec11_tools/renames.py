"""Claim messages reworded without touching the code: the retrainings of that code still count.

A claim's message names the sentence it checks. Rewording it (to quote the page exactly, say)
changes the page's code text, so its fingerprint (``robustness.page_fingerprint``), and every
retraining of the page would stop counting, though each claim computes the same value against
the same threshold. ``robustness/renamed.yml`` lists such commits: per page, the fingerprint
before and after and each message's old and new wording. The report carries the records of the
old fingerprint over, with their messages reworded (``carry``).

An entry is made from a commit, never by hand, and only if the commit changed nothing in the
page's code but claim and assert messages (``changed_messages``) and nothing in the ``rec11``
package:

    git commit -m "...: the claims' messages quote their page"    # messages only
    python -m rec11_tools.renames HEAD                              # appends its entries
    git commit -am "robustness/renamed.yml: the messages HEAD~1 reworded"

tests/unit/test_renames.py checks every entry against the commit it names.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RENAMED = ROOT / "robustness" / "renamed.yml"
MASK = "<message>"


def _is_claim(node: ast.AST) -> bool:
    """A claim(value, op, threshold, message) call."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "claim"
            and len(node.args) >= 4)


def _message_nodes(tree: ast.AST) -> list[ast.AST]:
    """The message of every claim() call and assert, in order."""
    found = []
    for node in ast.walk(tree):
        if _is_claim(node):
            found.append(node.args[3])
        elif isinstance(node, ast.Assert) and node.msg is not None:
            found.append(node.msg)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def masked(code: str) -> str:
    """What a cell computes, its messages aside: the syntax tree with every message replaced
    by one placeholder, and the comments (formatting, such as where a line wraps, is not
    there). Code that is not Python (a cell of magics) is itself. Two cells that differ only
    in messages give the same."""
    import io
    import tokenize

    try:
        tree = ast.parse(code)
        comments = [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline)
                    if t.type == tokenize.COMMENT]
    except (SyntaxError, tokenize.TokenError):
        return code
    for node in ast.walk(tree):
        if _is_claim(node):
            node.args[3] = ast.Constant(MASK)
        elif isinstance(node, ast.Assert) and node.msg is not None:
            node.msg = ast.Constant(MASK)
    return ast.dump(tree) + "\n" + "\n".join(comments)


def templates(code: str) -> list[str]:
    """Each message of a cell as written, its computed parts as ``{name}`` (ledger's reading)."""
    from rec11_tools.ledger import _message

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [_message(node) for node in _message_nodes(tree)]


def changed_messages(old_text: str, new_text: str) -> dict[str, str]:
    """{old message: new message} between two versions of a page whose code differs only in
    its messages; ValueError naming the first cell where anything else changed."""
    from rec11_book.shared.pages import parse_cells

    old_cells, new_cells = parse_cells(old_text), parse_cells(new_text)
    if len(old_cells) != len(new_cells):
        raise ValueError(f"the page has {len(new_cells)} code cells, not {len(old_cells)}")
    renamed: dict[str, str] = {}
    for (_, _, old), (line, _, new) in zip(old_cells, new_cells):
        if masked(old) != masked(new):  # the code the fingerprint reads, messages aside
            raise ValueError(f"line {line}: the cell's code changed, not only its messages")
        for before, after in zip(templates(old), templates(new)):
            if before != after:
                if renamed.get(before, after) != after:
                    raise ValueError(f"line {line}: {before!r} became two messages")
                renamed[before] = after
    return renamed


def _pattern(template: str) -> tuple[re.Pattern, list[str]]:
    parts = re.split(r"(\{[^{}]*\})", template)
    names = [p for p in parts if p.startswith("{") and p.endswith("}")]
    regex = "".join("(.*?)" if p in names else re.escape(p) for p in parts)
    return re.compile(regex + r"\Z", re.S), names


def reword(message: str, renamed: dict[str, str]) -> str:
    """A recorded message (its computed parts filled in) in the new wording, if it has one."""
    for before, after in renamed.items():
        pattern, names = _pattern(before)
        match = pattern.match(message)
        if not match:
            continue
        values = dict(zip(names, match.groups()))
        missing = [n for n in _pattern(after)[1] if n not in values]
        if missing:
            raise ValueError(f"{after!r} computes {missing[0]}, which {before!r} did not")
        return re.sub(r"\{[^{}]*\}", lambda m, filled=values: filled[m[0]], after)
    return message


def load(path: Path = RENAMED) -> list[dict]:
    import yaml

    if not path.is_file():
        return []
    entries = yaml.safe_load(path.read_text()) or []
    if not isinstance(entries, list):
        raise TypeError(f"{path}: a list of entries, not {type(entries).__name__}")
    return entries


def carry(results: dict[str, dict], entries: list[dict]) -> int:
    """Give the records of each entry's old fingerprint its new one and its new messages, in
    the entries' order (so a page reworded twice is carried twice). Returns pages carried."""
    carried = 0
    for entry in entries:
        for result in results.values():
            run = result["pages"].get(entry["page"])
            if run is None or run.get("fingerprint") != entry["before"]:
                continue
            for record in run["claims"]:
                record["message"] = reword(record["message"], entry["messages"])
            run["fingerprint"] = entry["after"]
            carried += 1
    return carried


def _show(commit: str, path: str, root: Path) -> str | None:
    done = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, capture_output=True, text=True,
                          check=False)
    return done.stdout if done.returncode == 0 else None


def _package_files(commit: str, root: Path) -> dict[str, str]:
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit, "src/rec11"], cwd=root,
                            capture_output=True, text=True, check=True).stdout.split()
    return {path: _show(commit, path, root) for path in listed}


def fingerprint_at(commit: str, page: str, root: Path = ROOT) -> str:
    """``robustness.page_fingerprint`` of a page as it was at ``commit`` (files from git)."""
    import tempfile

    from rec11_tools.robustness import page_fingerprint

    with tempfile.TemporaryDirectory() as tmp:
        for path, text in {page: _show(commit, page, root), **_package_files(commit, root)}.items():
            (Path(tmp) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / path).write_text(text)
        return page_fingerprint(Path(tmp), page)


def entries_for(commit: str, root: Path = ROOT) -> list[dict]:
    """The entries a commit makes: one per page whose messages it reworded. SystemExit if it
    changed a page's code otherwise, or the package, since then no record carries over."""
    parent = f"{commit}~1"
    changed = subprocess.run(["git", "diff", "--name-only", parent, commit], cwd=root, capture_output=True,
                             text=True, check=True).stdout.split()
    package = [p for p in changed if p.startswith("src/rec11/")]
    if package:
        raise SystemExit(f"{commit} changes {package[0]}: the records of its pages do not carry over")
    sha = subprocess.run(["git", "rev-parse", "--short", commit], cwd=root, capture_output=True, text=True,
                         check=True).stdout.strip()
    entries = []
    for page in (p for p in changed if p.startswith("book/") and p.endswith(".md")):
        old, new = _show(parent, page, root), _show(commit, page, root)
        if old is None or new is None:
            continue
        try:
            renamed = changed_messages(old, new)
        except ValueError as err:
            raise SystemExit(f"{page}:{str(err).removeprefix('line ')}. Fix: commit that change apart "
                             "from the reworded messages; only messages can carry records over") from None
        if renamed:
            entries.append({"commit": sha, "page": page, "before": fingerprint_at(parent, page, root),
                            "after": fingerprint_at(commit, page, root), "messages": renamed})
    return entries


def main(argv: list[str] | None = None) -> int:
    import yaml

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__)
        return 2
    entries = entries_for(args[0])
    if not entries:
        print(f"{args[0]} rewords no claim message")
        return 0
    known = load()
    if any(e["commit"] == entries[0]["commit"] for e in known):
        raise SystemExit(f"{RENAMED} already has {entries[0]['commit']}'s entries")
    RENAMED.write_text((RENAMED.read_text() if RENAMED.is_file() else HEADER)
                       + yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=100))
    print(f"{len(entries)} page(s) added to {RENAMED}: "
          + ", ".join(f"{e['page']} ({len(e['messages'])} messages)" for e in entries))
    return 0


HEADER = """\
# Claim messages reworded by a commit that changed nothing else in its pages' code: the
# records of each page's old fingerprint (before) count for its new one (after), with their
# messages reworded. Written by `python -m rec11_tools.renames <commit>`, never by hand;
# tests/unit/test_renames.py checks each entry against its commit.
"""


if __name__ == "__main__":
    sys.exit(main())
