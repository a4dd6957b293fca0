"""The mutants tests/mutation/equivalent.py calls equivalent compute what the answers compute.

Each is built from tests/mutation/answers.py with its one change, then run beside the
answer on inputs Hypothesis draws, under the same seed: outputs and gradients must be the
same (for reparameterize: the same as the answer's with the noise negated, -eps, which is
distributed as eps is). ``make mutants`` counts a survivor as equivalent only if it is here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parents[1] / "mutation"


def _module(name):
    spec = importlib.util.spec_from_file_location(f"mutation_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


equivalent = _module("equivalent")
answers = _module("answers")
FEW = settings(max_examples=40, deadline=None)


def mutant(function: str, original: str):
    entry = next(e for e in equivalent.EQUIVALENT
                 if e.function == function and e.original == original)
    return equivalent.load(equivalent.mutated_source(entry))[function]


def test_every_entry_applies_to_answers_once():
    """An entry whose text is gone from answers.py (the page changed) must be revisited."""
    for entry in equivalent.EQUIVALENT:
        code = equivalent.mutated_source(entry)
        assert code != equivalent.ANSWERS.read_text()
        assert entry.function in equivalent.load(code)
    with pytest.raises(ValueError):
        equivalent.mutated_source(equivalent.Equivalent("attention", "dim=+7", "dim=7", ""))


def test_a_diff_is_matched_only_to_its_own_entry():
    line = "scores = scores.masked_fill(mask == 0, float(\"-inf\"))"
    assert equivalent.matches("attention", line, line.replace("-inf", "-INF"))
    assert not equivalent.matches("attention", line, line.replace("-inf", "inf"))
    assert not equivalent.matches("generate", line, line.replace("-inf", "-INF"))


def _grads(out, leaves):
    return torch.autograd.grad((out * torch.linspace(-1, 1, out.numel()).view(out.shape)).sum(),
                               leaves)


@FEW
@given(st.integers(1, 3), st.integers(1, 5), st.integers(1, 5), st.integers(1, 6),
       st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_attention_minus_INF(N, T_q, T_k, d_k, d_v, seed):
    g = torch.Generator().manual_seed(seed)
    Q, K = torch.randn(N, T_q, d_k, generator=g), torch.randn(N, T_k, d_k, generator=g)
    V = torch.randn(N, T_k, d_v, generator=g)
    mask = torch.rand(T_q, T_k, generator=g) < 0.5
    mask[:, 0] = True  # every query keeps a key
    fn = mutant("attention", 'float("-inf")')
    outs = []
    for f in (answers.attention, fn):
        leaves = [x.clone().requires_grad_() for x in (Q, K, V)]
        out = f(*leaves, mask)
        outs.append((out.detach(), _grads(out, leaves)))
    assert torch.equal(outs[0][0], outs[1][0])
    assert all(torch.equal(a, b) for a, b in zip(outs[0][1], outs[1][1]))


class TableLM(torch.nn.Module):
    """Next-token logits from a fixed random table, read at the last token."""

    def __init__(self, V, block_size, seed):
        super().__init__()
        self.cfg = SimpleNamespace(block_size=block_size, vocab_size=V)
        self.table = torch.nn.Parameter(
            3 * torch.randn(V, V, generator=torch.Generator().manual_seed(seed)))

    def forward(self, idx):
        assert idx.shape[1] <= self.cfg.block_size
        return self.table[idx]  # (N, T, V)


@FEW
@pytest.mark.parametrize("original", ["float('-inf')", "torch.softmax(logits, dim=-1)"])
@given(st.integers(2, 7), st.integers(1, 4), st.integers(1, 4), st.integers(1, 6),
       st.sampled_from([0.5, 1.0, 2.0]), st.integers(0, 7), st.integers(0, 2**31 - 1))
def test_generate(original, V, N, T, steps, temperature, top_k, seed):
    model = TableLM(V, block_size=3, seed=seed)
    idx = torch.randint(V, (N, T), generator=torch.Generator().manual_seed(seed))
    top_k = min(top_k, V) or None
    outs = []
    for f in (answers.generate, mutant("generate", original)):
        torch.manual_seed(seed)
        outs.append(f(model, idx, steps, temperature, top_k))
    assert torch.equal(*outs)


@FEW
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_reparameterize_minus_is_the_answer_with_minus_eps(N, Z, seed):
    """Under one seed the mutant's z is the answer's with eps negated, 2 mu - z, and so
    are its gradients; -eps ~ N(0, I) as eps is, so the two draw from one distribution."""
    g = torch.Generator().manual_seed(seed)
    mu, logvar = torch.randn(N, Z, generator=g), torch.randn(N, Z, generator=g)
    fn = mutant("reparameterize", "return mu + torch.exp(0.5 * logvar) * eps")
    got = []
    for f in (answers.reparameterize, fn):
        leaves = [mu.clone().requires_grad_(), logvar.clone().requires_grad_()]
        torch.manual_seed(seed)
        z = f(*leaves)
        got.append((z.detach(), torch.autograd.grad(z.sum(), leaves)))
    (z, (dmu, dlogvar)), (z_m, (dmu_m, dlogvar_m)) = got
    torch.testing.assert_close(z_m, 2 * mu - z)
    torch.testing.assert_close(dmu_m, dmu)
    torch.testing.assert_close(dlogvar_m, -dlogvar)
