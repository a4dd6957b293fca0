"""Scaled dot-product attention and multi-head attention, written to be read.

Shape letters: N batch, T sequence length, H heads, d model width, d_k key width.
The functions accept any leading batch axes, so the slide's unbatched (T, d) case
and the batched (N, H, T, d/H) case run through the same four lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


def causal_mask(T: int, T_k: int | None = None) -> torch.Tensor:
    """(T, T_k) lower-triangular ones: position i may look at keys 0..i only."""
    return torch.tril(torch.ones(T, T if T_k is None else T_k))


def attention(q, k, v, mask=None, scale: float | None = None):
    """Softmax(q kᵀ · scale) v, with scale = 1/√d_k unless given.

    q: (..., T_q, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v);
    mask broadcasts to (..., T_q, T_k) and is 0 where attention is forbidden.
    Returns (out, A) with out: (..., T_q, d_v) and A: (..., T_q, T_k).
    """
    d_k = q.size(-1)
    scale = 1 / math.sqrt(d_k) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (..., T_q, T_k)
    if mask is not None:
        # -inf before the softmax, so forbidden keys get exactly zero weight
        # and each row still sums to 1.
        scores = scores.masked_fill(mask == 0, float("-inf"))
    A = torch.softmax(scores, dim=-1)  # normalise across keys: rows sum to 1
    return A @ v, A


def split_heads(x: torch.Tensor, H: int) -> torch.Tensor:
    """(N, T, d) -> (N, H, T, d/H): heads next to the batch axis, so matmuls batch over them."""
    N, T, d = x.shape
    return x.view(N, T, H, d // H).transpose(1, 2)  # (N, H, T, d/H)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(N, H, T, d/H) -> (N, T, d): the concatenation of the heads' outputs."""
    N, H, T, d_h = x.shape
    return x.transpose(1, 2).reshape(N, T, H * d_h)  # (N, T, d)


@dataclass(frozen=True)
class AttentionConfig:
    d: int = 64  # model width
    H: int = 4  # heads; d must divide evenly
    bias: bool = True
    scaled: bool = True  # False removes the 1/sqrt(d_k): Exercise 1


class MultiHeadAttention(nn.Module):
    """H heads of width d/H, one fused Q/K/V projection, one output projection.

    The fused projection stores [W_q; W_k; W_v] in the same layout as
    ``torch.nn.MultiheadAttention.in_proj_weight``, so the two can share weights.
    """

    def __init__(self, cfg: AttentionConfig):
        super().__init__()
        if cfg.d % cfg.H:
            raise ValueError(f"d={cfg.d} is not divisible by H={cfg.H}")
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.d, 3 * cfg.d, bias=cfg.bias)
        self.proj = nn.Linear(cfg.d, cfg.d, bias=cfg.bias)

    def forward(self, x, mask=None, kv=None, return_attn: bool = False, head_mask=None):
        """x: (N, T, d). kv: (N, T_k, d) for cross-attention, else x itself.

        ``head_mask`` (H,): each head's output is multiplied by its entry before the
        heads are concatenated, so a 0 removes that head (an ablation).
        Returns out (N, T, d), and the attention weights (N, H, T, T_k) when asked.
        """
        H, d = self.cfg.H, self.cfg.d
        W_q, W_k, W_v = self.qkv.weight.split(d, dim=0)
        b_q, b_k, b_v = (
            self.qkv.bias.split(d) if self.qkv.bias is not None else (None, None, None)
        )
        source = x if kv is None else kv
        q = split_heads(nn.functional.linear(x, W_q, b_q), H)  # (N, H, T, d/H)
        k = split_heads(nn.functional.linear(source, W_k, b_k), H)  # (N, H, T_k, d/H)
        v = split_heads(nn.functional.linear(source, W_v, b_v), H)  # (N, H, T_k, d/H)
        scale = None if self.cfg.scaled else 1.0
        out, A = attention(q, k, v, mask=mask, scale=scale)  # (N, H, T, d/H)
        if head_mask is not None:
            out = out * head_mask.view(1, H, 1, 1)  # (N, H, T, d/H)
        out = self.proj(merge_heads(out))  # (N, T, d)
        return (out, A) if return_attn else out


def sinusoidal_positions(T: int, d: int) -> torch.Tensor:
    """(T, d) position codes of Vaswani et al. (2017), added to the token embeddings.

    Column 2i is sin(t / 10000^(2i/d)) and column 2i+1 is the matching cosine. Each
    pair of columns is a clock with its own period, from 2π up to 10000·2π, so every
    position gets a distinct code. Attention by itself ignores order (shuffle the
    rows of X and the output rows shuffle the same way); these codes let it tell
    positions apart.
    """
    t = torch.arange(T).unsqueeze(1)  # (T, 1)
    freq = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))  # (ceil(d/2),)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(t * freq)  # (T, ceil(d/2))
    pe[:, 1::2] = torch.cos(t * freq[: d // 2])  # (T, floor(d/2)): odd d has one fewer
    return pe
