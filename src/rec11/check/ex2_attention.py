"""Exercise 2: the three details of attention, ``check.attention(fn)``."""

from __future__ import annotations

import itertools
import math

import torch

from rec11 import attention as reference
from rec11.check.core import (
    GRAD_LEAK,
    Case,
    Verdict,
    battery,
    case_name,
    first,
    first_difference,
    gradient_difference,
    gradients,
    named,
    raised,
    right,
    run,
    wrong,
)

MISTAKES = {
    "dim": "your weights sum to 1 down each column, not along each row: the softmax "
           "runs over dim=-2, the queries. Normalise across the keys, dim=-1.",
    "dim_batch": "your softmax runs over dim=0, the batch: each weight is normalised against "
                 "the same query and key in the other sequences, not against the other keys. "
                 "Normalise across the keys, dim=-1.",
    "mask_after": "your rows do not sum to 1: the mask is applied after the softmax. "
                  "Fill the forbidden scores with -inf before it, so the weights that "
                  "remain are renormalised.",
    "mask_zero": "forbidden keys still get weight: you fill their scores with 0, and "
                 "e^0 = 1 is not zero. Fill them with float('-inf').",
    "mask_inverted": "you hide the allowed keys and keep the forbidden ones: the mask is "
                     "1 where attention is allowed, so fill where mask == 0.",
    "mask_added": "you add the 0/1 mask to the scores, which hides nothing (a float attn_mask "
                  "given to F.scaled_dot_product_attention is added the same way). Fill the "
                  "scores where mask == 0 with -inf, or pass attn_mask=mask.bool().",
    "no_mask": "positions see what the mask forbids: the mask is never applied.",
    "mask_transposed": "you read the mask transposed: row i of the mask says which keys query i "
                       "may look at, as row i of the scores does. Use the mask as it is "
                       "given, not mask.T.",
    "own_mask": "your function ignores the mask it is given and builds a causal one: with any "
                "other mask, such as a padding mask, it attends where it must not. Use the "
                "argument: scores.masked_fill(mask == 0, float('-inf')).",
    "adds_causal": "you combine the mask you are given with a causal one of your own: the "
                   "argument already says where each query may look, and need not be causal "
                   "(a padding mask is not). Use it alone: "
                   "scores.masked_fill(mask == 0, float('-inf')).",
    "no_scale": "your scores are not divided by sqrt(d_k): they are sqrt(d_k) times too "
                "large, and the softmax saturates as d_k grows.",
    "scale_dk": "you divide by d_k, not sqrt(d_k): the scores come out too small.",
    "scale_half": "you divide by d_k / 2 or by 2 * d_k: in Python `d_k ** 1/2` is "
                  "(d_k ** 1) / 2, since the power binds before the division (and "
                  "`scores / d_k ** 1/2` is scores / d_k / 2). Write d_k ** 0.5 or math.sqrt(d_k).",
    "scale_dv": "you divide by sqrt(d_v), the values' width: the scores are dot products of "
                "queries and keys, so the scale is sqrt(d_k), Q.size(-1).",
    "keys_queries": "your scores are K Q^T, so row i holds key i against every query: "
                    "Q @ K.transpose(-2, -1) puts the queries on the rows.",
    "weights_transposed": "you multiply A^T by V: row i of A holds query i's weights over "
                          "the keys, so out = A @ V.",
    "fill_finite": "forbidden keys still get weight: a finite fill such as -10 is not small "
                   "when the allowed scores are smaller still, and e^-10 is not 0. Fill "
                   "with float('-inf').",
}

# A mask that is not causal: some keys ahead of a query are allowed and some behind it are
# not, so a function that builds its own torch.tril, or ignores the mask, shows up. Every
# row and every column keeps a 1 and a 0, so no variant divides 0 by 0.
OTHER_MASK = torch.tensor([[0, 1, 1, 0, 1],
                           [1, 0, 0, 1, 0],
                           [0, 0, 1, 1, 1],
                           [1, 1, 0, 0, 0],
                           [0, 1, 0, 1, 1]], dtype=torch.float32)


