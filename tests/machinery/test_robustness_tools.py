"""The claims harness records every assert, held or not, and the matrix tallies them."""

import gzip
import json
import os
import re
import textwrap

import pytest

from rec11_book.shared import warmkernels
from rec11_tools import claims, robustness

PAGE = textwrap.dedent('''\
    ---
    kernelspec: {display_name: Python 3, language: python, name: python3}
    ---

    # A page

    ```{code-cell} ipython3
    from myst_nb import glue
    x = 2
    assert x == 3, "page: 'x is three' (false)"
    assert x == 2, "page: 'x is two'"
    from rec11.claims import claim
    claim(x, ">", 5, "page: 'x is above five' (false, measured)")
    glue("x", x, display=False)
    ```

    ```{code-cell} ipython3
    :tags: [raises-exception]

    def check(value):
        assert value > 0, "meant to fail"
    check(-1)
    ```

    ```{code-cell} ipython3
    for i in range(3):
        assert i < 2, "page: 'every i is small'"
    1 / 0
    ```

    ```{code-cell} ipython3
    assert x > 1, "page: 'after an error the page goes on'"
    ```
    ''')


def test_every_claim_is_recorded_and_a_failing_one_does_not_stop_the_page(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    result = claims.run_page(page)
    held = {}
    for record in result["claims"]:
        held[record["message"]] = held.get(record["message"], True) and record["held"]
    assert held == {"page: 'x is three' (false)": False, "page: 'x is two'": True,
                    "page: 'x is above five' (false, measured)": False,
                    "page: 'every i is small'": False, "page: 'after an error the page goes on'": True}
    assert "meant to fail" not in held, "a cell that raises on purpose keeps its assert"
    assert [e["error"].split(":")[0] for e in result["errors"]] == ["ZeroDivisionError"]
    assert result["errors"][0]["line"] == PAGE.splitlines().index("for i in range(3):") + 1
    assert result["glued"] == {"x": "2"}
    measured = [r for r in result["claims"] if "value" in r]
    assert measured == [{"message": "page: 'x is above five' (false, measured)", "value": 2.0, "op": ">",
                         "threshold": 5.0, "held": False}]


@pytest.mark.skipif(not warmkernels.available(), reason="kernels are forked on Linux only")
def test_a_page_that_imports_torch_runs_forked_and_records_the_same(tmp_path):
    page = tmp_path / "page.md"
    first = "```{code-cell} ipython3\n"
    forked = (f"{first}import os, torch\n"
              f"assert os.getppid() != {os.getpid()}, \"page: 'started by the fork server'\"\n```\n\n")
    page.write_text(PAGE.replace(first, forked + first, 1))
    with warmkernels.fork_server() as server:
        assert server is not None
        result = claims.run_page(page, fork_server=server)
    held = {r["message"]: r["held"] for r in result["claims"] if "every i" not in r["message"]}
    assert held == {"page: 'started by the fork server'": True, "page: 'x is three' (false)": False,
                    "page: 'x is two'": True, "page: 'x is above five' (false, measured)": False,
                    "page: 'after an error the page goes on'": True}
    assert [e["error"].split(":")[0] for e in result["errors"]] == ["ZeroDivisionError"]
    assert result["glued"] == {"x": "2"}


def _run(claims, errors=(), fingerprint="f"):
    return {"claims": claims, "errors": list(errors), "fingerprint": fingerprint}


def _measured(message, value, threshold=1.0, op=">"):
    return {"message": message, "value": value, "op": op, "threshold": threshold, "held": value > threshold}


def test_seeds_are_drawn_fresh_and_every_six_cover_threads_and_kernels():
    import random

    a = robustness.draw(12, used={5, 6})
    b = robustness.draw(12)
    assert len({v.seed for v in a}) == 12 and not {5, 6} & {v.seed for v in a}
    assert {v.seed for v in a} != {v.seed for v in b}, "two runs drew the same seeds"
    assert all(robustness.SEED_RANGE[0] <= v.seed < robustness.SEED_RANGE[1] for v in a + b)
    for block in (a[:6], a[6:]):
        assert {(v.threads, v.kernels) for v in block} == {(t, k) for t in (1, 2) for k in robustness.KERNELS}
    rng = random.Random(3)
    assert [v.seed for v in robustness.draw(3, rng=rng)] != [0, 1, 2]


def test_arm_runners_are_never_asked_for_avx2():
    assert robustness.kernel_axis("x86_64") == ["native", "avx2", "default"]
    assert robustness.kernel_axis("AMD64") == ["native", "avx2", "default"]  # Windows spells it so
    for arch in ("arm64", "aarch64"):  # macOS, Linux
        assert robustness.kernel_axis(arch) == ["native", "default"]
        drawn = robustness.draw(8, kernels=robustness.kernel_axis(arch))
        assert {v.kernels for v in drawn} == {"native", "default"}
        for block in (drawn[:4], drawn[4:]):
            assert {(v.threads, v.kernels) for v in block} == {(t, k) for t in (1, 2) for k in ("native", "default")}


def test_margins_are_in_standard_deviations_and_the_thinnest_comes_first():
    values = {"wide": [3.0, 3.2, 2.8, 3.1], "thin": [1.2, 1.5, 1.1, 1.6]}
    results = {f"r{i}": {"pages": {"p.md": _run([_measured(m, v[i]) for m, v in values.items()])}}
               for i in range(4)}
    claims = robustness.summarize(results, {"p.md": "f"})
    assert [c.message for c in claims] == ["thin", "wide"]
    thin = claims[0]
    slacks = [0.2, 0.5, 0.1, 0.6]
    import statistics
    assert thin.margin == pytest.approx(statistics.fmean(slacks) / statistics.stdev(slacks))
    assert thin.runs == 4 and thin.failures == 0 and thin.worst["value"] == 1.1
    assert 0 < thin.fail_chance < 0.5 and claims[1].fail_chance < 1e-6
    assert robustness.book_pass_chance(claims) == pytest.approx((1 - thin.fail_chance) * (1 - claims[1].fail_chance))
    assert robustness.verdict(thin) == "**thin**" and robustness.verdict(claims[1]) == "holds"


def test_a_claim_in_a_loop_counts_its_worst_call_and_a_failure_counts():
    results = {"a": {"pages": {"p.md": _run([_measured("loop", 3.0), _measured("loop", 0.5)])}},
               "b": {"pages": {"p.md": _run([_measured("loop", 2.0)])}}}
    [c] = robustness.summarize(results, {"p.md": "f"})
    assert c.runs == 2 and c.failures == 1 and c.worst["value"] == 0.5
    assert c.slacks == (-0.5, 1.0) and robustness.verdict(c) == "**fails**"


def test_not_reached_counts_as_a_failure_not_asserted_does_not_count_and_old_code_is_set_aside():
    exact = {"message": "exact", "held": True}
    results = {"a": {"pages": {"p.md": _run([exact, _measured("m", 2.0)])}},
               "b": {"pages": {"p.md": _run([exact], [{"line": 4, "error": "KeyError: 'k'"}])}},
               "c": {"pages": {"p.md": _run([exact])}},  # ran to the end without asserting m
               "d": {"pages": {"p.md": _run([exact, _measured("m", -5.0)], fingerprint="old")}},
               "e": {"pages": {}}}
    claims = {c.message: c for c in robustness.summarize(results, {"p.md": "f"})}
    assert (claims["m"].runs, claims["m"].failures) == (2, 1), "b stopped before m; c and d do not count"
    assert claims["exact"].exact and claims["exact"].runs == 3 and robustness.verdict(claims["exact"]) == "held"
    error = claims["line 4 runs without error (KeyError: 'k')"]
    assert (error.runs, error.failures) == (3, 1)


def test_the_report_gives_seeds_axes_margins_and_the_chance_the_whole_book_passes(tmp_path):
    def result(seed, value):
        return {"seed": seed, "threads": 1, "kernels": "avx2", "environment": {"capability": "AVX2"},
                "commit": "abc1234", "date": "2026-12-02", "seconds": 90, "complete": True, "all_pages": True,
                "pages": {"p.md": _run([_measured("m", value), {"message": "e", "held": True}])}}
    results = {f"seed{s}": result(s, v) for s, v in ((101, 3.0), (202, 3.5), (303, 2.5))}
    claims = robustness.summarize(results, {"p.md": "f"})
    text = robustness.report(results, claims, tmp_path)
    for seed in (101, 202, 303):
        assert f"| {seed} | 1 | avx2 | AVX2 | all | 2026-12-02 | abc1234 | 1.5 |" in text
    assert re.search(r"\| p\.md \| m \| 3 \| 0 \| 2\.5 > 1 \| \d\.\de-\d\d \(\w+\) \| 4 \| holds \|", text)
    assert "| p.md | e | 3 | 0 |  | exact | exact | held |" in text
    assert "Each claim was checked in 3 retrainings" in text
    assert "The edge check (held-out retrainings) had no claim with enough values to check." in text  # 3 < 12
    assert "Whole-book retrainings that ran every page's current code: 3 of 3; 0 of them failed a claim. With" \
        " none failing in 3, a whole-book failure rate above 63 % is ruled out" in text
    # three values leave a wide fit: the bound is far below the point estimate, and says so
    assert re.search(r"\*\*Estimated chance that a fresh retraining passes every claim: at least "
                     r"\d+\.\d\d %\*\* \(95 % lower bound; point estimate \d+\.\d\d %", text)


def test_whole_book_retrainings_count_as_evidence_only_for_the_code_they_ran():
    def book(value, fingerprints=("f", "g")):
        return {"all_pages": True, "pages": {"p.md": _run([_measured("m", value)], fingerprint=fingerprints[0]),
                                             "q.md": _run([_measured("n", 2.0)], fingerprint=fingerprints[1])}}
    now = {"p.md": "f", "q.md": "g"}
    books = [book(2.0), book(2.0), book(-1.0, ("old", "g")), book(2.0, ("old", "g"))]
    line = robustness.whole_book_line(books, now)
    assert line.startswith("- Whole-book retrainings that ran every page's current code: 2 of 4; 0 of them")
    assert "above 78 % is ruled out" in line, "the bound counts the two current retrainings, not four"
    assert "1 more failed only on pages whose code has changed since" in line
    failing_now = robustness.whole_book_line([book(2.0), book(-1.0)], now)
    assert "2 of 2; 1 of them failed a claim. With 1 failing in 2, a whole-book failure rate above 97 %" \
        " is ruled out" in failing_now, "one failure in two bounds the rate by sqrt(0.95), not by nothing"


def test_a_retraining_whose_runner_stopped_counts_for_its_pages_not_as_a_whole_book(tmp_path):
    now = {"p.md": "f", "q.md": "g"}
    whole = {"seed": 1, "all_pages": True, "complete": True,
             "pages": {"p.md": _run([_measured("m", 2.0)], fingerprint="f"),
                       "q.md": _run([_measured("n", 2.0)], fingerprint="g")}}
    stopped = {"seed": 2, "all_pages": True, "complete": False, "stopped": "RuntimeError: Kernel died",
               "pages": {"p.md": _run([_measured("m", 3.0)], fingerprint="f")}}
    line = robustness.whole_book_line([whole, stopped], now)
    assert "current code: 1 of 1; 0 of them failed" in line
    assert ("1 more stopped before their last page, not on a claim (the runner failed: RuntimeError:"
            " Kernel died)") in line
    for r, name in ((whole, "seed1-threads1-default"), (stopped, "seed2-threads1-default")):
        (tmp_path / f"{name}.json").write_text(json.dumps(r))
    assert set(robustness.load(tmp_path)) == {"seed1-threads1-default", "seed2-threads1-default"}, \
        "a stopped retraining's record is kept, for the pages it ran"
    assert robustness._pages_cell(stopped) == "all planned; stopped after 1"


def two_page_book(book, monkeypatch) -> None:
    """A small book of two pages with code, to run from: ``--pages book/p.md`` names one of them."""
    for name in ("p", "q"):
        book.page(name, f"# {name}\n\n```{{code-cell}} ipython3\nx = 1\n```\n")
    book.toc("p", "q")
    monkeypatch.chdir(book.path)


def test_main_draws_new_seeds_runs_them_and_reports_every_retraining(mini_book, tmp_path, monkeypatch):
    import json

    ran = []

    def fake_run(variant, work, pages, root, shared_cores=False, code="unknown", all_pages=True):
        ran.append(variant)
        result = {"seed": variant.seed, "threads": variant.threads, "kernels": variant.kernels,
                  "environment": {"capability": "AVX2"}, "seconds": 6, "complete": True, "all_pages": all_pages,
                  "pages": {p: _run([_measured("m", 2.0 + variant.seed % 7)], fingerprint="f") for p in pages}}
        (work / f"{variant.name}.json").write_text(json.dumps(result))
        return result

    monkeypatch.setattr(robustness, "run_variant", fake_run)
    monkeypatch.setattr(robustness, "page_fingerprint", lambda root, page: "f")
    two_page_book(mini_book, monkeypatch)
    out = tmp_path / "R.md"
    args = ["--work", str(tmp_path / "work"), "--out", str(out), "--count", "3", "--pages", "book/p.md"]
    assert robustness.main(args) == 0
    assert robustness.main(args) == 0
    assert len(ran) == 6 and len({v.seed for v in ran}) == 6, "the second run drew seeds the first had not used"
    assert "| book/p.md | m | 6 | 0 |" in out.read_text()


def test_a_page_whose_code_cannot_be_committed_is_not_retrained(mini_book, tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(robustness, "run_variant", lambda *args, **kwargs: ran.append(args))
    two_page_book(mini_book, monkeypatch)
    wide = "z = '" + "a" * 79 + "'"  # 85 characters
    mini_book.page("q", f"# q\n\n```{{code-cell}} ipython3\nx = 1\n{wide}\n```\n")
    line = (mini_book.path / "book" / "q.md").read_text().splitlines().index(wide) + 1
    args = ["--work", str(tmp_path / "work"), "--out", str(tmp_path / "R.md"), "--count", "1"]
    with pytest.raises(SystemExit, match=rf"book/q\.md:{line}: a code line of 85 characters, over 79"):
        robustness.main(args)
    assert ran == [], "nothing was retrained"


def test_a_failing_claim_fails_the_run_naming_the_claim_and_the_runner(mini_book, tmp_path, monkeypatch, capsys):
    import json

    def fake_run(variant, work, pages, root, shared_cores=False, code="unknown", all_pages=True):
        value = 0.5 if len(list(work.glob("*.json"))) == 1 else 2.0  # the second retraining fails
        result = {"seed": variant.seed, "threads": variant.threads, "kernels": variant.kernels,
                  "environment": {"capability": "NEON"}, "seconds": 6, "complete": True, "all_pages": all_pages,
                  "pages": {p: _run([_measured("the KL stays small", value)], fingerprint="f") for p in pages}}
        (work / f"{variant.name}.json").write_text(json.dumps(result))
        return result

    monkeypatch.setattr(robustness, "run_variant", fake_run)
    monkeypatch.setattr(robustness, "page_fingerprint", lambda root, page: "f")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    two_page_book(mini_book, monkeypatch)
    args = ["--work", str(tmp_path / "work"), "--out", str(tmp_path / "R.md"), "--count", "3", "--jobs", "1",
            "--pages", "book/p.md", "--runner", "macos-14"]
    assert robustness.main(args) == 1
    assert ("::error::book/p.md: the KL stays small: failed 1 of 3 retrainings on macos-14"
            in capsys.readouterr().out)
    assert "(runner: macos-14)" in (tmp_path / "R.md").read_text()


def test_make_test_retrains_under_a_seed_from_the_commit_unless_one_is_given(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.delenv("REC11_SEED", raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    sha = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert robustness.commit_seed(tmp_path) == (int(sha, 16) % 10_000, f"commit {sha[:10]} modulo 10,000")
    monkeypatch.setenv("REC11_SEED", "7")
    assert robustness.commit_seed(tmp_path)[0] == 7


def test_records_are_kept_gzipped_pooled_on_the_next_run_and_moved_to_history_when_stale(tmp_path):
    current = {"seed": 1, "complete": True, "pages": {"p.md": _run([_measured("m", 2.0)], fingerprint="new")}}
    stale = {"seed": 2, "complete": True, "pages": {"p.md": _run([_measured("m", 2.0)], fingerprint="old")}}
    records = tmp_path / "robustness"
    (records).mkdir()
    (records / "seed2-threads1-native.json.gz").write_bytes(b"")  # an earlier record, now stale
    fresh_but_stale = {**stale, "seed": 5}  # ran, then its page changed before the report
    kept = robustness.save_records({"seed1-threads1-native": current, "seed2-threads1-native": stale,
                                    "seed5-threads1-native": fresh_but_stale}, records, {"p.md": "new"})
    assert kept == 1 and sorted(p.name for p in records.glob("*.gz")) == ["seed1-threads1-native.json.gz"]
    assert (records / "history" / "seed2-threads1-native.json.gz").exists(), "no record is deleted"
    kept_fresh = records / "history" / "seed5-threads1-native.json.gz"
    assert json.loads(gzip.decompress(kept_fresh.read_bytes())) == fresh_but_stale, "nor one never committed"
    work = tmp_path / "work"
    work.mkdir()
    (work / "seed3-threads2-avx2.json").write_text(json.dumps({**current, "seed": 3}))
    (work / "seed4-threads2-avx2.part.json").write_text("{}")  # a retraining still running
    assert set(robustness.load(work, records)) == {"seed1-threads1-native", "seed3-threads2-avx2"}
    assert robustness.load(work, records)["seed1-threads1-native"] == current


def test_a_page_depends_on_the_modules_it_imports_and_old_records_of_its_code_are_kept(mini_book):
    mini_book.page("p", "# P\n\n```{code-cell} ipython3\nfrom rec11.style import setup_page\n\nsetup_page()\n```\n\n"
                        "```{code-cell} ipython3\nfrom rec11.attention import attention\n```\n")
    root, page = mini_book.path, "book/p.md"
    today = robustness.page_fingerprint(root, page)
    assert today != robustness.legacy_fingerprint(root, page)
    results = {"a": {"pages": {page: {"fingerprint": robustness.legacy_fingerprint(root, page)}}},
               "b": {"pages": {page: {"fingerprint": "some older code"}}}}
    robustness.migrate(results, root, [page], {page: today})
    assert results["a"]["pages"][page]["fingerprint"] == today
    assert results["b"]["pages"][page]["fingerprint"] == "some older code"


def test_until_tops_every_page_up_and_runs_only_the_short_ones():
    fingerprints = {"a.md": "A", "b.md": "B", "c.md": "C"}
    results = {  # a.md has 2 current runs and one stale; b.md has 1; c.md has 3
        f"seed{i}": {"pages": {page: {"fingerprint": fp} for page, fp in pages.items()}}
        for i, pages in enumerate([{"a.md": "A", "b.md": "B", "c.md": "C"}, {"a.md": "A", "c.md": "C"},
                                   {"a.md": "old", "c.md": "C"}])
    }
    counts = robustness.current_runs(results, fingerprints)
    assert counts == {"a.md": 2, "b.md": 1, "c.md": 3}
    plan = robustness.top_up(counts, 3)
    assert plan == [["a.md", "b.md"], ["b.md"]]
    after = {page: counts[page] + sum(page in run for run in plan) for page in counts}
    assert after == {"a.md": 3, "b.md": 3, "c.md": 3}
    assert robustness.top_up(counts, 1) == []


def test_a_chance_is_never_rounded_up_to_certainty():
    from rec11_tools.robustness import percent

    assert percent(0.99996) == "> 99.99 %"
    assert percent(0.9988) == "99.88 %"
    assert percent(1.0) == "100.00 %"


def test_a_retraining_runs_the_books_own_packages_or_stops(root, tmp_path):
    """A record is labelled with the code under the book's root, so its pages must import that
    code, not whichever checkout this Python has installed."""
    variant = robustness.Variant(seed=5, threads=1, kernels="default")
    env = variant.environment(tmp_path / "models", root=root)
    assert env["PYTHONPATH"].split(":")[0] == str((root / "src").resolve())
    robustness.check_package(root, env)  # this checkout: its own packages

    other = tmp_path / "other-book"
    (other / "book").mkdir(parents=True)
    (other / "src").mkdir()  # a book whose packages are not where this Python finds rec11
    with pytest.raises(SystemExit, match=r"the pages would import .*, not the packages in .*other-book/src"):
        robustness.check_package(other, variant.environment(tmp_path / "models", root=other))


def test_make_claims_keeps_its_records_beside_the_report(mini_book, tmp_path, monkeypatch):
    """`make claims` (--no-report): the retrainings' records go to robustness/, to be committed
    with the page (docs/claims-and-robustness.md), not only to the work folder."""
    mini_book.page("p", "# Home\n\n```{code-cell} ipython3\nx = 1\n```\n")
    mini_book.toc("p")
    monkeypatch.chdir(mini_book.path)

    def fake_run(variant, work, pages, root, **_):
        claims = [{"message": "p.md: 'x is one'", "value": 1.0 + variant.seed * 1e-6, "op": ">",
                   "threshold": 0, "held": True}]
        result = {"environment": {}, "seed": variant.seed, "threads": variant.threads, "kernels": variant.kernels,
                  "commit": "test", "date": "2026-12-05", "seconds": 1.0, "complete": True, "all_pages": True,
                  "pages": {p: {"claims": claims, "errors": [], "glued": {}, "seconds": 1.0,
                                "fingerprint": robustness.page_fingerprint(root, p)} for p in pages}}
        (work / f"{variant.name}.json").write_text(json.dumps(result))
        return result

    monkeypatch.setattr(robustness, "run_variant", fake_run)
    records = mini_book.path / "robustness"
    assert robustness.main(["--no-report", "--pages", "book/p.md", "--count", "3", "--jobs", "1",
                            "--work", str(tmp_path / "work")]) == 0
    assert len(list(records.glob("seed*.json.gz"))) == 3
    assert not (mini_book.path / "ROBUSTNESS.md").exists()


def _claim(page, message, values, keys, threshold=1.0, op=">"):
    c = robustness.Claim(page, message, runs=len(values), values=tuple(values), keys=tuple(keys))
    c.worst = {"value": min(values), "op": op, "threshold": threshold, "held": True}
    return c


def test_claims_with_one_value_in_every_shared_retraining_count_once():
    keys = [f"seed{i}" for i in range(12)]
    values = [2 + 0.1 * i for i in range(12)]
    a = _claim("book/p.md", "p: 'x'", values, keys)
    twin = _claim("book/q.md", "q: 'x again'", values[2:], keys[2:])  # 10 shared retrainings, one value each
    other = _claim("book/q.md", "q: 'y'", [v + 1e-3 for v in values], keys)
    few = _claim("book/r.md", "r: 'x'", values[:9], keys[:9])  # 9 shared: not enough to say
    moved = _claim("book/r.md", "r: 'x, another bar'", values, keys, threshold=1.5)
    still = [_claim("book/s.md", f"s: 'never moves' {n}", [3.0] * 12, keys) for n in (1, 2)]
    assert robustness.same_quantity([a, twin, other, few, moved, *still]) == [0, 0, 2, 3, 4, 5, 6]


def test_a_quantity_claimed_on_two_pages_is_fitted_to_every_retraining_that_measured_it():
    keys = [f"seed{i}" for i in range(40)]
    values = [2 + 0.01 * ((7 * i) % 40) for i in range(40)]
    both = _claim("book/p.md", "p: 'x'", values[:12], keys[:12])  # a whole book ran both pages
    more = _claim("book/q.md", "q: 'x again'", values, keys)  # and q's page ran on its own too
    alone = _claim("book/r.md", "r: 'y'", values[:12], keys[:12], threshold=1.5)
    claims = [both, more, alone]
    same = robustness.same_quantity(claims)
    assert same == [0, 0, 2]
    fitted = robustness.pooled(claims, same)
    assert sorted(fitted[0]) == sorted(fitted[1]) == sorted(values), "one retraining, one value"
    assert fitted[2] == alone.values, "a claim of its own keeps its own values"


def test_a_quantity_claimed_twice_is_one_chance_to_fail_in_the_book():
    from rec11_tools import tails

    values = [0.5 + 0.01 * i for i in range(30)]
    claim = (values, 0.4, ">", False)
    once = tails.book_pass([claim])
    twice = tails.book_pass([claim, claim])
    counted_once = tails.book_pass([claim, claim], same=[0, 0])
    assert twice["point"] < once["point"]
    assert counted_once["point"] == once["point"] and counted_once["lower"] == once["lower"]


def _flags(tmp_path, *pairs):
    (tmp_path / "robustness").mkdir()
    entries = "".join(f'  - claim: "{a}"\n    follows_from: "{b}"\n    reason: "because"\n' for a, b in pairs)
    (tmp_path / "robustness" / "flags.yml").write_text("implied:\n" + entries)
    return tmp_path


def test_a_claim_that_follows_from_another_fails_with_it_and_counts_once(tmp_path):
    keys = [f"seed{i}" for i in range(30)]
    gaps = [0.1 + 0.01 * ((7 * i) % 30) for i in range(30)]  # the largest gap over the words, < 0.5
    largest = _claim("book/p.md", "p: 'every word within half a bit'", gaps, keys, threshold=0.5, op="<")
    one_word = _claim("book/q.md", "q: 'this word within half a bit'", [g * 0.8 for g in gaps], keys,
                      threshold=0.5, op="<")
    alone = _claim("book/r.md", "r: 'z'", [g + 1e-3 for g in gaps], keys, threshold=0.5, op="<")
    claims = [largest, one_word, alone]
    root = _flags(tmp_path, (one_word.message, largest.message))
    together, pairs = robustness.with_implied(claims, robustness.same_quantity(claims), root)
    assert together[1] == together[0] != together[2] and pairs == [(one_word, largest)]
    assert robustness.pooled(claims, robustness.same_quantity(claims))[1] == one_word.values, "values not pooled"


def test_a_claim_said_to_follow_from_one_that_held_where_it_failed_is_refused(tmp_path):
    keys = [f"seed{i}" for i in range(12)]
    source = _claim("book/p.md", "p: 'x'", [0.2] * 11 + [0.3], keys, threshold=0.5, op="<")
    wrong = _claim("book/q.md", "q: 'y'", [0.2] * 11 + [0.7], keys, threshold=0.5, op="<")  # failed; p held
    with pytest.raises(ValueError, match="the reason is wrong"):
        robustness.with_implied([source, wrong], [0, 1], _flags(tmp_path, (wrong.message, source.message)))


def test_a_claim_that_failed_gets_its_chance_from_the_counts_not_a_tail():
    """One failure in 41 at 4.9 standard deviations: a fitted tail said 6e-8; the counts say 1/41."""
    from rec11_tools import tails

    values = [0.9 + 0.02 * ((i * 7) % 11 - 5) for i in range(40)] + [0.48]
    result = tails.book_pass([(values, 0.5, ">", False)])
    assert result["per_claim"][0] == (1 / 41, "observed")
    assert result["point"] == 1 - 1 / 41 and result["lower"] < 1 - 1 / 41
    bare = tails.book_pass([], counted=[(1, 41), (0, 41)])
    assert bare["point"] == 1 - 1 / 41, "a bare assert that failed counts too"


def test_why_a_runner_stopped_is_read_from_its_log_cause_first():
    log = ("book/a.md: 4 claims, 0 false, 0 errors, 3 s\nTraceback (most recent call last):\n"
           "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:54359')\n"
           "RuntimeError: Kernel died before replying to kernel_info\nAssertionError: \n")
    assert robustness.stopped_because(log) == ("zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:54359')"
                                               " -> RuntimeError: Kernel died before replying to kernel_info")


def test_the_same_records_load_in_the_same_order_whichever_folder_holds_them(tmp_path):
    """The report's held-out check picks values by position: a record's folder must not move it."""
    work, records = tmp_path / "work", tmp_path / "records"
    work.mkdir(), records.mkdir()
    (work / "seed9-threads1-default.json").write_text(json.dumps({"pages": {}}))
    (records / "seed1-threads1-default.json.gz").write_bytes(gzip.compress(json.dumps({"pages": {}}).encode()))
    assert list(robustness.load(work, records)) == list(robustness.load(records, work)) == [
        "seed1-threads1-default", "seed9-threads1-default"]
