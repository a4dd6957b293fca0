"""The claims harness records every assert, held or not, and the matrix tallies them."""

import textwrap

from rec11_tools import claims, robustness
from rec11_tools.robustness import Variant

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
    for ok, message in result["claims"]:
        held[message] = held.get(message, True) and ok
    assert held == {"page: 'x is three' (false)": False, "page: 'x is two'": True,
                    "page: 'every i is small'": False, "page: 'after an error the page goes on'": True}
    assert "meant to fail" not in held, "a cell that raises on purpose keeps its assert"
    assert [e["error"].split(":")[0] for e in result["errors"]] == ["ZeroDivisionError"]
    assert result["errors"][0]["line"] == PAGE.splitlines().index("for i in range(3):") + 1
    assert result["glued"] == {"x": "2"}


def test_the_tally_counts_a_claim_not_reached_as_false_and_one_not_asserted_as_absent():
    run = lambda claims, errors=(): {"pages": {"p.md": {"claims": claims, "errors": list(errors)}}}
    results = {"a": run([[True, "c1"], [True, "c2"]]), "b": run([[True, "c1"], [False, "c1"]]),
               "c": run([[True, "c1"]], [{"line": 4, "error": "KeyError: 'k'"}]),
               "d": {"pages": {}}}
    table = robustness.tally(results)["p.md"]
    assert table["c1"] == {"held": ["a", "c"], "false": ["b"], "absent": ["d"]}
    assert table["c2"] == {"held": ["a"], "false": ["c"], "absent": ["b", "d"]}, \
        "b ran the page to the end without asserting c2; c stopped at an error; d had no such page"
    assert table["line 4 runs without error (KeyError: 'k')"]["false"] == ["c"]


def test_the_matrix_covers_seeds_threads_and_kernels():
    full = robustness.variants("full")
    assert len(full) == 18 and len(set(full)) == 18
    assert {v.seed for v in full} == {0, 1, 2} and {v.threads for v in full} == {1, 2}
    assert {v.kernels for v in full} == {"native", "avx2", "default"}
    axes = robustness.variants("axes")
    assert axes[0] == Variant(0, 2, "native") and len(axes) == 6
    assert all(sum(a != b for a, b in zip(
        (v.seed, v.threads, v.kernels), (0, 2, "native"))) == 1 for v in axes[1:])


def test_a_variant_sets_its_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")
    env = Variant(2, 1, "native").environment(tmp_path)
    assert (env["REC11_SEED"], env["REC11_TRAIN_THREADS"], env["REC11_CACHE_DIR"]) == ("2", "1", str(tmp_path))
    assert "ATEN_CPU_CAPABILITY" not in env, "native: the machine's own kernels"
    env = Variant(0, 2, "avx2").environment(tmp_path)
    assert (env["ATEN_CPU_CAPABILITY"], env["MKL_CBWR"]) == ("avx2", "AVX2")


def test_re_running_pages_touches_only_the_variants_that_ran_in_full(tmp_path, monkeypatch):
    import json

    full, partial, never = robustness.variants("axes")[:3]
    (tmp_path / f"{full.name}.json").write_text(json.dumps(
        {"complete": True, "seconds": 60, "environment": {"capability": "AVX512"}, "pages": {}}))
    (tmp_path / f"{partial.name}.json").write_text(json.dumps({"pages": {}}))  # a run that was stopped
    ran = []

    def fake_run(variant, work, pages, shared_cores=False, code="unknown"):
        ran.append((variant.name, tuple(pages)))
        return {"complete": True, "seconds": 1, "environment": {"capability": "AVX512"},
                "pages": {p: {"claims": [[True, "c"]], "errors": []} for p in pages}}

    monkeypatch.setattr(robustness, "run_variant", fake_run)
    robustness.main(["--design", "axes", "--work", str(tmp_path), "--out", str(tmp_path / "R.md"),
                     "--pages", "book/x.md"])
    assert ran == [(full.name, ("book/x.md",))], ran
    assert never.name not in {name for name, _ in ran}


def test_the_report_says_which_commit_each_variant_ran(tmp_path):
    run = lambda **extra: {"complete": True, "seconds": 60, "environment": {"capability": "AVX2"},
                           "pages": {"p.md": {"claims": [[True, "c"]], "errors": []}}, **extra}
    a, b = Variant(0, 2, "native"), Variant(1, 2, "native")
    results = {a.name: run(commit="abc1234", rerun_commit="def5678", rerun_pages=["p.md"]),
               b.name: run(commit="def5678")}
    text = robustness.report(results, [a, b], tmp_path)
    assert f"| {a.label} | AVX2 | abc1234, edited pages at def5678 | 1.0 | 0 |" in text
    assert "| p.md | c | 2/2 |" in text
    assert f"| {b.label} | AVX2 | def5678 | 1.0 | 0 |" in text


def test_report_only_runs_nothing_and_reports_the_complete_variants(tmp_path, monkeypatch):
    import json

    done, stopped = robustness.variants("axes")[:2]
    (tmp_path / f"{done.name}.json").write_text(json.dumps(
        {"complete": True, "seconds": 60, "commit": "abc1234", "environment": {"capability": "AVX2"},
         "pages": {"p.md": {"claims": [[True, "c"]], "errors": []}}}))
    (tmp_path / f"{stopped.name}.json").write_text(json.dumps({"pages": {}}))
    monkeypatch.setattr(robustness, "run_variant", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran")))
    out = tmp_path / "R.md"
    assert robustness.main(["--design", "axes", "--work", str(tmp_path), "--out", str(out), "--report"]) == 0
    text = out.read_text()
    assert f"| {done.label} | AVX2 | abc1234 |" in text and stopped.label not in text
    assert "**1 of the 6 variants have run**" in text
