"""The simulated failure rates (rec11_tools.simulable) model what the page computes.

ROBUSTNESS.md trusts a simulation in place of a fitted tail only where the simulation draws
the page's own values: here the page's cells run 10,000 times, and their values must
come from the simulation's distribution. A page whose code has moved away from its
simulation stops the report with the entry to update.
"""

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.stats import ks_2samp

from rec11_book.shared.pages import code_cells
from rec11_tools import simulable

ROOT = Path(__file__).resolve().parents[2]
SEEDS = 10_000


def page_values(page: str, message: str, code: tuple[str, ...]) -> np.ndarray:
    """The claim's value as the page computes it, under fresh seeds: the page's cells that
    hold the simulated code, run in order with ``claim`` recording and ``glue`` ignoring."""
    cells = [c for c in code_cells((ROOT / page).read_text()) if any(line in c for line in code)]
    assert cells, f"{page}: no cell holds the simulated code"
    values = []

    def record(value, op, threshold, said):
        if said == message:
            values.append(value)

    torch.manual_seed(0)  # one stream: each run of the cells draws fresh values from it
    compiled = [compile(cell, page, "exec") for cell in cells]
    for _ in range(SEEDS):
        scope = {"torch": torch, "math": math, "claim": record, "glue": lambda *a, **k: None}
        for cell in compiled:
            exec(cell, scope)
    return np.array(values)


@pytest.mark.parametrize("key", list(simulable.CLAIMS), ids=[m for _, m in simulable.CLAIMS])
def test_each_simulation_draws_the_values_its_page_computes(key):
    page, message = key
    entry = simulable.CLAIMS[key]
    simulable.check(page, ROOT)
    on_the_page = page_values(page, message, entry.code)
    assert len(on_the_page) == SEEDS, "the claim ran once per run of the cells"
    simulated = entry.simulate(20 * SEEDS, np.random.default_rng(1))
    assert ks_2samp(on_the_page, simulated).pvalue > 1e-3, "the simulation's values are not the page's"


def test_a_simulation_whose_page_changed_stops_the_report(tmp_path):
    (page, message), entry = next(iter(simulable.CLAIMS.items()))
    moved = tmp_path / page
    moved.parent.mkdir(parents=True)
    text = (ROOT / page).read_text()
    moved.write_text(text.replace(entry.code[0], entry.code[0].replace("6", "7", 1)))
    with pytest.raises(SystemExit, match=r"no longer has the code .* Fix: update that entry"):
        simulable.check(page, tmp_path)
    assert simulable.rate("book/no-such-page.md", message, tmp_path) is None


def test_the_upper_bound_covers_the_rate_it_saw():
    assert simulable.upper_bound(0, 1_000) == pytest.approx(3.0 / 1_000, rel=0.01)  # the rule of three
    assert 57 / 2e6 < simulable.upper_bound(57, 2_000_000) < 80 / 2e6
    assert simulable.upper_bound(5, 5) == 1.0
