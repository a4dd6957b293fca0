"""Strangers' answers to the exercises page, and what ``rec11.check`` says about them.

Each function below is an answer a student could hand in for one of the page's nine
checks: WRONG ones carry one plausible bug each, RIGHT ones are correct but written
differently from the page's answer. The file proves both claims by itself, without the
checker: a *judge* per check compares an answer with a reference (the package's functions
in ``rec11.attention``, ``rec11.vae``, ``rec11.diffusion``, or a few lines written here
from the page's formulas) on inputs chosen here, or tests a property (gradients reaching
mu and logvar, autograd switched back on after the call, rows drawn independently, the
sampled tokens following the stand-in model's distribution).

Then the checker itself is run on every answer: a wrong answer must get a verdict that
is not ok and says only "Not yet: ..."; a right answer must get an ok verdict.
"""

# ruff: noqa: BLE001  (a judge must survive any error a student's function raises)

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rec11 import attention as ref_attention
from rec11 import check, diffusion, vae

WRONG: list = []  # pytest.param(check name, function, the problem its judge must find)
RIGHT: list = []  # pytest.param(check name, function)


def wrong(name: str, problem: str):
    def register(fn):
        WRONG.append(pytest.param(name, fn, problem, id=fn.__name__))
        return fn
    return register


def right(name: str):
    def register(fn):
        RIGHT.append(pytest.param(name, fn, id=fn.__name__))
        return fn
    return register


@pytest.fixture(autouse=True)
def autograd_back_on():
    """One answer switches autograd off for good: switch it back for the next test."""
    yield
    torch.set_grad_enabled(True)


# ============================================================== attention
# fn(Q, K, V, mask) -> (N, T, d_v); mask is 1 where a query may look at a key.


@wrong("attention", "values")
def attention_exponent_precedence(Q, K, V, mask):
    d_k = Q.size(-1)
    scale = d_k ** 1/2                     # (d_k ** 1) / 2: right only at d_k = 4
    scores = Q @ K.transpose(-2, -1) / scale
    scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


