"""The tiny GPT: shapes, the causal mask, the attention maps it reports, ablation, extra input."""

import pytest
import torch

from rec11.attention import MultiHeadAttention
from rec11.gpt import GPT, GPTConfig

CFG = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=4, d=16)


@pytest.fixture
def model():
    torch.manual_seed(0)
    m = GPT(CFG).eval()
    # larger weights than the init's 0.02, so that every path visibly moves the logits
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return m


@pytest.fixture
def idx():
    return torch.randint(0, CFG.vocab_size, (3, CFG.block_size), generator=torch.Generator().manual_seed(1))


def test_attention_is_the_shared_module(model):
    assert all(isinstance(b.attn, MultiHeadAttention) for b in model.blocks)
    assert model.head.weight is model.wte.weight


def test_logits_shape(model, idx):
    assert model(idx).shape == (3, CFG.block_size, CFG.vocab_size)
    assert model(idx[:, :5]).shape == (3, 5, CFG.vocab_size)
    with pytest.raises(ValueError):
        model(torch.zeros(1, CFG.block_size + 1, dtype=torch.long))


@pytest.mark.parametrize("t", [1, 4, 7])
def test_causal_mask_later_tokens_never_change_earlier_logits(model, idx, t):
    changed = idx.clone()
    changed[:, t] = (changed[:, t] + 1) % CFG.vocab_size
    a, b = model(idx), model(changed)
    torch.testing.assert_close(a[:, :t], b[:, :t], rtol=0, atol=1e-6)
    assert (a[:, t:] - b[:, t:]).abs().max() > 1e-3  # the change is seen from t on


def test_attention_maps_are_causal_distributions(model, idx):
    logits, A = model(idx, return_attn=True)
    assert A.shape == (3, CFG.n_layer, CFG.n_head, CFG.block_size, CFG.block_size)  # (N, L, H, T, T)
    torch.testing.assert_close(A.sum(-1), torch.ones(A.shape[:-1]))
    assert A.triu(diagonal=1).abs().max() == 0
    torch.testing.assert_close(logits, model(idx))


def test_ablating_every_layer_cuts_all_traffic_between_positions(model, idx):
    # With no attention output, only the residual stream is left, and it is per position.
    everything = tuple(range(CFG.n_layer))
    changed = idx.clone()
    changed[:, 0] = (changed[:, 0] + 1) % CFG.vocab_size
    a = model(idx, ablate_layers=everything)
    b = model(changed, ablate_layers=everything)
    torch.testing.assert_close(a[:, 1:], b[:, 1:], rtol=0, atol=1e-6)
    assert (model(idx)[:, 1:] - model(changed)[:, 1:]).abs().max() > 1e-3


def test_ablating_one_layer_changes_the_prediction(model, idx):
    for layer in range(CFG.n_layer):
        assert (model(idx, ablate_layers=(layer,)) - model(idx)).abs().max() > 1e-3


def test_ablating_every_head_of_a_layer_is_ablating_the_layer_but_for_the_bias(model, idx):
    """A removed head contributes nothing; what is left of the layer is its output bias."""
    layer = 1
    every_head = [(layer, h) for h in range(CFG.n_head)]
    x = model.embed(idx)  # (N, T, d)
    x, _ = model.blocks[0](x, model.mask)
    block = model.blocks[layer]
    out, _ = block.attn(block.ln_1(x), mask=model.mask, return_attn=True,
                        head_mask=torch.zeros(CFG.n_head))
    torch.testing.assert_close(out, block.attn.proj.bias.expand_as(out))
    with torch.no_grad():
        block.attn.proj.bias.zero_()
    torch.testing.assert_close(model(idx, ablate_heads=every_head), model(idx, ablate_layers=(layer,)))


def test_ablating_one_head_removes_exactly_its_share_of_the_output(model, idx):
    trace = model.inspect(idx)
    block, h = model.blocks[0], 2
    x = block.ln_1(model.embed(idx))
    full = block.attn(x, mask=model.mask)
    mask = torch.ones(CFG.n_head)
    mask[h] = 0
    without = block.attn(x, mask=model.mask, head_mask=mask)
    share = trace.attn[:, 0, h] @ trace.v_out[:, 0, h]  # (N, T, d): head h's contribution
    torch.testing.assert_close(full - without, share, rtol=1e-5, atol=1e-5)
    assert (model(idx, ablate_heads=[(0, h)]) - model(idx)).abs().max() > 1e-4


def test_inspect_agrees_with_forward_and_values_rebuild_attention(model, idx):
    trace = model.inspect(idx)
    logits, A = model(idx, return_attn=True)
    torch.testing.assert_close(trace.logits, logits)
    torch.testing.assert_close(trace.attn, A)
    N, L, H, T = 3, CFG.n_layer, CFG.n_head, CFG.block_size
    assert trace.v.shape == (N, L, H, T, CFG.d // H)
    assert trace.v_out.shape == (N, L, H, T, CFG.d)
    # layer 0's attention output is Σ_h A_h v_out_h plus the output bias
    block = model.blocks[0]
    out = block.attn(block.ln_1(model.embed(idx)), mask=model.mask)  # (N, T, d)
    rebuilt = (trace.attn[:, 0] @ trace.v_out[:, 0]).sum(1) + block.attn.proj.bias  # (N, T, d)
    torch.testing.assert_close(rebuilt, out, rtol=1e-5, atol=1e-5)


def test_extra_is_added_at_every_position(model, idx):
    z = torch.randn(3, CFG.d, generator=torch.Generator().manual_seed(2))
    per_position = z[:, None, :].expand(3, CFG.block_size, CFG.d)
    torch.testing.assert_close(model(idx, extra=z), model(idx, extra=per_position))
    torch.testing.assert_close(model(idx, extra=torch.zeros(3, CFG.d)), model(idx))
    assert (model(idx, extra=z) - model(idx)).abs().max() > 1e-3


def test_gradients_reach_every_parameter(model, idx):
    model.train()
    model(idx, extra=torch.randn(3, CFG.d)).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
