"""The ledger of restated claims (robustness/ledger.yml) and of deleted retraining records
(robustness/deleted-records.yml) parse, name commits that exist, and reach today's pages."""

import gzip
import json
import operator
import shutil
import subprocess

import pytest

from rec11_tools import ledger, renames

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
SIDE = {"sentence", "claim", "op", "threshold", "line"}


@pytest.fixture(scope="module")
def entries():
    return ledger.load()


def test_the_ledger_parses(entries):
    assert entries, "robustness/ledger.yml has no entries"
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)), "an id is repeated"
    for e in entries:
        assert {"id", "commit", "date", "page", "kind", "old", "broke_it", "new", "reason"} <= set(e), e["id"]
        assert e["kind"] in ledger.KINDS, e["id"]
        assert e["page"].startswith("book/") and e["page"].endswith(".md"), e["id"]
        assert set(e["old"]) == SIDE and e["old"]["op"] in OPS, e["id"]
        assert e["broke_it"].strip() and e["reason"].strip(), e["id"]
        if e["kind"] == "removed":
            assert e["new"] is None, f"{e['id']}: a removed claim has no new side"
        else:
            assert set(e["new"]) == SIDE and e["new"]["op"] in OPS, e["id"]
        if e["kind"] == "restated":  # something the ledger counts changed
            assert (e["old"]["claim"], e["old"]["sentence"]) != (e["new"]["claim"], e["new"]["sentence"]), e["id"]


def test_every_commit_exists(entries):
    if not shutil.which("git") or not (ledger.ROOT / ".git").exists():
        pytest.skip("no git checkout")
    commits = sorted({e["commit"] for e in entries}
                     | {c["commit"] for c in ledger.load_deleted()["commits"]})
    for commit in commits:
        found = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ledger.ROOT,
                               capture_output=True, check=False)
        assert found.returncode == 0, f"{commit} is not a commit of this repository"


def test_every_new_sentence_is_on_its_page_or_superseded(entries):
    renamed = renames.load()
    position = {e["id"]: n for n, e in enumerate(entries)}
    pages = {}
    missing = []
    for n, e in enumerate(entries):
        later = e.get("superseded_by")
        if later is not None:
            assert position.get(later, -1) > n, f"{e['id']}: superseded_by {later} is not a later entry"
            continue
        if e["new"] is None:
            continue
        if e["page"] not in pages:
            pages[e["page"]] = {c["sentence"] for c in ledger.claim_calls((ledger.ROOT / e["page"]).read_text())}
        sentence = e["new"]["sentence"]
        for reworded in (r for r in renamed if r["page"] == e["page"]):  # a later commit's wording
            sentence = reworded["messages"].get(sentence, sentence)
        if sentence not in pages[e["page"]]:
            missing.append(f"{e['id']} {e['page']}: {e['new']['sentence']}")
    assert not missing, "new sentences no longer on their page (restate them in a new entry):\n" + "\n".join(missing)


def test_the_markdown_table_has_a_row_per_restatement(entries):
    table = ledger.markdown_table(entries)
    rows = table.strip().splitlines()
    assert rows[0] == "| date | commit | page | old → new | the value that broke it |"
    assert len(rows) == 2 + sum(e["kind"] in ("restated", "removed") for e in entries)
    dates = [row.split(" | ")[0].lstrip("| ") for row in rows[2:]]
    assert dates == sorted(dates)


def test_deleted_records_with_a_failure_are_restored():
    doc = ledger.load_deleted()
    assert doc["deleted"] == sum(c["deleted"] for c in doc["commits"]) == sum(len(c["files"]) for c in doc["commits"])
    assert doc["with_a_failure"] == sum(len(c["failing_records"]) for c in doc["commits"])
    for commit in doc["commits"]:
        for record in commit["failing_records"]:
            data = json.loads(gzip.decompress((ledger.ROOT / record["restored_to"]).read_bytes()))
            assert data["seed"] == record["seed"]
            for failed in record["claims"]:
                claims = [c for c in data["pages"][failed["page"]]["claims"] if c["message"] == failed["message"]]
                assert claims and not all(OPS[c["op"]](c["value"], c["threshold"]) for c in claims)