@wrong("attention", "values")
def attention_scale_by_sqrt_dv(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(V.size(-1))
    scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


@wrong("attention", "values")
def attention_scale_by_T(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1)
    scores = scores / math.sqrt(scores.size(-1))     # the keys' count, not d_k
    scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


@wrong("attention", "values")
def attention_k_times_q_transpose(Q, K, V, mask):
    scores = K @ Q.transpose(-2, -1) / math.sqrt(Q.size(-1))
    scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


@wrong("attention", "values")
def attention_a_transpose_times_v(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    A = torch.softmax(scores.masked_fill(mask == 0, float("-inf")), dim=-1)
    return A.transpose(-2, -1) @ V


@wrong("attention", "values")
def attention_fill_minus_ten(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    scores = scores.masked_fill(mask == 0, -10)
    return torch.softmax(scores, dim=-1) @ V


@wrong("attention", "values")
def attention_mask_multiplies_scores(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    scores = scores * mask                          # a 0 score still gets weight
    return torch.softmax(scores, dim=-1) @ V


@wrong("attention", "values")
def attention_mask_bool_inverted(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    scores = scores.masked_fill(mask.bool(), float("-inf"))   # hides the allowed keys
    return torch.softmax(scores, dim=-1) @ V


@wrong("attention", "values")
def attention_softmax_over_queries(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-2) @ V


@wrong("attention", "values")
def attention_builds_own_causal_mask(Q, K, V, mask):
    T = Q.size(-2)
    causal = torch.tril(torch.ones(T, T))
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    scores = scores.masked_fill(causal == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


@right("attention")
def attention_einsum(Q, K, V, mask):
    scores = torch.einsum("ntd,nsd->nts", Q, K) / Q.shape[-1] ** 0.5
    scores = scores.masked_fill(mask == 0, float("-inf"))
    return torch.einsum("nts,nsv->ntv", scores.softmax(-1), V)


@right("attention")
def attention_torch_where_bool(Q, K, V, mask):
    scores = Q @ K.mT * Q.size(-1) ** -0.5
    scores = torch.where(mask.bool(), scores, torch.tensor(float("-inf")))
    return F.softmax(scores, dim=-1) @ V


@right("attention")
def attention_zero_then_renormalise(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    w = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    w = w * (mask != 0)
    return (w / w.sum(-1, keepdim=True)) @ V


@right("attention")
def attention_sdpa(Q, K, V, mask):
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask.bool())


@right("attention")
def attention_log_mask_float64(Q, K, V, mask):
    q, k, v = Q.double(), K.double(), V.double()
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[2]) + torch.log(mask.double())
    return (torch.softmax(scores, dim=2) @ v).to(Q.dtype)   # log 0 = -inf


@right("attention")
def attention_loop_over_batch(Q, K, V, mask):
    outs = []
    for q, k, v in zip(Q, K, V):
        scores = (q / math.sqrt(q.size(-1))) @ k.T
        scores = scores.masked_fill(~mask.bool(), -math.inf)
        outs.append(scores.softmax(dim=-1) @ v)
    return torch.stack(outs)


@right("attention")
def attention_finfo_min_fill(Q, K, V, mask):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(K.size(-1))
    scores = scores.masked_fill(mask == 0, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ V


def attention_reference(Q, K, V, mask):
    return ref_attention.attention(Q, K, V, mask)[0]


def attention_masks(T: int, g: torch.Generator):
    """Causal and a random pattern (every row keeps a key), each as float, bool and int."""
    causal = ref_attention.causal_mask(T)
    pattern = (torch.rand(T, T, generator=g) < 0.5).float()
    pattern[torch.arange(T), torch.randint(T, (T,), generator=g)] = 1.0
    return [m.to(dt) for m in (causal, pattern) for dt in (torch.float32, torch.bool, torch.int64)]


def judge_attention(fn) -> list[str]:
    problems = set()
    g = torch.Generator().manual_seed(0)
    for N, T, d_k, d_v in [(2, 5, 8, 3), (3, 4, 6, 5)]:
        Q, K = 2 * torch.randn(2, N, T, d_k, generator=g)
        V = torch.randn(N, T, d_v, generator=g)
        for mask in attention_masks(T, g):
            want = attention_reference(Q, K, V, mask)
            try:
                got = fn(Q.clone(), K.clone(), V.clone(), mask.clone())
            except Exception:
                problems.add("raises")
                continue
            if got.shape != want.shape or not torch.allclose(got, want, atol=1e-5, rtol=1e-4):
                problems.add("values")
    return sorted(problems)


# ============================================================== split_heads / merge_heads
# (N, T, d) <-> (N, H, T, d/H); head h holds features h*d/H .. (h+1)*d/H - 1.


@wrong("split_heads", "values")
def split_view_without_transpose(x, H):
    N, T, d = x.shape
    return x.view(N, H, T, d // H)


@wrong("split_heads", "values")
def split_head_size_typed_as_4(x, H):
    N, T, d = x.shape  # noqa: RUF059
    return x.view(N, T, -1, 4).transpose(1, 2)        # d/H was 4 on the page


@wrong("split_heads", "values")
def split_strided_heads(x, H):
    N, T, d = x.shape
    return x.view(N, T, d // H, H).permute(0, 3, 1, 2)  # every H-th feature


@wrong("split_heads", "values")
def split_heads_before_batch(x, H):
    N, T, d = x.shape
    return x.view(N, T, H, d // H).permute(2, 0, 1, 3)  # (H, N, T, d/H)


@wrong("split_heads", "values")
def split_stack_chunks_on_axis_0(x, H):
    return torch.stack(x.chunk(H, dim=-1), dim=0)


@right("split_heads")
def split_chunk_and_stack(x, H):
    return torch.stack(x.chunk(H, dim=-1), dim=1)


@right("split_heads")
def split_unflatten(x, H):
    return x.unflatten(-1, (H, -1)).transpose(1, 2)


@right("split_heads")
def split_loop_over_heads(x, H):
    d_h = x.size(-1) // H
    return torch.stack([x[:, :, h * d_h:(h + 1) * d_h] for h in range(H)], dim=1)


@right("split_heads")
def split_transpose_reshape_transpose(x, H):
    N, T, d = x.shape
    return x.transpose(1, 2).reshape(N, H, d // H, T).transpose(2, 3)


@right("split_heads")
def split_reshape_permute(x, H):
    N, T, _ = x.shape
    return x.reshape(N, T, H, -1).permute(0, 2, 1, 3).contiguous()


@wrong("merge_heads", "values")
def merge_reshape_without_transpose(out):
    N, H, T, d_h = out.shape
    return out.reshape(N, T, H * d_h)


@wrong("merge_heads", "values")
def merge_unpacks_h_first(out):
    H, N, T, d_h = out.shape
    return out.transpose(1, 2).reshape(N, T, H * d_h)


@wrong("merge_heads", "values")
def merge_interleaves_heads(out):
    N, H, T, d_h = out.shape
    return out.permute(0, 2, 3, 1).reshape(N, T, H * d_h)


@wrong("merge_heads", "raises")
def merge_view_after_transpose(out):
    N, H, T, d_h = out.shape
    return out.transpose(1, 2).view(N, T, H * d_h)   # not contiguous


@wrong("merge_heads", "values")
def merge_swaps_batch_and_tokens(out):
    N, H, T, d_h = out.shape  # noqa: RUF059
    return out.transpose(0, 2).reshape(N, T, -1)


@right("merge_heads")
def merge_cat_heads(out):
    return torch.cat(out.unbind(dim=1), dim=-1)


@right("merge_heads")
def merge_permute_reshape(out):
    N, _, T, _ = out.shape
    return out.permute(0, 2, 1, 3).reshape(N, T, -1)


@right("merge_heads")
def merge_flatten(out):
    return out.transpose(1, 2).flatten(start_dim=2)


@right("merge_heads")
def merge_contiguous_view(out):
    N, H, T, d_h = out.shape
    return out.transpose(1, 2).contiguous().view(N, T, H * d_h)


@right("merge_heads")
def merge_loop_cat(out):
    return torch.cat([out[:, h] for h in range(out.size(1))], dim=2)


SPLIT_SHAPES = [(2, 5, 12, 3), (3, 4, 12, 4), (2, 3, 6, 3), (4, 2, 8, 1), (3, 3, 6, 2)]


def judge_split_heads(fn) -> list[str]:
    problems = set()
    g = torch.Generator().manual_seed(1)
    for N, T, d, H in SPLIT_SHAPES:
        x = torch.randn(N, T, d, generator=g)
        want = ref_attention.split_heads(x, H)
        try:
            got = fn(x.clone(), H)
        except Exception:
            problems.add("raises")
            continue
        if got.shape != want.shape or not torch.equal(got, want):
            problems.add("values")
    return sorted(problems)


def judge_merge_heads(fn) -> list[str]:
    problems = set()
    g = torch.Generator().manual_seed(2)
    for N, T, d, H in SPLIT_SHAPES:
        out = torch.randn(N, H, T, d // H, generator=g)
        want = ref_attention.merge_heads(out)
        try:
            got = fn(out.clone())
        except Exception:
            problems.add("raises")
            continue
        if got.shape != want.shape or not torch.equal(got, want):
            problems.add("values")
    return sorted(problems)


# ============================================================== padding_mask
# fn(lengths, T): 1 on real keys, 0 on padding; broadcasts against (N, H, T, T).


def keys_of(lengths, T):
    return torch.arange(T)[None, :] < lengths[:, None]     # (N, T)


@wrong("padding_mask", "shape")
def padding_no_axes(lengths, T):
    return keys_of(lengths, T)                             # (N, T)


@wrong("padding_mask", "pattern")
def padding_masks_queries(lengths, T):
    return keys_of(lengths, T)[:, None, :, None]           # (N, 1, T, 1)


@wrong("padding_mask", "pattern")
def padding_causal_part_upper(lengths, T):
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool))
    return keys_of(lengths, T)[:, None, None, :] & causal


@wrong("padding_mask", "pattern")
def padding_causal_part_strict(lengths, T):
    causal = torch.tril(torch.ones(T, T), diagonal=-1).bool()   # no query sees itself
    return keys_of(lengths, T)[:, None, None, :] & causal


@wrong("padding_mask", "pattern")
def padding_causal_joined_with_or(lengths, T):
    causal = torch.tril(torch.ones(T, T)).bool()
    return keys_of(lengths, T)[:, None, None, :] | causal


@wrong("padding_mask", "pattern")
def padding_less_or_equal(lengths, T):
    return (torch.arange(T)[None, :] <= lengths[:, None])[:, None, None, :]


@wrong("padding_mask", "pattern")
def padding_ones_on_padding(lengths, T):
    return (torch.arange(T)[None, :] >= lengths[:, None])[:, None, None, :]


@wrong("padding_mask", "shape")
def padding_axes_in_front(lengths, T):
    return keys_of(lengths, T).unsqueeze(0).unsqueeze(0)   # (1, 1, N, T)


@right("padding_mask")
def padding_unsqueeze_twice(lengths, T):
    return (torch.arange(T) < lengths.unsqueeze(1)).unsqueeze(1).unsqueeze(2)


@right("padding_mask")
def padding_float_mask(lengths, T):
    return (torch.arange(T)[None, :] < lengths[:, None]).float()[:, None, None, :]


@right("padding_mask")
def padding_int_loop(lengths, T):
    mask = torch.zeros(len(lengths), 1, 1, T, dtype=torch.long)
    for n, length in enumerate(lengths.tolist()):
        mask[n, ..., :length] = 1
    return mask


@right("padding_mask")
def padding_with_causal_and(lengths, T):
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    return keys_of(lengths, T)[:, None, None, :] & causal      # (N, 1, T, T)


@right("padding_mask")
def padding_with_causal_float_product(lengths, T):
    return keys_of(lengths, T).float()[:, None, None, :] * torch.tril(torch.ones(T, T))


@right("padding_mask")
def padding_expand_view(lengths, T):
    N = lengths.numel()
    return (torch.arange(T).expand(N, T) < lengths.view(-1, 1)).view(N, 1, 1, T)


PADDING_CASES = [([5, 3], 5), ([2, 4, 1], 4), ([3, 1, 4, 2], 4), ([6, 2], 6)]


def judge_padding_mask(fn) -> list[str]:
    problems = set()
    H = 2
    for lengths, T in PADDING_CASES:
        lengths = torch.tensor(lengths)
        N = len(lengths)
        try:
            m = torch.as_tensor(fn(lengths.clone(), T))
        except Exception:
            problems.add("raises")
            continue
        try:
            fits = torch.broadcast_shapes(m.shape, (N, H, T, T)) == (N, H, T, T)
        except RuntimeError:
            fits = False
        if not fits:
            problems.add("shape")
            continue
        allowed = (~(m == 0)).expand(N, H, T, T)
        padding = keys_of(lengths, T)[:, None, None, :].expand(N, H, T, T)
        both = padding & torch.tril(torch.ones(T, T, dtype=torch.bool))
        if not (torch.equal(allowed, padding) or torch.equal(allowed, both)):
            problems.add("pattern")
    return sorted(problems)


# ============================================================== generate
# fn(model, idx, steps, temperature=1.0, top_k=None) -> (N, T + steps), sampled.


@wrong("generate", "distribution")
@torch.no_grad()
def generate_topk_threshold_of_row_0(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[0, -1]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_topk_threshold_of_batch(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            v, _ = torch.topk(logits, top_k)
            logits[logits < v.min()] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "raises")
@torch.no_grad()
def generate_topk_threshold_without_keepdim(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, -1]] = float("-inf")    # (N,) lines up with the vocab
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_topk_not_mapped_back(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            logits, _ = torch.topk(logits, top_k)         # positions in the top k, not ids
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_argmax(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.softmax(logits, dim=-1).argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_temperature_multiplies(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] * temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_temperature_after_softmax(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :]
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        probs = torch.softmax(logits, dim=-1) / temperature   # multinomial renormalises
        nxt = torch.multinomial(probs, 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_first_row_for_all(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[0, -1, :] / temperature   # (V,)
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[-1]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)               # (1,)
        idx = torch.cat([idx, nxt.repeat(len(idx), 1)], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_softmax_over_batch(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=0), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "raises")
@torch.no_grad()
def generate_no_crop(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx)[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_crop_keeps_first_tokens(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, :model.cfg.block_size])[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "distribution")
@torch.no_grad()
def generate_crop_one_short(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size + 1:])[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "grad_left_off")
def generate_set_grad_enabled_statement(model, idx, steps, temperature=1.0, top_k=None):
    torch.set_grad_enabled(False)                     # stays off after the return
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "train_mode")
@torch.no_grad()
def generate_without_eval(model, idx, steps, temperature=1.0, top_k=None):
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@wrong("generate", "grad")
def generate_without_no_grad(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@right("generate")
@torch.no_grad()
def generate_categorical(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k is not None:
            kth = logits.topk(top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        nxt = torch.distributions.Categorical(logits=logits).sample()   # (N,)
        idx = torch.cat([idx, nxt[:, None]], dim=1)
    return idx


@right("generate")
def generate_topk_gather(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    with torch.no_grad():
        for _ in range(steps):
            logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
            if top_k:
                vals, ids = torch.topk(logits, top_k, dim=-1)
                pick = torch.multinomial(F.softmax(vals, dim=-1), 1)   # (N, 1) in 0..k-1
                nxt = ids.gather(-1, pick)                              # back to token ids
            else:
                nxt = torch.multinomial(F.softmax(logits, dim=-1), 1)
            idx = torch.cat((idx, nxt), dim=1)
    return idx


@right("generate")
@torch.no_grad()
def generate_gumbel_max(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            kth = torch.topk(logits, top_k).values[:, [-1]]
            logits = torch.where(logits < kth, float("-inf"), logits)
        gumbel = -torch.empty_like(logits).exponential_().log()
        nxt = (logits + gumbel).argmax(dim=-1, keepdim=True)   # an exact sample
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@right("generate")
def generate_inference_mode(model, idx, steps, temperature=1.0, top_k=None):
    model.train(False)
    with torch.inference_mode():
        for _ in range(steps):
            context = idx if idx.size(1) <= model.cfg.block_size else idx[:, -model.cfg.block_size:]
            logits = model(context)[:, -1, :] / temperature
            if top_k:
                logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = -math.inf
            nxt = torch.multinomial(logits.softmax(-1), num_samples=1)
            idx = torch.cat([idx, nxt], dim=-1)
    return idx


@right("generate")
def generate_preallocated_set_grad_context(model, idx, steps, temperature=1.0, top_k=None):
    N, T = idx.shape
    out = torch.empty(N, T + steps, dtype=idx.dtype)
    out[:, :T] = idx
    model.eval()
    with torch.set_grad_enabled(False):
        for t in range(T, T + steps):
            logits = model(out[:, max(0, t - model.cfg.block_size):t])[:, -1, :]
            logits = logits.double() / temperature
            if top_k:
                logits[logits < torch.topk(logits, top_k).values[:, -1:]] = float("-inf")
            out[:, t] = torch.multinomial(torch.softmax(logits, dim=-1), 1)[:, 0]
    return out


@right("generate")
@torch.no_grad()
def generate_device_from_parameters(model, idx, steps, temperature=1.0, top_k=None):
    device = next(model.parameters()).device
    idx = idx.to(device)
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
        if top_k:
            logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


class StandInLM(nn.Module):
    """A language model whose next-token probabilities are known exactly.

    The logits at position t are A[x_t] + B[x_0]: the last token read and the first
    token of the window the model is shown. Like a GPT, it has no positions beyond
    ``cfg.block_size`` (longer inputs raise), its dropout works in training mode, and it
    starts in training mode. Each call records whether it ran in training mode and with
    autograd on.
    """

    def __init__(self, V: int = 6, block_size: int = 4):
        super().__init__()
        self.cfg = SimpleNamespace(block_size=block_size, vocab_size=V)
        g = torch.Generator().manual_seed(7)
        self.A = nn.Parameter(1.5 * torch.randn(V, V, generator=g))
        self.B = nn.Parameter(1.5 * torch.randn(V, V, generator=g))
        self.calls: list[tuple[bool, bool]] = []

    def forward(self, idx):
        if idx.size(1) > self.cfg.block_size:
            raise IndexError(f"{idx.size(1)} tokens, and positions only up to {self.cfg.block_size}")
        self.calls.append((self.training, torch.is_grad_enabled()))
        logits = self.A[idx] + self.B[idx[:, :1]]            # (N, T, V)
        return F.dropout(logits, p=0.3, training=self.training)

    @torch.no_grad()
    def next_probs(self, first, last, temperature, top_k):
        """(n, V) float64: the next token's distribution for windows (first, ..., last)."""
        logits = (self.A[last] + self.B[first]).double() / temperature
        if top_k:
            kth = logits.topk(top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        return torch.softmax(logits, dim=-1)


GENERATE_SETTINGS = [(1.0, None), (0.5, 2), (2.0, 3), (1.0, 5)]


def chi_square_per_dof(model, out, T0, steps, temperature, top_k) -> float:
    """Pearson's chi-square per degree of freedom of the sampled tokens, given their windows.

    Cells: (first token of the window, last token, next token). The expected count of a
    cell is the sum of the model's probabilities for it over every draw whose window
    fell in it; cells expected below 5 are pooled within their window. A sampler that
    draws from the model's distribution gives about 1; a token the model gives
    probability 0 gives infinity.
    """
    V, bs = model.cfg.vocab_size, model.cfg.block_size
    observed = torch.zeros(V * V, V, dtype=torch.float64)
    expected = torch.zeros(V * V, V, dtype=torch.float64)
    for p in range(T0, T0 + steps):
        window = out[:, max(0, p - bs):p]
        group = window[:, 0] * V + window[:, -1]
        expected.index_add_(0, group, model.next_probs(window[:, 0], window[:, -1], temperature, top_k))
        observed.index_add_(0, group, F.one_hot(out[:, p], V).double())
    if (observed[expected < 1e-12] > 0).any():
        return math.inf
    stat, dof = 0.0, 0
    for o, e in zip(observed, expected):
        big = e >= 5
        o_cells = torch.cat([o[big], o[~big].sum()[None]])
        e_cells = torch.cat([e[big], e[~big].sum()[None]])
        keep = e_cells >= 5
        if keep.sum() < 2:
            continue
        stat += (((o_cells - e_cells) ** 2 / e_cells)[keep]).sum().item()
        dof += int(keep.sum()) - 1
    return stat / dof


def judge_generate(fn) -> list[str]:
    problems = set()
    N, T0, steps = 3000, 2, 5                        # contexts grow to 6 > block_size 4
    for temperature, top_k in GENERATE_SETTINGS:
        model = StandInLM()
        model.train()
        g = torch.Generator().manual_seed(3)
        idx = torch.randint(model.cfg.vocab_size, (N, T0), generator=g)
        torch.manual_seed(11)
        torch.set_grad_enabled(True)
        try:
            out = fn(model, idx.clone(), steps, temperature=temperature, top_k=top_k)
        except Exception:
            problems.add("raises")
            continue
        finally:
            if not torch.is_grad_enabled():
                problems.add("grad_left_off")
            torch.set_grad_enabled(True)
        if any(training for training, _ in model.calls):
            problems.add("train_mode")
        if any(grad for _, grad in model.calls):
            problems.add("grad")
        if out.shape != (N, T0 + steps) or not torch.equal(out[:, :T0], idx):
            problems.add("shape")
            continue
        if out.min() < 0 or out.max() >= model.cfg.vocab_size:
            problems.add("distribution")
            continue
        if chi_square_per_dof(model, out, T0, steps, temperature, top_k) > 2.0:
            problems.add("distribution")
    return sorted(problems)


# ============================================================== surprisal
# fn(logits (1, T, V), idx (1, T)) -> (T-1,) bits.


@wrong("surprisal", "values")
def surprisal_nats(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0]


@wrong("surprisal", "values")
def surprisal_log10(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(10)


@wrong("surprisal", "values")
def surprisal_same_position(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, 1:].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


@wrong("surprisal", "values")
def surprisal_tokens_before(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, :-1].gather(1, idx[0, :-1, None])[:, 0] / math.log(2)


@wrong("surprisal", "values")
def surprisal_raw_logits(logits, idx):
    return -logits[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


@wrong("surprisal", "values")
def surprisal_softmax_over_positions(logits, idx):
    logp = torch.log_softmax(logits, dim=1)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


@wrong("surprisal", "values")
def surprisal_missing_minus(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


@wrong("surprisal", "shape")
def surprisal_cross_entropy_default_mean(logits, idx):
    return F.cross_entropy(logits[0, :-1], idx[0, 1:]) / math.log(2)


@right("surprisal")
def surprisal_cross_entropy_none(logits, idx):
    return F.cross_entropy(logits[0, :-1], idx[0, 1:], reduction="none") / math.log(2)


@right("surprisal")
def surprisal_categorical(logits, idx):
    dist = torch.distributions.Categorical(logits=logits[0, :-1])
    return -dist.log_prob(idx[0, 1:]) / math.log(2)


@right("surprisal")
def surprisal_loop_log2(logits, idx):
    probs = torch.softmax(logits[0], dim=-1)
    return torch.stack([-torch.log2(probs[t, idx[0, t + 1]]) for t in range(idx.size(1) - 1)])


@right("surprisal")
def surprisal_logsumexp_float64(logits, idx):
    lg = logits[0, :-1].double()
    picked = lg[torch.arange(lg.size(0)), idx[0, 1:]]
    return ((torch.logsumexp(lg, dim=-1) - picked) / math.log(2)).float()


@right("surprisal")
def surprisal_nll_loss_log2e(logits, idx):
    logp = F.log_softmax(logits, dim=2)[0, :-1]
    return F.nll_loss(logp, idx[0, 1:], reduction="none") * math.log2(math.e)


def surprisal_reference(logits, idx):
    logp = torch.log_softmax(logits.double(), dim=-1)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


def judge_surprisal(fn) -> list[str]:
    problems = set()
    g = torch.Generator().manual_seed(4)
    for T, V in [(6, 7), (3, 4), (9, 5)]:
        logits = 2 * torch.randn(1, T, V, generator=g)
        idx = torch.randint(V, (1, T), generator=g)
        want = surprisal_reference(logits, idx)
        try:
            got = torch.as_tensor(fn(logits.clone(), idx.clone()))
        except Exception:
            problems.add("raises")
            continue
        if got.shape != (T - 1,):
            problems.add("shape")
        elif not torch.allclose(got.double(), want, atol=1e-4, rtol=1e-4):
            problems.add("values")
    return sorted(problems)


# ============================================================== reparameterize
# fn(mu, logvar) -> mu + exp(logvar / 2) * eps, eps ~ N(0, I), gradients to mu and logvar.


@wrong("reparameterize", "spread")
def reparam_logvar_as_sigma(mu, logvar):
    return mu + logvar * torch.randn_like(mu)


@wrong("reparameterize", "spread")
def reparam_variance_as_sigma(mu, logvar):
    return mu + torch.exp(logvar) * torch.randn_like(mu)


@wrong("reparameterize", "spread")
def reparam_sqrt_of_logvar(mu, logvar):
    return mu + logvar.sqrt() * torch.randn_like(mu)


@wrong("reparameterize", "mean")
def reparam_uniform_noise(mu, logvar):
    return mu + torch.exp(0.5 * logvar) * torch.rand_like(mu)


@wrong("reparameterize", "independent")
def reparam_one_eps_per_row(mu, logvar):
    eps = torch.randn(mu.size(0), 1)                     # shared by every latent dimension
    return mu + torch.exp(0.5 * logvar) * eps


@wrong("reparameterize", "spread")
def reparam_one_eps_for_batch(mu, logvar):
    eps = torch.randn(mu.size(1))                        # shared by every example
    return mu + torch.exp(0.5 * logvar) * eps


@wrong("reparameterize", "repeats")
def reparam_seeds_inside(mu, logvar):
    torch.manual_seed(0)
    eps = torch.randn_like(mu)
    return mu + torch.exp(0.5 * logvar) * eps


@wrong("reparameterize", "gradient")
def reparam_torch_normal(mu, logvar):
    return torch.normal(mu, torch.exp(0.5 * logvar))


@wrong("reparameterize", "gradient")
def reparam_sigma_detached(mu, logvar):
    sigma = torch.exp(0.5 * logvar).detach()
    return mu + sigma * torch.randn_like(mu)


@wrong("reparameterize", "gradient")
@torch.no_grad()
def reparam_under_no_grad(mu, logvar):
    return mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)


@right("reparameterize")
def reparam_randn_of_shape(mu, logvar):
    eps = torch.randn(mu.shape, dtype=mu.dtype, device=mu.device)
    return mu + eps * logvar.exp().sqrt()


@right("reparameterize")
def reparam_rsample(mu, logvar):
    return torch.distributions.Normal(mu, torch.exp(0.5 * logvar)).rsample()


@right("reparameterize")
def reparam_float64_inside(mu, logvar):
    eps = torch.randn_like(mu, dtype=torch.float64)
    z = mu.double() + torch.exp(logvar.double() / 2) * eps
    return z.to(mu.dtype)


@right("reparameterize")
def reparam_normal_inplace_eps(mu, logvar):
    eps = torch.empty_like(mu).normal_()
    return torch.addcmul(mu, torch.exp(0.5 * logvar), eps)


@right("reparameterize")
def reparam_std_from_logvar_half(mu, logvar):
    std = (logvar / 2).exp()
    return std * torch.randn_like(std) + mu


def judge_reparameterize(fn) -> list[str]:
    problems = set()
    M = 20_000
    mu0 = torch.tensor([0.5, -1.0, 2.0, 0.0])
    logvar0 = torch.tensor([0.0, 0.8, -1.5, 1.2])
    sigma0 = torch.exp(0.5 * logvar0)
    mu = mu0.repeat(M, 1).requires_grad_()
    logvar = logvar0.repeat(M, 1).requires_grad_()
    torch.manual_seed(5)
    try:
        z = fn(mu, logvar)
        z_again = fn(mu, logvar)
    except Exception:
        return ["raises"]
    if z.shape != mu.shape:
        return ["shape"]
    if torch.equal(z, z_again):
        problems.add("repeats")
    e = ((z.detach() - mu0) / sigma0).double()           # should be N(0, I) entries
    if not torch.isfinite(e).all():
        return sorted(problems | {"spread"})
    if (e.mean(0).abs() > 5 / math.sqrt(M)).any():
        problems.add("mean")
    if ((e.std(0) - 1).abs() > 0.03).any():
        problems.add("spread")
    inside = (e.abs() < 1).double().mean(0)              # N(0, 1): 0.6827 within one sigma
    if ((inside - 0.6827).abs() > 0.015).any():
        problems.add("gaussian")
    corr = torch.corrcoef(e.T) - torch.eye(4, dtype=torch.float64)
    if corr.abs().max() > 0.05:
        problems.add("independent")
    upstream = torch.randn(M, 4)
    try:
        g_mu, g_logvar = torch.autograd.grad(z, [mu, logvar], upstream, allow_unused=True)
    except Exception:
        g_mu = g_logvar = None
    want_logvar = upstream * 0.5 * (z.detach() - mu0)    # dz/dlogvar = sigma * eps / 2
    if (g_mu is None or g_logvar is None
            or not torch.allclose(g_mu, upstream, atol=1e-5)
            or not torch.allclose(g_logvar, want_logvar, atol=1e-4)):
        problems.add("gradient")
    return sorted(problems)


# ============================================================== vae_loss
# fn(xhat, x, mu, logvar, beta) -> summed squared error + beta * KL, or either over N, D, N*D.


def kl_closed_form(mu, logvar):
    return -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


@wrong("vae_loss", "value")
def vae_mean_recon(xhat, x, mu, logvar, beta):
    return F.mse_loss(xhat, x) + beta * kl_closed_form(mu, logvar)


@wrong("vae_loss", "value")
def vae_beta_times_both(xhat, x, mu, logvar, beta):
    return beta * (F.mse_loss(xhat, x, reduction="sum") + kl_closed_form(mu, logvar))


@wrong("vae_loss", "value")
def vae_kl_sign_flipped(xhat, x, mu, logvar, beta):
    kl = 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return F.mse_loss(xhat, x, reduction="sum") + beta * kl


@wrong("vae_loss", "value")
def vae_kl_without_half(xhat, x, mu, logvar, beta):
    kl = -torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return F.mse_loss(xhat, x, reduction="sum") + beta * kl


@wrong("vae_loss", "value")
def vae_kl_sigma_for_variance(xhat, x, mu, logvar, beta):
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - torch.exp(0.5 * logvar))
    return F.mse_loss(xhat, x, reduction="sum") + beta * kl


@wrong("vae_loss", "value")
def vae_kl_mean_over_latents(xhat, x, mu, logvar, beta):
    recon = F.mse_loss(xhat, x, reduction="sum") / x.size(0)
    kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())   # also over Z
    return recon + beta * kl


@wrong("vae_loss", "shape")
def vae_kl_per_example(xhat, x, mu, logvar, beta):
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1)   # (N,)
    return F.mse_loss(xhat, x, reduction="sum") + beta * kl


@wrong("vae_loss", "gradient")
def vae_returns_item(xhat, x, mu, logvar, beta):
    loss = F.mse_loss(xhat, x, reduction="sum") + beta * kl_closed_form(mu, logvar)
    return loss.item()


@wrong("vae_loss", "gradient")
@torch.no_grad()
def vae_under_no_grad(xhat, x, mu, logvar, beta):
    return F.mse_loss(xhat, x, reduction="sum") + beta * kl_closed_form(mu, logvar)


@wrong("vae_loss", "gradient")
def vae_xhat_detached(xhat, x, mu, logvar, beta):
    recon = F.mse_loss(xhat.detach(), x, reduction="sum")
    return recon + beta * kl_closed_form(mu, logvar)


@right("vae_loss")
def vae_manual_sums(xhat, x, mu, logvar, beta):
    recon = ((xhat - x) ** 2).sum()
    var = logvar.exp()
    kl = 0.5 * (var + mu * mu - 1 - logvar).sum()
    return recon + beta * kl


@right("vae_loss")
def vae_per_example(xhat, x, mu, logvar, beta):
    N = x.shape[0]
    recon = F.mse_loss(xhat, x, reduction="sum") / N
    kl = kl_closed_form(mu, logvar) / N
    return recon + beta * kl


@right("vae_loss")
def vae_per_pixel(xhat, x, mu, logvar, beta):
    recon = F.mse_loss(xhat, x)                              # over N * D
    kl = kl_closed_form(mu, logvar) / x.numel()              # the same division
    return recon + beta * kl


@right("vae_loss")
def vae_distributions_kl(xhat, x, mu, logvar, beta):
    q = torch.distributions.Normal(mu, torch.exp(0.5 * logvar))
    p = torch.distributions.Normal(torch.zeros_like(mu), torch.ones_like(mu))
    kl = torch.distributions.kl_divergence(q, p).sum()
    return F.mse_loss(xhat, x, reduction="sum") + beta * kl


@right("vae_loss")
def vae_float64_einsum(xhat, x, mu, logvar, beta):
    diff = (xhat - x).double()
    recon = torch.einsum("nd,nd->", diff, diff)
    kl = -0.5 * (1 + logvar.double() - mu.double() ** 2 - logvar.double().exp()).sum()
    return (recon + beta * kl).to(x.dtype)


@right("vae_loss")
def vae_per_feature(xhat, x, mu, logvar, beta):
    D = x.size(1)
    return (F.mse_loss(xhat, x, reduction="sum") + beta * kl_closed_form(mu, logvar)) / D


def judge_vae_loss(fn) -> list[str]:
    problems = set()
    g = torch.Generator().manual_seed(6)
    N, D, Z = 3, 5, 2
    for beta in (0.5, 3.0):
        xhat = torch.randn(N, D, generator=g).requires_grad_()
        x = torch.randn(N, D, generator=g)
        mu = (0.8 * torch.randn(N, Z, generator=g)).requires_grad_()
        logvar = (0.8 * torch.randn(N, Z, generator=g)).requires_grad_()
        leaves = [xhat, mu, logvar]
        total = vae.vae_loss(xhat, x, mu, logvar, beta)[0]
        try:
            got = fn(xhat, x.clone(), mu, logvar, beta)
        except Exception:
            problems.add("raises")
            continue
        got_t = torch.as_tensor(got).detach()
        if got_t.numel() != 1:
            problems.add("shape")
            continue
        divisors = [c for c in (1, N, D, N * D)
                    if math.isclose(float(got_t), total.item() / c, rel_tol=1e-5)]
        if not divisors:
            problems.add("value")
            continue
        want = torch.autograd.grad(total / divisors[0], leaves)
        try:
            grads = torch.autograd.grad(got, leaves, allow_unused=True)
        except Exception:
            grads = [None]
        if any(g_ is None for g_ in grads) or not all(
                torch.allclose(a, b, atol=1e-5) for a, b in zip(grads, want)):
            problems.add("gradient")
    return sorted(problems)


# ============================================================== diffusion_loss
# fn(model, x0, t, eps, abar) -> F.mse_loss(model(x_t, t), eps), x_t from abar[t], t in 0..T-1.


@wrong("diffusion_loss", "value")
def diffusion_paper_t(model, x0, t, eps, abar):
    a = abar[t - 1][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), eps)


@wrong("diffusion_loss", "value")
def diffusion_first_t_for_every_row(model, x0, t, eps, abar):
    a = abar[t[0]]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), eps)


@wrong("diffusion_loss", "value")
def diffusion_abar_without_sqrt(model, x0, t, eps, abar):
    a = abar[t][:, None]
    xt = a * x0 + (1 - a) * eps
    return F.mse_loss(model(xt, t), eps)


@wrong("diffusion_loss", "value")
def diffusion_sqrt_misplaced(model, x0, t, eps, abar):
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a.sqrt()) * eps
    return F.mse_loss(model(xt, t), eps)


@wrong("diffusion_loss", "value")
def diffusion_abar_without_new_axis(model, x0, t, eps, abar):
    xt = abar[t].sqrt() * x0 + (1 - abar[t]).sqrt() * eps     # (N,) against (N, D)
    return F.mse_loss(model(xt, t), eps)


@wrong("diffusion_loss", "value")
def diffusion_predicts_x0(model, x0, t, eps, abar):
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), x0)


@wrong("diffusion_loss", "value")
def diffusion_model_sees_x0(model, x0, t, eps, abar):
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps  # noqa: F841  (the bug: xt unused)
    return F.mse_loss(model(x0, t), eps)


@wrong("diffusion_loss", "value")
def diffusion_draws_its_own_eps(model, x0, t, eps, abar):
    eps = torch.randn_like(x0)
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), eps)


@wrong("diffusion_loss", "gradient")
def diffusion_returns_item(model, x0, t, eps, abar):
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), eps).item()


@wrong("diffusion_loss", "gradient")
@torch.no_grad()
def diffusion_under_no_grad(model, x0, t, eps, abar):
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), eps)


@wrong("diffusion_loss", "gradient")
def diffusion_prediction_detached(model, x0, t, eps, abar):
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    eps_hat = model(xt, t).detach()
    return F.mse_loss(eps_hat, eps)


@right("diffusion_loss")
def diffusion_view_and_keyword(model, x0, t, eps, abar):
    a = abar[t].view(-1, 1)
    xt = torch.sqrt(a) * x0 + torch.sqrt(1 - a) * eps
    return F.mse_loss(model(xt, t=t), eps)


@right("diffusion_loss")
def diffusion_gather_manual_mse(model, x0, t, eps, abar):
    a = abar.gather(0, t).unsqueeze(-1)
    xt = a ** 0.5 * x0 + (1 - a) ** 0.5 * eps
    return ((model(xt, t) - eps) ** 2).mean()


@right("diffusion_loss")
def diffusion_device_from_parameters(model, x0, t, eps, abar):
    device = next(model.parameters()).device
    x0, t, eps, abar = x0.to(device), t.to(device), eps.to(device), abar.to(device)
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), eps)


@right("diffusion_loss")
def diffusion_float64_coefficients(model, x0, t, eps, abar):
    a = abar.double()[t]
    shape = (-1,) + (1,) * (x0.dim() - 1)
    xt = (a.sqrt().view(shape) * x0.double() + (1 - a).sqrt().view(shape) * eps.double())
    return F.mse_loss(model(xt.to(x0.dtype), t), eps)


@right("diffusion_loss")
def diffusion_loop_over_rows(model, x0, t, eps, abar):
    rows = [abar[s].sqrt() * x + (1 - abar[s]).sqrt() * e for x, s, e in zip(x0, t, eps)]
    xt = torch.stack(rows)
    return F.mse_loss(model(xt, t), eps, reduction="mean")


class StandInDenoiser(nn.Module):
    """A small noise predictor, forward(xt, t), with its own view of each row's step."""

    def __init__(self, D: int, T: int):
        super().__init__()
        g = torch.Generator().manual_seed(8)
        self.inp = nn.Linear(D, 16)
        self.step = nn.Embedding(T, 16)
        self.out = nn.Linear(16, D)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g) / 2)

    def forward(self, xt, t):
        return self.out(torch.tanh(self.inp(xt) + self.step(t)))


