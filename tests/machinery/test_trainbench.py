"""The training benchmark's report: per kind of model, both ways, and one section of BENCHMARKS.md."""

from rec11_tools import trainbench


def test_the_section_gives_the_wall_clock_and_each_kind_of_model_both_ways(tmp_path):
    old, new = trainbench.WAYS
    results = {old: [(200.0, {"recall": [3.0, 3.0], "grammar-gpt": [40.0]}),
                     (210.0, {"recall": [3.5, 3.5], "grammar-gpt": [42.0]})],
               new: [(110.0, {"recall": [3.2, 3.2], "grammar-gpt": [48.0]}),
                     (120.0, {"recall": [3.4, 3.4], "grammar-gpt": [50.0]})]}
    text = trainbench.render(results, 2, "AMD EPYC, 2 cores", "abc1234")
    assert "| **every model, wall clock** | **205** (200–210) | **115** (110–120) |" in text
    assert "| recall, training loops | 6 (2 models) | 7 (2 models) |" in text
    assert "| grammar-gpt, training loops | 41 (1 model) | 49 (1 model) |" in text
    out = tmp_path / "BENCHMARKS.md"
    out.write_text("# Benchmarks\n\n## Builds\n\nrows\n\n## Retraining every model\n\nSTALE ROWS\n\n## Pages\n\nmore\n")
    trainbench.write_section(out, text)
    written = out.read_text()
    assert "STALE ROWS" not in written and "**205**" in written
    assert written.index("## Builds") < written.index(trainbench.SECTION) < written.index("## Pages")
