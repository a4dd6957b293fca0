"""Exercise 3: shapes through multi-head attention, ``split_heads``, ``merge_heads`` and
``padding_mask``. Every case gives each axis its own size, so that a swap of two axes
(the batch and the heads, say) changes the result."""

from __future__ import annotations

import itertools

import torch

from rec11 import attention as reference
from rec11.check.core import (
    GRAD_LEAK,
    Case,
    Verdict,
    battery,
    case_name,
    first_difference,
    gradient_difference,
    gradients,
    named,
    raised,
    right,
    run,
    wrong,
)


def _values(seed, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@battery("split_heads")
def split_cases() -> list[Case]:
    sizes = [(2, 3, 8, 2), (3, 5, 12, 2), (4, 2, 15, 5), (1, 7, 12, 4)]
    out = [Case(lambda s=s, k=k: (_values(k, *s[:3]), s[3]), f"N={s[0]}, T={s[1]}, d={s[2]}, H={s[3]}")
           for k, s in enumerate(sizes)]
    out.append(Case(lambda: (_values(9, 2, 6, 20, dtype=torch.float64), 4),
                    "float64, N=2, T=6, d=20, H=4"))
    return out


@battery("merge_heads")
def merge_cases() -> list[Case]:
    sizes = [(2, 2, 3, 4), (3, 2, 5, 4), (2, 4, 3, 5), (4, 3, 2, 6)]
    out = [Case(lambda s=s, k=k: (_values(k, *s),), f"N={s[0]}, H={s[1]}, T={s[2]}, d/H={s[3]}")
           for k, s in enumerate(sizes)]
    out.append(Case(lambda: (_values(9, 1, 5, 4, 3, dtype=torch.float64),),
                    "float64, N=1, H=5, T=4, d/H=3"))
    return out


def _split_variants():
    def view_without_transpose(x, H):
        N, T, d = x.shape
        return x.reshape(N, H, T, d // H)

    def interleaved(x, H):  # head h gets features h, h + H, h + 2H, ...
        N, T, d = x.shape
        return x.view(N, T, d // H, H).permute(0, 3, 1, 2)
    yield ["view_without_transpose"], view_without_transpose
    yield ["interleaved"], interleaved


def _merge_variants():
    def reshape_without_transpose(x):
        N, H, T, d_h = x.shape
        return x.reshape(N, T, H * d_h)

    def interleaved(x):  # the head axis after the features
        N, H, T, d_h = x.shape
        return x.permute(0, 2, 3, 1).reshape(N, T, H * d_h)
    yield ["reshape_without_transpose"], reshape_without_transpose
    yield ["interleaved"], interleaved


SHAPE_MISTAKES = {
    "view_without_transpose": "the shape is right and the contents are not: view(N, H, T, d/H) "
                              "reads the memory in the wrong order, so a 'head' holds pieces "
                              "of several tokens. View as (N, T, H, d/H), then transpose(1, 2).",
    "split_interleaved": "each head holds every H-th feature, not a block of d/H neighbouring "
                         "ones: view(N, T, d/H, H) puts the axes the wrong way round. View as "
                         "(N, T, H, d/H), then transpose(1, 2).",
    "reshape_without_transpose": "the shape is right and the contents are not: "
                                 "reshape(N, T, d) straight from (N, H, T, d/H) mixes tokens. "
                                 "transpose(1, 2) first, then reshape.",
    "merge_interleaved": "the heads' features interleave (head 0's first, head 1's first, ...) "
                         "instead of sitting side by side: the head axis must come before the "
                         "feature axis. transpose(1, 2), then reshape(N, T, d).",
}


def _reshape_check(name, fn, cases, ref, variants, wrong_axes, axes_name, axes_line,
                   right_line) -> Verdict:
    """The shared body of split_heads and merge_heads: values, then gradients, then names."""
    student, wanted, args = [], [], []
    for k, case in enumerate(cases):
        x, *rest = case.make()
        x.requires_grad_()
        ran = run(fn, (x, *rest))
        where = case_name(name, k, case)
        if ran.error is not None:
            return raised(ran.error, where, {
                "view size is not compatible": "after transpose(1, 2) the tensor is not "
                                               "contiguous: use reshape",
                "is invalid for input of size": "read every size from the input's shape and "
                                                "H; type no size as a number"})
        if ran.grad_leaked:
            return wrong({"grad_leak": GRAD_LEAK})
        got, want = ran.value, ref(x, *rest)
        axes = wrong_axes(x, *rest)
        if torch.is_tensor(got) and got.shape == axes.shape != want.shape and \
                first_difference(got, axes) is None:
            return wrong({axes_name: f"on {where} your result has shape "
                                     f"{tuple(got.shape)}: {axes_line}"})
        if not torch.is_tensor(got) or got.shape != want.shape:
            shape = tuple(got.shape) if torch.is_tensor(got) else type(got).__name__
            return wrong({"shape": f"on {where} your result has shape {shape}; it should be "
                                   f"{tuple(want.shape)}. Try: read N, T and the other sizes "
                                   "from the input's shape in the order its axes come."})
        student.append(got.detach())
        wanted.append(want.detach())
        args.append(case.make())
        if first_difference(got, want) is None:
            grad = gradient_difference(gradients(got, [x]), gradients(want, [x]), ["x"])
            if grad:
                return wrong({"gradient": f"on {where} your result is right but {grad}. Try: "
                                          "reshape with torch operations only."})
    bad = [k for k, (s, w) in enumerate(zip(student, wanted)) if first_difference(s, w)]
    if not bad:
        return right(right_line)
    names = named(student, variants(), args, wanted, same=lambda a, b: torch.equal(a, b))
    if names:
        key = names[0] if names[0] in SHAPE_MISTAKES else f"{name.split('_')[0]}_{names[0]}"
        return wrong({names[0]: SHAPE_MISTAKES[key]})
    k = bad[0]
    return wrong({"differs": f"on {case_name(name, k, cases[k])} the shape is right and the "
                             f"contents are not, {first_difference(student[k], wanted[k])}. "
                             f"Try: x = check.inputs({name!r}, {k})[0], and follow one "
                             "token's features through your lines."})


def split_heads(fn) -> Verdict:
    """``fn(x, H)``: (N, T, d) -> (N, H, T, d/H), each head a block of d/H features."""
    return _reshape_check(
        "split_heads", fn, split_cases(), reference.split_heads, _split_variants,
        lambda x, H: x.view(x.size(0), x.size(1), H, -1), "no_transpose",
        "the heads are on axis 2: transpose(1, 2) puts them next to the batch, so the "
        "matmuls treat each head as its own problem.",
        "view(N, T, H, d/H) cuts each token's features into H groups, and transpose(1, 2) "
        "moves the heads next to the batch: (N, H, T, d/H), for every N, T, d and H tried.")


def merge_heads(fn) -> Verdict:
    """``fn(out)``: (N, H, T, d/H) -> (N, T, d), the heads' outputs side by side."""
    return _reshape_check(
        "merge_heads", fn, merge_cases(), reference.merge_heads, _merge_variants,
        lambda x: x.transpose(1, 2), "no_merge",
        "the heads are next to the tokens, not yet side by side. reshape(N, T, d) after the "
        "transpose joins them.",
        "transpose(1, 2) brings the tokens back next to the batch, and reshape puts each "
        "token's H head outputs side by side: (N, T, d), for every N, H, T and d/H tried.")


# --- the padding mask ------------------------------------------------------------------------

@battery("padding_mask")
def padding_cases() -> list[Case]:
    """(lengths, T) with H, the heads of the scores the mask must broadcast against.

    N differs from T and from H in all but the last case, so that a mask of shape (N, T)
    cannot broadcast by luck; the second has no full-length row and pads past the longest."""
    rows = [([3, 5, 2], 5, 2), ([2, 4, 1], 6, 2), ([1, 7, 3, 7], 7, 3), ([2, 3], 3, 4),
            ([2, 5, 3, 4, 1], 5, 2)]
    return [Case(lambda L=L, T=T: (torch.tensor(L), T), f"lengths={L}, T={T}, {H} heads")
            for L, T, H in rows]


HEADS = [2, 2, 3, 4, 2]  # the heads of each padding case's scores

PADDING_MISTAKES = {
    "inverted": "you hide the real tokens and keep the padding: the mask is 1 where attention "
                "is allowed (nn.MultiheadAttention's key_padding_mask is the opposite, True on "
                "padding). A full-length sequence then has no key left, and its weights are NaN.",
    "off_by_one_late": "each sequence's first padded key still gets weight: positions 0 to "
                       "lengths[n] - 1 are real, so position lengths[n] is padding. Compare "
                       "with <, not <=: torch.arange(T)[None, :] < lengths[:, None].",
    "off_by_one_early": "your mask hides each sequence's last real token: positions 0 to "
                        "lengths[n] - 1 are real. Compare torch.arange(T) (from 0) with "
                        "lengths using <.",
    "masks_queries": "some rows of the weights are NaN: your mask hides every key from the "
                     "padded queries, and the softmax of a row of -inf is 0/0. Mask the keys "
                     "(the last axis): shape (N, 1, 1, T).",
    "only_causal": "your mask is causal and ignores the lengths: the padded keys still get "
                   "weight. Build the padding part from lengths: "
                   "torch.arange(T)[None, :] < lengths[:, None].",
    "causal_diagonal": "the padding part is right; the causal part also hides each query's "
                       "own position: a query may look at keys 0 to i, itself included. "
                       "torch.tril(torch.ones(T, T)) keeps the diagonal.",
    "causal_inverted": "the padding part is right; the causal part is the wrong way round, "
                       "so each query sees the future and not the past: torch.tril, not "
                       "torch.triu.",
    "causal_or": "the padding part and the causal part are each right, but you allow a key "
                 "when either allows it: a key must be real and not in the future, so "
                 "combine them with &.",
    "nothing": "your mask hides nothing: the padded keys still get weight. Build it from "
               "lengths: torch.arange(T)[None, :] < lengths[:, None].",
}


def _hidden_patterns(lengths, T):
    """{(padding name, causal name, combine): the (1 or N, 1, T, T) keys hidden}."""
    q = torch.arange(T)[None, None, :, None]
    k = torch.arange(T)[None, None, None, :]
    L = lengths[:, None, None, None]
    padding = {"right": k >= L, "inverted": k < L, "off_by_one_late": k > L,
               "off_by_one_early": k >= L - 1, "masks_queries": q >= L,
               "nothing": torch.zeros(1, 1, T, T, dtype=torch.bool)}
    causal = {None: None, "right": k > q, "causal_diagonal": k >= q,
              "causal_inverted": k < q}
    out = {}
    for (p, pad), (c, fut) in itertools.product(padding.items(), causal.items()):
        if fut is None:
            out[p, None, "and"] = pad
            continue
        out[p, c, "and"] = pad | fut  # hide when either hides: allowed = real & past
        out[p, c, "or"] = pad & fut
    return out


def _pattern_names(key) -> list[str]:
    p, c, combine = key
    if p == "nothing":
        return ["only_causal"] if (c, combine) == ("right", "and") else ["nothing"] + (
            [c] if c not in (None, "right") else [])
    names = [] if p == "right" else [p]
    if c not in (None, "right"):
        names.append(c)
    if combine == "or":
        names.append("causal_or")
    return names


def _as_hidden(mask, lengths, T, H):
    """The keys ``mask`` hides from scores of shape (N, H, T, T), or a Verdict line."""
    N = len(lengths)
    mask = torch.as_tensor(mask)
    if mask.is_floating_point() and (mask < -1e3).any():
        return None, {"additive": "your mask holds -inf (or a large negative number) on the "
                                  "padding: that is an additive mask, to add to the scores. "
                                  "Here the mask is 1 on real keys and 0 on padding, used as "
                                  "scores.masked_fill(mask == 0, float('-inf'))."}
    scores = torch.zeros(N, H, T, T)
    try:
        masked = scores.masked_fill(mask == 0, float("-inf"))
    except RuntimeError:
        return None, _shape_line(mask, lengths, T, H)
    if masked.shape != scores.shape:
        return None, {"shape": f"your mask of shape {tuple(mask.shape)} makes the scores "
                               f"{tuple(masked.shape)}, not (N, H, T, T) = {tuple(scores.shape)}. "
                               "Try: shape (N, 1, 1, T), mask[:, None, None, :]."}
    return masked.isinf(), None


def _shape_line(mask, lengths, T, H) -> dict[str, str]:
    N = len(lengths)
    if tuple(mask.shape) == (N, T):
        return {"no_axes": f"your mask has shape {tuple(mask.shape)}: against scores of shape "
                           "(N, H, T, T) it lines up with the last two axes, not with the "
                           "batch. Give it shape (N, 1, 1, T): mask[:, None, None, :]."}
    if tuple(mask.shape) == (N, 1, T):
        return {"one_axis": f"your mask has shape {tuple(mask.shape)}, which would do for one "
                            "head's scores (N, T, T); against (N, H, T, T) its batch axis lines "
                            "up with the heads. Add one more: mask[:, None, None, :], (N, 1, 1, T)."}
    longest = int(lengths.max())
    if mask.dim() and mask.shape[-1] == longest != T:
        return {"max_length": f"your mask has {longest} positions, lengths.max(), not T = {T}: "
                              "a batch can be padded past its longest sequence. Use "
                              "torch.arange(T)."}
    return {"shape": f"a mask of shape {tuple(mask.shape)} does not broadcast against scores "
                     f"of shape (N, H, T, T) = ({N}, {H}, {T}, {T}). Try: (N, 1, 1, T), or "
                     "(N, 1, T, T) with the causal part."}


def padding_mask(fn) -> Verdict:
    """``fn(lengths, T)`` -> a mask that broadcasts against scores (N, H, T, T), 1 on real keys.

    It may also carry the causal mask, as Exercise 3's answer does: shape (N, 1, T, T).
    """
    cases = padding_cases()
    hidden = []
    for k, (case, H) in enumerate(zip(cases, HEADS)):
        lengths, T = case.make()
        ran = run(fn, (lengths, T))
        if ran.error is not None:
            return raised(ran.error, case_name("padding_mask", k, case))
        if ran.grad_leaked:
            return wrong({"grad_leak": GRAD_LEAK})
        got, line = _as_hidden(ran.value, lengths, T, H)
        if line:
            return wrong(line)
        hidden.append(got)
    patterns = [_hidden_patterns(*case.make()) for case in cases]
    for causal in (None, "right"):
        if all(torch.equal(h, p["right", causal, "and"].expand_as(h))
               for h, p in zip(hidden, patterns)):
            if causal:
                return right("your mask hides the padded keys of each sequence and the future, "
                             "as the causal mask does; (N, 1, T, T) broadcasts over the heads.")
            return right("shape (N, 1, 1, T) broadcasts over the heads and the queries, and "
                         "hides the padded keys of each sequence, for every length tried.")
    fits = {tuple(_pattern_names(key)) for key in patterns[0]
            if all(torch.equal(h, p[key].expand_as(h)) for h, p in zip(hidden, patterns))}
    fits.discard(())
    fewest = {names for names in fits if len(names) == min(map(len, fits))}
    if len(fewest) == 1:
        return wrong({name: PADDING_MISTAKES[name] for name in fewest.pop()})
    return _padding_counterexample(cases, hidden, patterns)


def _padding_counterexample(cases, hidden, patterns) -> Verdict:
    """The first entry, in the first case, where the mask differs from the nearer right one."""
    for k, (case, h, p) in enumerate(zip(cases, hidden, patterns)):
        lengths, T = case.make()  # noqa: RUF059
        nearest = min((p["right", c, "and"].expand_as(h) for c in (None, "right")),
                      key=lambda want: int((want != h).sum()))
        if torch.equal(h, nearest):
            continue
        n, _, q, key = ((h != nearest).nonzero()[0]).tolist()
        does = "hides" if h[n, 0, q, key] else "lets query {q} see"
        should = "see it" if h[n, 0, q, key] else "not see it"
        return wrong({"differs": f"on {case_name('padding_mask', k, case)}: sequence {n} has "
                                 f"{int(lengths[n])} real tokens, and your mask "
                                 f"{does.format(q=q)} key {key} at query {q}, which should "
                                 f"{should}. Try: lengths, T = check.inputs('padding_mask', {k}) "
                                 "and print your mask for that sequence."})
    return wrong({"differs": "your mask carries the causal part for some inputs and not for "
                             "others. Try: build it the same way for every length."})