def diffusion_reference(model, x0, t, eps, abar):
    return F.mse_loss(model(diffusion.q_sample(x0, t, eps, abar), t), eps)


DIFFUSION_CASES = [(5, 3, [0, 7, 19, 3, 12]), (3, 3, [19, 0, 9]), (4, 2, [6, 6, 0, 18])]


def judge_diffusion_loss(fn) -> list[str]:
    problems = set()
    g = torch.Generator().manual_seed(9)
    T = 20
    abar = torch.cumprod(1 - torch.linspace(0.02, 0.3, T), dim=0)
    for N, D, steps in DIFFUSION_CASES:
        model = StandInDenoiser(D, T)
        params = list(model.parameters())
        x0, eps = torch.randn(2, N, D, generator=g)
        t = torch.tensor(steps)
        want = diffusion_reference(model, x0, t, eps, abar)
        want_grads = torch.autograd.grad(want, params)
        torch.manual_seed(10)
        try:
            got = fn(model, x0.clone(), t.clone(), eps.clone(), abar.clone())
        except Exception:
            problems.add("raises")
            continue
        got_t = torch.as_tensor(got).detach()
        if got_t.numel() != 1 or not math.isclose(float(got_t), want.item(), rel_tol=1e-5):
            problems.add("value")
            continue
        try:
            grads = torch.autograd.grad(got, params, allow_unused=True)
        except Exception:
            grads = [None]
        if any(g_ is None for g_ in grads) or not all(
                torch.allclose(a, b, atol=1e-6) for a, b in zip(grads, want_grads)):
            problems.add("gradient")
    return sorted(problems)


