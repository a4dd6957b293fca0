"""A tiny GPT in the manner of nanoGPT: token + position embeddings, pre-LayerNorm blocks.

Each block's attention is ``rec11.attention.MultiHeadAttention``, the same module the
attention page builds and tests, run under a causal mask. Besides logits the model can
show its workings, for the page on reading attention maps: every layer's and head's
attention weights, each head's value vectors, and the prediction with a layer's
attention removed.

Shape letters: N batch, T sequence length, L layers, H heads, d model width, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from rec11 import attention


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int
    block_size: int = 16  # longest sequence; positions beyond it have no embedding
    n_layer: int = 2
    n_head: int = 4
    d: int = 64
    dropout: float = 0.0
    bias: bool = True


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d, 4 * cfg.d, bias=cfg.bias)
        self.proj = nn.Linear(4 * cfg.d, cfg.d, bias=cfg.bias)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.proj(F.gelu(self.fc(x))))


class Block(nn.Module):
    """x + attention(LN(x)), then x + MLP(LN(x)): each sublayer adds to the residual stream."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.d, bias=cfg.bias)
        attn_cfg = attention.AttentionConfig(d=cfg.d, H=cfg.n_head, bias=cfg.bias)
        self.attn = attention.MultiHeadAttention(attn_cfg)
        self.ln_2 = nn.LayerNorm(cfg.d, bias=cfg.bias)
        self.mlp = MLP(cfg)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, mask, ablate: bool = False, head_mask=None):
        """x: (N, T, d) -> (N, T, d), and the attention weights (N, H, T, T).

        ``ablate`` drops the attention output, so only the residual stream
        carries each position's information past this layer's attention.
        ``head_mask`` (H,) drops single heads instead (0 removes a head; see
        ``MultiHeadAttention``).
        """
        # a: (N, T, d); A: (N, H, T, T)
        a, A = self.attn(self.ln_1(x), mask=mask, return_attn=True,
                         head_mask=head_mask)
        if not ablate:
            x = x + self.drop(a)
        x = x + self.mlp(self.ln_2(x))
        return x, A

    def values(self, x):
        """Each head's value vectors, before and after the output projection.

        v: (N, H, T, d/H). v_out: (N, H, T, d), what position j adds to the residual
        stream through head h at attention weight 1, so weight × ‖v_out‖ is the size of
        what each query actually receives from each key. (The output bias is added once
        whatever the weights, so it belongs to no key and is left out.)
        """
        d, H = self.attn.cfg.d, self.attn.cfg.H
        W_v = self.attn.qkv.weight[2 * d :]  # (d, d): the V third of the fused [W_q; W_k; W_v]
        b_v = self.attn.qkv.bias[2 * d :] if self.attn.qkv.bias is not None else None
        v = attention.split_heads(F.linear(self.ln_1(x), W_v, b_v), H)  # (N, H, T, d/H)
        # The output projection acts on the concatenated heads, so head h meets only
        # its own d/H columns of W_o.
        W_o = self.attn.proj.weight.view(d, H, d // H).permute(1, 2, 0)  # (H, d/H, d)
        v_out = v @ W_o.unsqueeze(0)  # (N, H, T, d)
        return v, v_out


class Trace(NamedTuple):
    logits: torch.Tensor  # (N, T, V)
    attn: torch.Tensor  # (N, L, H, T, T)
    v: torch.Tensor  # (N, L, H, T, d/H)
    v_out: torch.Tensor  # (N, L, H, T, d)


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d)
        self.wpe = nn.Embedding(cfg.block_size, cfg.d)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d, bias=cfg.bias)
        self.head = nn.Linear(cfg.d, cfg.vocab_size, bias=False)
        # tied: one vector per token both reads it in and scores it as the next token
        self.head.weight = self.wte.weight
        self.register_buffer("mask", attention.causal_mask(cfg.block_size), persistent=False)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        # nanoGPT's small normal init keeps the first logits near uniform
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def embed(self, idx, extra=None):
        """idx: (N, T) -> the residual stream's start (N, T, d).

        ``extra`` (N, d) or (N, T, d) is added at every position: a sentence VAE passes
        its latent z here, so the decoder sees z at every step.
        """
        T = idx.size(1)
        if T > self.cfg.block_size:
            raise ValueError(f"sequence of {T} tokens, block_size is {self.cfg.block_size}")
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))  # (N, T, d)
        if extra is not None:
            x = x + (extra.unsqueeze(1) if extra.dim() == 2 else extra)  # (N, T, d)
        return self.drop(x)

    def forward(self, idx, extra=None, ablate_layers=(), return_attn: bool = False, ablate_heads=()):
        """idx: (N, T) token ids -> logits (N, T, V) for the token after each position.

        ``ablate_layers``: layers whose attention output is removed; ``ablate_heads``:
        (layer, head) pairs whose head alone is removed. ``return_attn`` also returns
        every layer's weights, (N, L, H, T, T).
        """
        T = idx.size(1)
        x = self.embed(idx, extra)  # (N, T, d)
        maps = []
        for layer, block in enumerate(self.blocks):
            removed = [h for l, h in ablate_heads if l == layer]  # noqa: E741 - (layer, head); a rename would retrain
            head_mask = None
            if removed:
                head_mask = torch.ones(self.cfg.n_head)
                head_mask[removed] = 0.0
            x, A = block(x, self.mask[:T, :T], ablate=layer in ablate_layers, head_mask=head_mask)
            maps.append(A)
        logits = self.head(self.ln_f(x))  # (N, T, V)
        return (logits, torch.stack(maps, dim=1)) if return_attn else logits

    @torch.no_grad()
    def inspect(self, idx, extra=None) -> Trace:
        """Logits, every attention map and every head's value vectors, in one pass."""
        T = idx.size(1)
        x = self.embed(idx, extra)  # (N, T, d)
        maps, vs, v_outs = [], [], []
        for block in self.blocks:
            v, v_out = block.values(x)
            x, A = block(x, self.mask[:T, :T])
            maps.append(A)
            vs.append(v)
            v_outs.append(v_out)
        logits = self.head(self.ln_f(x))  # (N, T, V)
        return Trace(logits, torch.stack(maps, 1), torch.stack(vs, 1), torch.stack(v_outs, 1))
