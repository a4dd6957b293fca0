"""rec11.attention against PyTorch's own references, in float64.

References: ``F.scaled_dot_product_attention`` for the four-line attention, and
``nn.MultiheadAttention`` (same weights) for the multi-head module. Mind the opposite
mask conventions: our mask is 0 where attention is forbidden; SDPA's boolean mask is
True where attention is *allowed*; nn.MultiheadAttention's boolean mask is True where
it is *forbidden*.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rec11.attention import (
    AttentionConfig,
    MultiHeadAttention,
    attention,
    causal_mask,
    merge_heads,
    sinusoidal_positions,
    split_heads,
)

ATOL = 1e-10  # float64 agrees far below float32's 1e-6
DT = torch.float64


def rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=DT)


def random_mask(T_q, T_k, seed=0, lead=()):
    """A random 0/1 mask in which every row keeps at least one key."""
    g = torch.Generator().manual_seed(seed)
    m = (torch.rand(*lead, T_q, T_k, generator=g) < 0.5).to(DT)
    keep = torch.randint(T_k, (*lead, T_q, 1), generator=g)
    return m.scatter(-1, keep, 1.0)  # one guaranteed key per row


# (q shape, k shape): unbatched, batched, batched over heads, and T_q != T_k
SHAPES = [
    ((5, 8), (5, 8)),
    ((3, 6, 8), (3, 6, 8)),
    ((2, 4, 7, 16), (2, 4, 7, 16)),
    ((2, 3, 4, 8), (2, 3, 9, 8)),  # cross-attention: 4 queries, 9 keys
    ((6, 8), (11, 8)),
]


def make_mask(kind, T_q, T_k, lead=()):
    if kind is None:
        return None
    if kind == "causal":
        return causal_mask(T_q, T_k).to(DT)
    return random_mask(T_q, T_k, seed=T_q * 100 + T_k, lead=lead)


@pytest.mark.parametrize("q_shape,k_shape", SHAPES)
@pytest.mark.parametrize("mask_kind", [None, "causal", "random"])
@pytest.mark.parametrize("scale", [None, 1.0, 0.3])
def test_attention_matches_sdpa(q_shape, k_shape, mask_kind, scale):
    q, k = rand(*q_shape, seed=1), rand(*k_shape, seed=2)
    v = rand(*k_shape[:-1], 5, seed=3)  # d_v != d_k on purpose
    T_q, T_k = q_shape[-2], k_shape[-2]
    mask = make_mask(mask_kind, T_q, T_k, lead=q_shape[:-2])
    out, A = attention(q, k, v, mask=mask, scale=scale)
    ref = F.scaled_dot_product_attention(
        q, k, v, attn_mask=None if mask is None else mask.bool(), scale=scale
    )
    assert out.shape == (*q_shape[:-1], 5)
    assert A.shape == (*q_shape[:-1], T_k)
    torch.testing.assert_close(out, ref, atol=ATOL, rtol=0)


def test_default_scale_is_one_over_sqrt_dk():
    # scale=None must differ from scale=1.0 (else the test above proves nothing about it)
    q, k, v = rand(4, 64, seed=1), rand(4, 64, seed=2), rand(4, 3, seed=3)
    out_default, _ = attention(q, k, v)
    out_explicit, _ = attention(q, k, v, scale=1 / math.sqrt(64))
    out_unscaled, _ = attention(q, k, v, scale=1.0)
    torch.testing.assert_close(out_default, out_explicit, atol=ATOL, rtol=0)
    assert not torch.allclose(out_default, out_unscaled, atol=1e-3)


@pytest.mark.parametrize("mask_kind", [None, "causal", "random"])
def test_rows_sum_to_one_and_masked_entries_are_exactly_zero(mask_kind):
    q, k, v = rand(2, 3, 6, 8, seed=1), rand(2, 3, 9, 8, seed=2), rand(2, 3, 9, 4, seed=3)
    mask = make_mask(mask_kind, 6, 9, lead=(2, 3))
    _, A = attention(q, k, v, mask=mask)
    torch.testing.assert_close(A.sum(-1), torch.ones(2, 3, 6, dtype=DT), atol=ATOL, rtol=0)
    assert (A >= 0).all()
    if mask is not None:
        forbidden = (mask == 0).expand_as(A)
        assert forbidden.any()
        assert (A[forbidden] == 0).all()  # exactly, not approximately
        assert (A[~forbidden] > 0).all()


def make_pair(d, H, bias=True, seed=0):
    """Our module and nn.MultiheadAttention with identical weights, in float64."""
    torch.manual_seed(seed)
    ref = nn.MultiheadAttention(d, H, bias=bias, batch_first=True, dtype=DT)
    # nn.MHA initialises its biases to zero; random ones make the bias test real
    if bias:
        with torch.no_grad():
            ref.in_proj_bias.normal_()
            ref.out_proj.bias.normal_()
    ours = MultiHeadAttention(AttentionConfig(d=d, H=H, bias=bias)).to(DT)
    with torch.no_grad():
        ours.qkv.weight.copy_(ref.in_proj_weight)
        ours.proj.weight.copy_(ref.out_proj.weight)
        if bias:
            ours.qkv.bias.copy_(ref.in_proj_bias)
            ours.proj.bias.copy_(ref.out_proj.bias)
    return ours.eval(), ref.eval()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d,H", [(16, 4), (12, 3), (8, 1)])
def test_multihead_matches_nn_multiheadattention(d, H, causal, bias):
    ours, ref = make_pair(d, H, bias=bias)
    x = rand(3, 7, d, seed=4)
    mask = causal_mask(7).to(DT) if causal else None
    out, A = ours(x, mask=mask, return_attn=True)
    # nn.MHA: boolean True means "may NOT attend", the opposite of ours
    ref_mask = None if mask is None else mask == 0
    ref_out, ref_A = ref(x, x, x, attn_mask=ref_mask, need_weights=True, average_attn_weights=False)
    _, ref_A_mean = ref(x, x, x, attn_mask=ref_mask, need_weights=True)
    assert out.shape == (3, 7, d) and A.shape == (3, H, 7, 7)
    torch.testing.assert_close(out, ref_out, atol=ATOL, rtol=0)
    torch.testing.assert_close(A, ref_A, atol=ATOL, rtol=0)
    torch.testing.assert_close(A.mean(1), ref_A_mean, atol=ATOL, rtol=0)


def test_multihead_cross_attention_matches_nn_multiheadattention():
    ours, ref = make_pair(16, 4)
    x, kv = rand(2, 5, 16, seed=5), rand(2, 9, 16, seed=6)  # 5 queries read 9 keys
    out, A = ours(x, kv=kv, return_attn=True)
    ref_out, ref_A = ref(x, kv, kv, need_weights=True, average_attn_weights=False)
    assert out.shape == (2, 5, 16) and A.shape == (2, 4, 5, 9)
    torch.testing.assert_close(out, ref_out, atol=ATOL, rtol=0)
    torch.testing.assert_close(A, ref_A, atol=ATOL, rtol=0)
    # and it really used kv: self-attention on x gives something else
    assert not torch.allclose(ours(x), out, atol=1e-3)


def test_multihead_unscaled_uses_scale_one():
    """AttentionConfig(scaled=False) is the same module with scores not divided by √(d/H)."""
    cfg = AttentionConfig(d=16, H=2, scaled=False)
    torch.manual_seed(0)
    m = MultiHeadAttention(cfg).to(DT)
    x = rand(2, 5, 16, seed=7)
    q, k, v = m.qkv(x).split(16, dim=-1)  # (N, T, d) each
    heads = [
        F.scaled_dot_product_attention(
            q[..., h * 8 : (h + 1) * 8], k[..., h * 8 : (h + 1) * 8], v[..., h * 8 : (h + 1) * 8], scale=1.0
        )
        for h in range(2)
    ]
    ref = m.proj(torch.cat(heads, dim=-1))
    torch.testing.assert_close(m(x), ref, atol=ATOL, rtol=0)


def test_seed_reshape_equals_loop_over_heads_then_cat():
    """The slide's view/transpose bookkeeping is the same as running each head alone."""
    N, T, d, H = 2, 6, 12, 3
    Q, K, V = rand(N, T, d, seed=8), rand(N, T, d, seed=9), rand(N, T, d, seed=10)
    mask = causal_mask(T).to(DT)

    # the seed's lines
    Qh = Q.view(N, T, H, d // H).transpose(1, 2)  # (N, H, T, d/H)
    Kh = K.view(N, T, H, d // H).transpose(1, 2)  # (N, H, T, d/H)
    Vh = V.view(N, T, H, d // H).transpose(1, 2)  # (N, H, T, d/H)
    out, _ = attention(Qh, Kh, Vh, mask=mask)  # (N, H, T, d/H)
    out = out.transpose(1, 2).reshape(N, T, d)  # concatenate back

    # the long way: slice columns per head, attend, concatenate
    cols = [slice(h * d // H, (h + 1) * d // H) for h in range(H)]
    loop = torch.cat([attention(Q[..., c], K[..., c], V[..., c], mask=mask)[0] for c in cols], dim=-1)
    torch.testing.assert_close(out, loop, atol=ATOL, rtol=0)
    # the transpose matters: skipping it mixes positions into heads and gives a different answer
    wrong = Q.view(N, H, T, d // H)  # (N, H, T, d/H) in shape only
    wrong_out, _ = attention(wrong, K.view(N, H, T, d // H), V.view(N, H, T, d // H), mask=mask)
    assert not torch.allclose(wrong_out.transpose(1, 2).reshape(N, T, d), loop, atol=1e-3)


def test_split_merge_round_trip():
    x = rand(2, 5, 12, seed=11)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    torch.testing.assert_close(heads[:, 1], x[..., 4:8], atol=0, rtol=0)  # head h = columns of group h
    torch.testing.assert_close(merge_heads(heads), x, atol=0, rtol=0)


def test_indivisible_width_raises():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(AttentionConfig(d=10, H=3))


def test_permutation_equivariance_without_positions():
    ours, _ = make_pair(16, 4)
    x = rand(2, 7, 16, seed=12)
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(0))
    assert not torch.equal(perm, torch.arange(7))
    torch.testing.assert_close(ours(x[:, perm]), ours(x)[:, perm], atol=ATOL, rtol=0)


def test_sinusoidal_positions_break_equivariance():
    ours, _ = make_pair(16, 4)
    x = rand(2, 7, 16, seed=12)
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(0))
    P = sinusoidal_positions(7, 16).to(DT)  # positions stay put while the tokens move
    shuffled = ours(x[:, perm] + P)
    assert not torch.allclose(shuffled, ours(x + P)[:, perm], atol=1e-3)


@pytest.mark.parametrize("d", [8, 7])
def test_sinusoidal_positions_closed_form(d):
    T = 6
    P = sinusoidal_positions(T, d)
    assert P.shape == (T, d)
    for t in range(T):
        for j in range(d):
            angle = t / 10000 ** (2 * (j // 2) / d)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert abs(P[t, j].item() - expected) < 1e-6
    # every position gets its own code
    assert torch.cdist(P, P).add(torch.eye(T)).min() > 1e-3