# ============================================================== the page's own answers

JUDGES = {
    "attention": judge_attention,
    "split_heads": judge_split_heads,
    "merge_heads": judge_merge_heads,
    "padding_mask": judge_padding_mask,
    "generate": judge_generate,
    "surprisal": judge_surprisal,
    "reparameterize": judge_reparameterize,
    "vae_loss": judge_vae_loss,
    "diffusion_loss": judge_diffusion_loss,
}


@torch.no_grad()
def page_generate(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    for _ in range(steps):
        context = idx[:, -model.cfg.block_size:]
        logits = model(context)[:, -1, :] / temperature
        if top_k:
            topk_threshold = torch.topk(logits, top_k).values[:, [-1]]
            logits[logits < topk_threshold] = float('-inf')
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs, 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


def page_padding_mask(lengths, T):
    keys = torch.arange(T)[None, :] < lengths[:, None]
    return keys[:, None, None, :]


PAGE_ANSWERS = [
    pytest.param("attention", attention_reference, id="attention"),
    pytest.param("split_heads", ref_attention.split_heads, id="split_heads"),
    pytest.param("merge_heads", ref_attention.merge_heads, id="merge_heads"),
    pytest.param("padding_mask", page_padding_mask, id="padding_mask"),
    pytest.param("generate", page_generate, id="generate"),
    pytest.param("surprisal", surprisal_reference, id="surprisal"),
    pytest.param("reparameterize", vae.reparameterize, id="reparameterize"),
    pytest.param("vae_loss", lambda *a: vae.vae_loss(*a)[0], id="vae_loss"),
    pytest.param("diffusion_loss", diffusion_reference, id="diffusion_loss"),
]


@pytest.mark.parametrize("name, fn", PAGE_ANSWERS)
def test_the_judges_accept_the_reference_answers(name, fn):
    assert JUDGES[name](fn) == []


def test_there_are_enough_strangers():
    per_check = {name: sum(p.values[0] == name for p in WRONG) for name in JUDGES}
    assert min(per_check.values()) >= 4 and len(WRONG) >= 45, per_check
    assert len(RIGHT) >= 20 and {p.values[0] for p in RIGHT} == set(JUDGES)
    ids = [p.id for p in WRONG + RIGHT]
    assert len(ids) == len(set(ids))


# ============================================================== the demonstrations


@pytest.mark.parametrize("name, fn, problem", WRONG)
def test_each_wrong_answer_is_wrong(name, fn, problem):
    assert problem in JUDGES[name](fn)


@pytest.mark.parametrize("name, fn", RIGHT)
def test_each_right_answer_is_right(name, fn):
    assert JUDGES[name](fn) == []


# ============================================================== the checker


@pytest.mark.parametrize("name, fn, problem", WRONG)
def test_the_check_refuses_each_wrong_answer(name, fn, problem):
    verdict = getattr(check, name)(fn)
    torch.set_grad_enabled(True)
    lines = repr(verdict).splitlines()
    assert not verdict.ok, repr(verdict)
    assert lines and all(line.startswith("Not yet: ") for line in lines), repr(verdict)


@pytest.mark.parametrize("name, fn", RIGHT)
def test_the_check_accepts_each_right_answer(name, fn):
    verdict = getattr(check, name)(fn)
    assert verdict.ok, repr(verdict)
