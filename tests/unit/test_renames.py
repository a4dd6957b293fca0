"""Reworded claim messages carry a page's retrainings over, and only reworded messages do."""

import copy

import pytest

from rec11_tools import renames

PAGE = '''# A page

```{code-cell} ipython3
where = "x.md (figure)"
claim(value, "<", 0.3, f"{where}: 'the cloud sits around the origin'")
assert ok, "x.md: 'the five betas'"
```
'''


def test_a_reworded_message_is_found_even_when_it_is_wrapped():
    new = PAGE.replace("f\"{where}: 'the cloud sits around the origin'\")",
                       "f\"{where}: 'the whole cloud sits \"\n      \"around the origin'\")")
    assert renames.changed_messages(PAGE, new) == {
        "{where}: 'the cloud sits around the origin'": "{where}: 'the whole cloud sits around the origin'"}
    assert renames.changed_messages(PAGE, PAGE) == {}
    wrapped = PAGE.replace('assert ok, "x.md: \'the five betas\'"',
                           'assert ok, (\n    "x.md: \'the five betas of the "\n    "sweep\'")')
    assert renames.changed_messages(PAGE, wrapped) == {"x.md: 'the five betas'": "x.md: 'the five betas of the sweep'"}


@pytest.mark.parametrize("edit", [
    ('"<", 0.3', '"<", 0.25'),  # the threshold
    ("claim(value", "claim(value * 2"),  # the value
    ('where = "x.md (figure)"', 'where = "x.md (figure)"  # a comment'),  # any other code
])
def test_any_other_change_to_the_code_is_refused(edit):
    with pytest.raises(ValueError, match="line 4: the cell's code changed, not only its messages"):
        renames.changed_messages(PAGE, PAGE.replace(*edit))


def test_a_recorded_message_is_reworded_with_its_computed_parts():
    renamed = {"{where}: 'the cloud sits around the origin'": "{where}: 'the whole cloud sits around the origin'"}
    assert renames.reword("x.md (figure): 'the cloud sits around the origin'", renamed) == \
        "x.md (figure): 'the whole cloud sits around the origin'"
    assert renames.reword("x.md: 'another claim'", renamed) == "x.md: 'another claim'"
    with pytest.raises(ValueError, match=r"computes \{n\}"):
        renames.reword("a", {"a": "a {n}"})


def test_records_of_the_old_fingerprint_are_carried_in_order_and_no_others():
    def result(fingerprint):
        return {"pages": {"book/x.md": {"fingerprint": fingerprint,
                                        "claims": [{"message": "x.md: 'old words'", "value": 1}]}}}

    results = {"a": result("f1"), "b": result("other")}
    entries = [{"page": "book/x.md", "before": "f1", "after": "f2", "messages": {"x.md: 'old words'": "x.md: 'new'"}},
               {"page": "book/x.md", "before": "f2", "after": "f3", "messages": {"x.md: 'new'": "x.md: 'newer'"}}]
    untouched = copy.deepcopy(results["b"])
    assert renames.carry(results, entries) == 2
    assert results["a"]["pages"]["book/x.md"] == {"fingerprint": "f3",
                                                  "claims": [{"message": "x.md: 'newer'", "value": 1}]}
    assert results["b"] == untouched


def test_every_entry_is_what_its_commit_did():
    entries = renames.load()
    for commit in dict.fromkeys(e["commit"] for e in entries):
        listed = [{k: e[k] for k in ("commit", "page", "before", "after", "messages")}
                  for e in entries if e["commit"] == commit]
        assert listed == renames.entries_for(commit), (
            f"robustness/renamed.yml: {commit}'s entries are not what the commit did; "
            f"write them with `python -m rec11_tools.renames {commit}`")