def _qkv(seed, N, T_q, T_k, d_k, d_v, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    Q = torch.randn(N, T_q, d_k, generator=g, dtype=dtype)
    K = torch.randn(N, T_k, d_k, generator=g, dtype=dtype)
    V = torch.randn(N, T_k, d_v, generator=g, dtype=dtype)
    return Q, K, V


def _random_mask(seed, T_q, T_k):
    """(T_q, T_k) bool: a random pattern in which every query keeps a key and loses one."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(T_q, T_k, generator=g) < 0.5
    mask[torch.arange(T_q), torch.arange(T_q) % T_k] = True
    mask[torch.arange(T_q), (torch.arange(T_q) + 1) % T_k] = False
    return mask


def _low_scores(seed):
    """Queries and keys that point apart, so every allowed score is about -200: a finite
    fill such as -10 then outweighs them, where -inf does not."""
    Q, K, V = _qkv(seed, 2, 3, 5, 32, 4)
    K = -Q.mean(1, keepdim=True).expand(2, 5, 32) * 6 + 0.3 * K
    return 6 * Q.mean(1, keepdim=True) + 0.3 * Q, K, V


@battery("attention")
def cases() -> list[Case]:
    causal = reference.causal_mask(5)  # (T, T) floats, 1 where a query may look
    return [
        Case(lambda: (*_qkv(0, 2, 5, 5, 16, 3), causal.clone()),
             "Q, K of shape (2, 5, 16), V (2, 5, 3), the causal (5, 5) mask"),
        Case(lambda: (*_qkv(0, 2, 5, 5, 16, 3), OTHER_MASK.clone()),
             "the same Q, K, V, a mask that is not causal"),
        Case(lambda: (*_qkv(1, 3, 4, 6, 8, 5), _random_mask(1, 4, 6)),
             "Q (3, 4, 8), K (3, 6, 8), V (3, 6, 5): 4 queries, 6 keys, a (4, 6) bool mask"),
        Case(lambda: (*_qkv(2, 4, 7, 7, 12, 2, torch.float64),
                      reference.causal_mask(7).long()),
             "float64 Q, K (4, 7, 12), V (4, 7, 2), a causal (7, 7) int64 mask"),
        Case(lambda: (*_low_scores(3), _random_mask(3, 3, 5)),
             "Q (2, 3, 32), K (2, 5, 32), V (2, 5, 4), every allowed score below -100"),
    ]


def attention_inputs(seed: int = 0):
    """Q, K, V, mask of the check's first case: (2, 5, 16), (2, 5, 16), (2, 5, 3), (5, 5)."""
    return cases()[0].make()


def _variant(dim=-1, scale="sqrt", masking="before", source="given", order="QK",
             weights="A"):
    """Attention with the choices a student can get wrong; the defaults are right."""
    def attention(Q, K, V, mask):
        d_k, d_v = Q.size(-1), V.size(-1)
        T = Q.size(-2)
        causal = torch.tril(torch.ones(T, T))  # as a student builds it: square
        mask = {"given": lambda: mask, "own": lambda: causal,
                "own_rect": lambda: torch.tril(torch.ones(T, K.size(-2))),  # as is_causal does
                "both": lambda: (mask != 0) * causal,
                "transposed": lambda: mask.transpose(-2, -1)}[source]()
        scores = Q @ K.transpose(-2, -1) if order == "QK" else K @ Q.transpose(-2, -1)
        scores = scores / {"sqrt": math.sqrt(d_k), "none": 1.0, "dk": d_k,
                           "half": d_k / 2, "twice": 2 * d_k, "dv": math.sqrt(d_v)}[scale]
        forbidden = mask == 0
        if masking == "before":
            scores = scores.masked_fill(forbidden, float("-inf"))
        elif masking == "zero":
            scores = scores.masked_fill(forbidden, 0.0)
        elif masking == "inverted":
            scores = scores.masked_fill(~forbidden, float("-inf"))
        elif masking == "added":
            scores = scores + mask
        elif masking == "sdpa":  # F.scaled_dot_product_attention's attn_mask: a float is added
            if not (mask.dtype == torch.bool or mask.is_floating_point()):
                raise TypeError("attn_mask must be bool or float")
            scores = scores + mask if mask.is_floating_point() else \
                scores.masked_fill(~mask, float("-inf"))
        elif isinstance(masking, float):
            scores = scores.masked_fill(forbidden, masking)
        A = torch.softmax(scores, dim=dim)
        if masking == "after":
            A = A.masked_fill(forbidden, 0.0)
        if weights == "AT":
            A = A.transpose(-2, -1)
        return A @ V
    return attention


NAMES = {"dim": {-2: "dim", 0: "dim_batch"},
         "scale": {"none": "no_scale", "dk": "scale_dk", "half": "scale_half",
                   "twice": "scale_half", "dv": "scale_dv"},
         "masking": {"after": "mask_after", "zero": "mask_zero", "inverted": "mask_inverted",
                     "added": "mask_added", "none": "no_mask"},
         "source": {"own": "own_mask", "both": "adds_causal", "transposed": "mask_transposed"}}


def variants():
    """(names, function) of every mistake the check can name, and of their combinations."""
    for dim, scale, masking, source in itertools.product(
            (-1, -2, 0), ("sqrt", "none", "dk", "half", "twice", "dv"),
            ("before", "after", "zero", "inverted", "added", "none"),
            ("given", "own", "both", "transposed")):
        if masking == "none" and source != "given":
            continue  # no mask at all: where it came from does not matter
        choice = {"dim": dim, "scale": scale, "masking": masking, "source": source}
        names = [NAMES[key][value] for key, value in choice.items() if value in NAMES[key]]
        yield names, _variant(**choice)
    yield ["mask_added"], _variant(masking="sdpa")
    yield ["own_mask"], _variant(source="own_rect")
    yield ["keys_queries"], _variant(order="KQ")
    yield ["weights_transposed"], _variant(weights="AT")
    for fill in (-1.0, -5.0, -10.0, -20.0, -50.0, -100.0):
        yield ["fill_finite"], _variant(masking=fill)


RIGHT = "softmax(Q K^T / sqrt(d_k)) V, with the forbidden scores set to -inf before the softmax"


def attention(fn) -> Verdict:
    """``fn(Q, K, V, mask)`` -> out (N, T_q, d_v): scaled, masked before, softmax on dim=-1.

    Five cases: the causal mask, a mask that is not causal, more keys than queries with a
    bool mask, float64 with an int mask, and allowed scores far below zero. On each the
    output and the gradients reaching Q, K and V must be the reference's.
    """
    battery_, student, wanted, args, grads = cases(), [], [], [], []
    for k, case in enumerate(battery_):
        Q, K, V, mask = case.make()
        leaves = [x.requires_grad_() for x in (Q, K, V)]
        ran = run(fn, (Q, K, V, mask))
        if ran.grad_leaked:
            return wrong({"grad_leak": GRAD_LEAK})
        want, _ = reference.attention(Q, K, V, mask)
        out = ran.error if ran.error is not None else first(ran.value)
        if ran.error is None and (not torch.is_tensor(out) or out.shape != want.shape):
            shape = tuple(out.shape) if torch.is_tensor(out) else type(out).__name__
            return wrong({"shape": f"on {case_name('attention', k, case)} your output is "
                                   f"{shape}; it should be {tuple(want.shape)}, one value-sized "
                                   "row per query. Try: print the shape after each line on "
                                   "that input."})
        if ran.error is None:
            grads.append((gradients(out, leaves), gradients(want, leaves)))
            out = out.detach()
        student.append(out)
        wanted.append(want.detach())
        args.append(case.make())
    bad = [k for k, (s, w) in enumerate(zip(student, wanted))
           if isinstance(s, Exception) or first_difference(s, w)]
    if not bad:
        for k, (got, want) in enumerate(grads):
            grad = gradient_difference(got, want, ["Q", "K", "V"])
            if grad:
                return wrong({"gradient": f"on {case_name('attention', k, battery_[k])} your "
                                          f"output is right but {grad}. Try: compute it with "
                                          "torch operations only, nothing detached."})
        return right(f"{RIGHT}, on every case (the causal mask, another mask, more keys "
                     "than queries, float64, scores far below zero), with the right "
                     "gradients.")
    names = named(student, variants(), args, wanted)
    if names:
        return wrong({name: MISTAKES[name] for name in names})
    k = bad[0]
    where = case_name("attention", k, battery_[k])
    if isinstance(student[k], Exception):
        return raised(student[k], where, {"must match the size": "is K transposed with "
                                                                 "transpose(-2, -1)?"})
    return wrong({"differs": f"on {where} your output differs from {RIGHT}: "
                             f"{first_difference(student[k], wanted[k])}. Try: "
                             f"Q, K, V, mask = check.inputs('attention', {k}), and compare "
                             "each of your lines with the formula's on it."})
