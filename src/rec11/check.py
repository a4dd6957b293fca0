"""Checks for the Exercises page: each runs a student's function and names the mistake.

    from rec11 import check
    check.attention(my_attention)

A check runs the function on small fixed inputs, chosen so that the mistakes differ (a mask
that is not causal, a prompt longer than the block, several betas, lengths with and without
a full-length sequence), and compares what comes back with the right answer and with each
classic mistake: the softmax over the wrong axis, the mask
applied after the softmax, the missing √d_k, ``view`` without the transpose, a context
that is never cropped, ``reduction='mean'``, the paper's t for the code's ... It returns
a ``Verdict``, which prints as a few lines: what is right, or which mistake it found and
how to fix it. Nothing here trains; the models are fakes that record how they were called.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from types import SimpleNamespace

import torch
import torch.nn.functional as F

from rec11 import attention as reference
from rec11 import diffusion, lm, vae


@dataclass
class Verdict:
    """What a check found: ``ok``, the names of the mistakes, and what to tell the student."""

    ok: bool
    lines: list[str]
    mistakes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def __bool__(self) -> bool:
        return self.ok


def _right(what: str) -> Verdict:
    return Verdict(True, [f"Right: {what}"])


def _wrong(found: dict[str, str]) -> Verdict:
    """found: {mistake name: the sentence that names it}."""
    return Verdict(False, [f"Not yet: {line}" for line in found.values()], list(found))


def _raised(error: Exception, hints: dict[str, str] = {}) -> Verdict:
    text = f"{type(error).__name__}: {error}"
    line = f"Not yet: your function raised {text.splitlines()[0][:200]}"
    for clue, hint in hints.items():
        if clue in str(error):
            line += f" ({hint})"
    return Verdict(False, [line], ["raised"])


def _close(a, b, atol: float = 1e-5) -> bool:
    a = torch.as_tensor(a, dtype=torch.float64)
    b = torch.as_tensor(b, dtype=torch.float64)
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=atol, rtol=1e-4, equal_nan=True))


def _first(result):
    """A function may return ``out`` or ``(out, A)``, as ``rec11.attention`` does."""
    return result[0] if isinstance(result, tuple) else result


# --- 1. the three details ----------------------------------------------------------------

ATTENTION_MISTAKES = {
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
    "no_mask": "positions see the future: the mask is never applied.",
    "mask_transposed": "you read the mask transposed: row i of the mask says which keys query i "
                       "may look at, as row i of the scores does, so a causal mask turned around "
                       "lets each query see the future. Use the mask as it is given, not mask.T.",
    "own_mask": "your function ignores the mask it is given and builds a causal one: with any "
                "other mask, such as a padding mask, it attends where it must not. Use the "
                "argument: scores.masked_fill(mask == 0, float('-inf')).",
    "adds_causal": "you combine the mask you are given with a causal one of your own: the "
                   "argument already says where each query may look, and need not be causal "
                   "(a padding mask is not). Use it alone: scores.masked_fill(mask == 0, float('-inf')).",
    "no_scale": "your scores are not divided by sqrt(d_k): at d_k = 16 they are 4 times "
                "too large, and the softmax saturates as d_k grows.",
    "scale_dk": "you divide by d_k, not sqrt(d_k): the scores come out too small.",
}

# A mask that is not causal: some keys ahead of a query are allowed and some behind it are
# not, so a function that builds its own torch.tril, or ignores the mask, shows up. Every row
# and every column keeps a 1 and a 0, so no variant divides 0 by 0.
OTHER_MASK = torch.tensor([[0, 1, 1, 0, 1],
                           [1, 0, 0, 1, 0],
                           [0, 0, 1, 1, 1],
                           [1, 1, 0, 0, 0],
                           [0, 1, 0, 1, 1]], dtype=torch.float32)


def _attention_variant(Q, K, V, mask, dim=-1, scale="sqrt", masking="before"):
    d_k = Q.size(-1)
    scores = Q @ K.transpose(-2, -1)
    scores = scores / {"sqrt": math.sqrt(d_k), "none": 1.0, "dk": d_k}[scale]
    if masking == "before":
        scores = scores.masked_fill(mask == 0, float("-inf"))
    elif masking == "zero":
        scores = scores.masked_fill(mask == 0, 0.0)
    elif masking == "inverted":
        scores = scores.masked_fill(mask == 1, float("-inf"))
    elif masking == "added":
        scores = scores + mask
    A = torch.softmax(scores, dim=dim)
    if masking == "after":
        A = A.masked_fill(mask == 0, 0.0)
    return A @ V


def attention_inputs(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    N, T, d_k, d_v = 2, 5, 16, 3
    Q, K = torch.randn(N, T, d_k, generator=g), torch.randn(N, T, d_k, generator=g)
    V = torch.randn(N, T, d_v, generator=g)
    mask = torch.tril(torch.ones(T, T))  # (T, T): 1 where a query may look
    return Q, K, V, mask


def _attention_mistakes(outs, Q, K, V, masks):
    """The names of the variant that gives ``outs`` on every mask, or None."""
    causal = torch.tril(torch.ones(Q.size(-2), Q.size(-2)))
    for dim, scale, masking, source in itertools.product(
            (-1, -2, 0), ("sqrt", "none", "dk"),
            ("before", "after", "zero", "inverted", "added", "none"),
            ("given", "own", "both", "transposed")):
        if masking == "none" and source != "given":
            continue  # no mask at all: where it came from does not matter
        used = lambda mask: {"given": mask, "own": causal, "both": mask * causal,
                             "transposed": mask.transpose(-2, -1)}[source]
        if all(_close(out, _attention_variant(Q, K, V, used(mask), dim, scale, masking))
               for out, mask in zip(outs, masks)):
            names = [{-2: "dim", 0: "dim_batch"}.get(dim),
                     {"after": "mask_after", "zero": "mask_zero", "inverted": "mask_inverted",
                      "added": "mask_added", "none": "no_mask"}.get(masking),
                     {"own": "own_mask", "both": "adds_causal", "transposed": "mask_transposed"}.get(source),
                     {"none": "no_scale", "dk": "scale_dk"}.get(scale)]
            return [name for name in names if name]
    return None


def attention(fn) -> Verdict:
    """``fn(Q, K, V, mask)`` -> out (N, T, d_v): scaled, masked before, softmax on dim=-1.

    It runs twice: with the causal mask, and with a mask that is not causal.
    """
    Q, K, V, causal = attention_inputs()
    masks = (causal, OTHER_MASK)
    outs = []
    for mask in masks:
        try:
            out = _first(fn(Q.clone(), K.clone(), V.clone(), mask.clone()))
        except Exception as error:  # noqa: BLE001 - a student's code can raise anything
            return _raised(error, {"must match the size": "is K transposed with transpose(-2, -1)?"})
        want = reference.attention(Q, K, V, mask)[0]
        out = torch.as_tensor(out)
        if out.shape != want.shape:
            return _wrong({"shape": f"your output has shape {tuple(out.shape)}; for Q, K of shape "
                                    f"{tuple(Q.shape)} and V of shape {tuple(V.shape)} it should be "
                                    f"{tuple(want.shape)}, one value-sized row per query."})
        outs.append(out)
    if all(_close(out, reference.attention(Q, K, V, mask)[0]) for out, mask in zip(outs, masks)):
        return _right("the scores are scaled by sqrt(d_k), masked with -inf before the "
                      "softmax, and normalised across the keys (dim=-1).")
    names = _attention_mistakes(outs, Q, K, V, masks)
    if names:
        return _wrong({name: ATTENTION_MISTAKES[name] for name in names})
    return _wrong({"unknown": "your output differs from softmax(Q K^T / sqrt(d_k)) V with "
                              "the mask, and not in a way this check recognises. Compare it line "
                              "by line with the slide's four lines."})


# --- 3. shapes through multi-head attention ----------------------------------------------

def split_heads(fn) -> Verdict:
    """``fn(x, H)``: (N, T, d) -> (N, H, T, d/H), each head a slice of the features."""
    N, T, d, H = 2, 3, 8, 2
    x = torch.arange(N * T * d, dtype=torch.float32).view(N, T, d)
    want = reference.split_heads(x, H)  # (N, H, T, d/H)
    try:
        got = fn(x.clone(), H)
    except Exception as error:  # noqa: BLE001
        return _raised(error)
    if got.shape == (N, T, H, d // H):
        return _wrong({"no_transpose": f"your heads are on axis 2, shape {tuple(got.shape)}: "
                                       "transpose(1, 2) puts them next to the batch, so the "
                                       "matmuls treat each head as its own problem."})
    if got.shape != want.shape:
        return _wrong({"shape": f"your result has shape {tuple(got.shape)}; it should be "
                                f"(N, H, T, d/H) = {tuple(want.shape)}."})
    if torch.equal(got, want):
        return _right("view(N, T, H, d/H) cuts each token's features into H groups, and "
                      "transpose(1, 2) moves the heads next to the batch: (N, H, T, d/H).")
    if torch.equal(got, x.view(N, H, T, d // H)) or torch.equal(got, x.reshape(N, H, T, d // H)):
        return _wrong({"view_without_transpose": "the shape is right and the contents are not: "
                       "view(N, H, T, d/H) reads the memory in the wrong order, so a 'head' holds "
                       "pieces of several tokens. View as (N, T, H, d/H), then transpose(1, 2)."})
    # view(N, T, d/H, H) puts the head axis last: head h gets features h, h + H, h + 2H, ...
    if torch.equal(got, x.view(N, T, d // H, H).permute(0, 3, 1, 2)):
        return _wrong({"interleaved": "each head holds every H-th feature, not a block of d/H "
                                      "neighbouring ones: view(N, T, d/H, H) puts the axes the "
                                      "wrong way round. View as (N, T, H, d/H), then transpose(1, 2)."})
    return _wrong({"unknown": "the shape is right, but head h does not hold features "
                              "h*d/H to (h+1)*d/H - 1 of every token."})


def merge_heads(fn) -> Verdict:
    """``fn(out)``: (N, H, T, d/H) -> (N, T, d), the heads' outputs side by side."""
    N, H, T, d_h = 2, 2, 3, 4
    x = torch.arange(N * H * T * d_h, dtype=torch.float32).view(N, H, T, d_h)
    want = reference.merge_heads(x)  # (N, T, d)
    try:
        got = fn(x.clone())
    except Exception as error:  # noqa: BLE001
        return _raised(error, {"view size is not compatible": "after transpose(1, 2) the tensor "
                                                              "is not contiguous: use reshape"})
    if got.shape == (N, T, H, d_h):
        return _wrong({"no_merge": f"your result has shape {tuple(got.shape)}: the heads are "
                                   "next to the tokens, not yet side by side. reshape(N, T, d) "
                                   "after the transpose joins them."})
    if got.shape != want.shape:
        return _wrong({"shape": f"your result has shape {tuple(got.shape)}; it should be "
                                f"(N, T, d) = {tuple(want.shape)}."})
    if torch.equal(got, want):
        return _right("transpose(1, 2) brings the tokens back next to the batch, and "
                      "reshape puts each token's H head outputs side by side: (N, T, d).")
    if torch.equal(got, x.reshape(N, T, H * d_h)):
        return _wrong({"reshape_without_transpose": "the shape is right and the contents are "
                       "not: reshape(N, T, d) straight from (N, H, T, d/H) mixes tokens. "
                       "transpose(1, 2) first, then reshape."})
    # permute(0, 2, 3, 1) puts the head axis last: the features of the heads interleave
    if torch.equal(got, x.permute(0, 2, 3, 1).reshape(N, T, H * d_h)):
        return _wrong({"interleaved": "the heads' features interleave (head 0's first, head 1's "
                                      "first, ...) instead of sitting side by side: the head "
                                      "axis must come before the feature axis. transpose(1, 2), "
                                      "then reshape(N, T, d)."})
    return _wrong({"unknown": "the shape is right, but token t's row is not its H heads' "
                              "outputs side by side."})


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
}


def _padding_pattern(hidden, lengths, T):
    """(name, causal) of the pattern ``hidden`` (N, H, T, T) matches, or (None, False)."""
    q = torch.arange(T)[None, None, :, None]
    k = torch.arange(T)[None, None, None, :]
    L = lengths[:, None, None, None]
    padding = {"right": k >= L, "inverted": k < L, "off_by_one_late": k > L,
               "off_by_one_early": k >= L - 1, "masks_queries": q >= L,
               "nothing": torch.zeros(1, 1, T, T, dtype=torch.bool)}
    for causal in (False, True):
        for name, hide in padding.items():
            if causal:
                hide = hide | (k > q)
            if torch.equal(hidden, hide.expand_as(hidden)):
                return ("only_causal" if causal and name == "nothing" else name), causal
    return None, False


def padding_mask(fn) -> Verdict:
    """``fn(lengths, T)`` -> a mask that broadcasts against scores (N, H, T, T), 1 on real keys.

    It may also carry the causal mask, as Exercise 3's answer does: shape (N, 1, T, T).
    """
    H = 2  # N = 3 sequences in each probe, so that a mask of shape (N, T) cannot broadcast
    # The second probe has no full-length row and pads past the longest sequence.
    probes = ((torch.tensor([3, 5, 2]), 5), (torch.tensor([2, 4, 1]), 6))
    causal = set()
    for lengths, T in probes:
        N = len(lengths)
        try:
            mask = torch.as_tensor(fn(lengths.clone(), T))
        except Exception as error:  # noqa: BLE001
            return _raised(error)
        if mask.is_floating_point() and (mask < -1e3).any():
            return _wrong({"additive": "your mask holds -inf (or a large negative number) on the "
                                       "padding: that is an additive mask, to add to the scores. "
                                       "Here the mask is 1 on real keys and 0 on padding, used as "
                                       "scores.masked_fill(mask == 0, float('-inf'))."})
        scores = torch.zeros(N, H, T, T)
        try:
            masked = scores.masked_fill(mask == 0, float("-inf"))
        except RuntimeError:
            return _padding_shape(mask, lengths, T, scores.shape)
        if masked.shape != scores.shape:
            return _wrong({"shape": f"your mask of shape {tuple(mask.shape)} makes the scores "
                                    f"{tuple(masked.shape)}, not (N, H, T, T) = {tuple(scores.shape)}."})
        name, with_causal = _padding_pattern(masked.isinf(), lengths, T)
        if name is None:
            return _wrong({"unknown": "your mask does not hide exactly the padded keys of each "
                                      "sequence: sequence n has lengths[n] real tokens, then padding."})
        if name == "nothing":  # a mask of ones: nothing to name but that
            return _wrong({"unknown": "your mask hides nothing: the padded keys still get weight."})
        if name != "right":
            return _wrong({name: PADDING_MISTAKES[name]})
        causal.add(with_causal)
    if causal == {True}:
        return _right("your mask hides the padded keys of each sequence, and also carries the "
                      "causal mask, so it hides exactly the future too; shape (N, 1, T, T) "
                      "broadcasts over the heads.")
    if causal == {False}:
        return _right("shape (N, 1, 1, T) broadcasts over the heads and the queries, and "
                      "hides the padded keys of each sequence.")
    return _wrong({"unknown": "your mask carries the causal mask for some lengths and not for others."})


def _padding_shape(mask, lengths, T, shape) -> Verdict:
    """The verdict on a mask that does not broadcast against scores of ``shape``."""
    N = len(lengths)
    if tuple(mask.shape) == (N, T):
        return _wrong({"no_axes": f"your mask has shape {tuple(mask.shape)}: against scores "
                       f"of shape (N, H, T, T) it lines up with the last two axes, not with "
                       "the batch. Give it shape (N, 1, 1, T): mask[:, None, None, :]."})
    if tuple(mask.shape) == (N, 1, T):
        return _wrong({"one_axis": f"your mask has shape {tuple(mask.shape)}, which would do for "
                       "one head's scores (N, T, T); against (N, H, T, T) its batch axis lines up "
                       "with the heads. Add one more: mask[:, None, None, :], (N, 1, 1, T)."})
    longest = int(lengths.max())
    if mask.dim() and mask.shape[-1] == longest != T:
        return _wrong({"max_length": f"your mask has {longest} positions, lengths.max(), not "
                       f"T = {T}: a batch can be padded past its longest sequence. Use torch.arange(T)."})
    return _wrong({"shape": f"a mask of shape {tuple(mask.shape)} does not broadcast "
                            f"against scores of shape {tuple(shape)}."})


# --- 4. a generation loop -----------------------------------------------------------------

class FakeLM(torch.nn.Module):
    """A stand-in language model whose next-token logits depend only on the current token.

    It records, for every call, the context length, ``self.training`` and whether
    autograd was on; it refuses contexts longer than ``cfg.block_size``, as the GPT does.
    """

    LOGITS = torch.tensor([[2.0, 1.0, 0.4, 0.0, -1.0],   # after token 0
                           [0.0, -1.0, 3.0, 1.5, 0.5],   # after token 1: no ties, so top k shows
                           [1.0, 1.0, 1.0, 1.0, 1.0],    # ...
                           [0.0, 2.0, 0.0, 0.0, 0.0],
                           [0.0, 0.0, 0.0, 2.0, 0.0]])

    def __init__(self, block_size: int = 4):
        super().__init__()
        self.cfg = SimpleNamespace(block_size=block_size, vocab_size=len(self.LOGITS))  # as gpt.GPT
        self.weight = torch.nn.Parameter(torch.zeros(()))  # so that autograd has a graph to keep
        self.calls: list[tuple[int, bool, bool]] = []

    def forward(self, idx):
        N, T = idx.shape
        self.calls.append((T, self.training, torch.is_grad_enabled()))
        if T > self.cfg.block_size:
            raise ValueError(f"sequence of {T} tokens, block_size is {self.cfg.block_size}")
        return self.LOGITS[idx] + self.weight  # (N, T, V)


class ChainLM(torch.nn.Module):
    """A stand-in whose next token is fixed by everything it has read, up to ``cfg.block_size``.

    Position t's logits put all their weight (a margin of 30) on (3 * the sum of tokens 0..t
    + 1) mod V: causal, as a GPT is, and a loop that keeps the last block_size tokens, the
    first ones, or one token fewer writes a different continuation. Sampling at temperature 1
    is then deterministic.
    """

    V = 11

    def __init__(self, block_size: int = 4):
        super().__init__()
        self.cfg = SimpleNamespace(block_size=block_size, vocab_size=self.V)
        self.weight = torch.nn.Parameter(torch.zeros(()))

    @classmethod
    def next_token(cls, tokens: list[int]) -> int:
        return (3 * sum(tokens) + 1) % cls.V

    def forward(self, idx):
        if idx.shape[1] > self.cfg.block_size:
            raise ValueError(f"sequence of {idx.shape[1]} tokens, block_size is {self.cfg.block_size}")
        nxt = (3 * idx.cumsum(1) + 1) % self.V  # (N, T)
        return 30 * F.one_hot(nxt, self.V).float() + self.weight  # (N, T, V)


def _chain(prompt: list[int], steps: int, block_size: int, crop: str, position: int) -> list[int]:
    """What a loop that crops this way and reads this position writes after ``prompt``."""
    idx = list(prompt)
    for _ in range(steps):
        context = {"last": idx[-block_size:], "first": idx[:block_size],
                   "short": idx[-(block_size - 1):]}[crop]
        idx.append(ChainLM.next_token(context if position == -1 else context[:1]))
    return idx


def _distribution(logits, temperature, top_k, pick="sample", temperature_op="divide",
                  top_k_op="right"):
    """The next-token distribution a loop with these choices samples from, for one row."""
    if pick == "argmax":
        return F.one_hot(logits.argmax(), len(logits)).float()
    z = {"divide": logits / temperature, "multiply": logits * temperature,
         "ignored": logits}[temperature_op]
    if top_k and top_k_op != "ignored":
        k = top_k + 1 if top_k_op == "off_by_one" else top_k
        threshold = torch.topk(z, min(k, len(z))).values[-1]
        # "<=" at the threshold drops the k-th largest too, and keeps k - 1
        z = z.masked_fill(z <= threshold if top_k_op == "one_short" else z < threshold, float("-inf"))
    return torch.softmax(z, dim=-1)


# Each sampling choice, and the name of the mistake it makes if it is not the first.
SAMPLING_CHOICES = {"position": {-1: None, 0: "first_position"},
                    "pick": {"sample": None, "argmax": "argmax"},
                    "temperature_op": {"divide": None, "multiply": "temperature_multiplied",
                                       "ignored": "temperature_ignored"},
                    "top_k_op": {"right": None, "ignored": "top_k_ignored",
                                 "off_by_one": "top_k_off_by_one", "one_short": "top_k_one_short"}}


def _sampling_variants():
    """Every combination of the choices: (mistake names, keyword arguments)."""
    keys = list(SAMPLING_CHOICES)
    for values in itertools.product(*(SAMPLING_CHOICES[key] for key in keys)):
        choice = dict(zip(keys, values))
        plain = (choice["temperature_op"], choice["top_k_op"]) == ("divide", "right")
        if choice["pick"] == "argmax" and not plain:
            continue  # argmax ignores the temperature and top k
        names = tuple(SAMPLING_CHOICES[key][value] for key, value in choice.items()
                      if SAMPLING_CHOICES[key][value])
        yield names, choice


GENERATION_MISTAKES = {
    "argmax": "you always take the likeliest token (argmax): sample it with "
              "torch.multinomial(probs, 1), or every run of the loop writes the same thing.",
    "temperature_multiplied": "you multiply the logits by the temperature: divide them, so "
                              "that a temperature below 1 sharpens the distribution.",
    "temperature_ignored": "the temperature changes nothing: divide the logits by it before "
                           "the softmax (dividing the probabilities after it does nothing, "
                           "since multinomial renormalises).",
    "top_k_ignored": "tokens outside the top k are still drawn: set their logits to "
                     "-inf before the softmax.",
    "top_k_off_by_one": "you keep one token too many: keep the k largest logits, the "
                        "threshold being the k-th largest (torch.topk(logits, k).values[:, [-1]]).",
    "top_k_one_short": "you keep one token too few, k - 1: the k-th largest logit is the "
                       "threshold and stays in. Hide the logits strictly below it, "
                       "logits < threshold, not <=.",
    "softmax_dim": "your tokens are drawn uniformly, whatever the model's logits: the softmax "
                   "runs over dim=0, the batch (for a single sequence it turns every logit "
                   "into 1). Normalise across the vocabulary: torch.softmax(logits, dim=-1).",
    "first_position": "you sample from the logits of the first position: the next token is "
                      "predicted by the last one, model(idx)[:, -1, :].",
    "no_crop": "the context grows past the model's block_size and the model refuses it: crop "
               "it to the last block_size tokens, idx[:, -model.cfg.block_size:], before each call.",
    "crop_first": "you keep the first block_size tokens: the model then predicts what follows "
                  "the start of the text, again and again. Keep the last ones, "
                  "idx[:, -model.cfg.block_size:].",
    "crop_short": "you crop the context to block_size - 1 tokens: the model takes block_size, "
                  "so give it idx[:, -model.cfg.block_size:].",
    "crop_overwrites": "your result loses the start of the prompt: the loop overwrites idx with "
                       "the cropped context. Crop into a new name, context = "
                       "idx[:, -model.cfg.block_size:], give that to the model, and append "
                       "each new token to idx.",
    "context": "once the sequence is longer than block_size, your tokens are not the ones the "
               "model predicts from the last block_size tokens: crop with "
               "idx[:, -model.cfg.block_size:] and read the last position.",
    "train_mode": "the model ran in training mode: call model.eval() first, or dropout keeps "
                  "switching off parts of the network while you sample.",
    "grad": "autograd was on: wrap the loop in torch.no_grad(), or every step keeps its graph "
            "in memory for a backward pass that never comes.",
}


def _shape_line(shape, T: int, steps: int, starts: bool) -> str:
    return (f"for a (1, {T}) prompt and {steps} steps the result should be the prompt followed "
            f"by {steps} tokens, shape (1, {T + steps}); yours has shape {tuple(shape)}"
            + (" and does not start with the prompt" if not starts else "") + ".")


def _crop_mistakes(fn) -> dict[str, str] | Verdict:
    """Run the loop past block_size on ChainLM: {mistake: line}, or a Verdict if it raised."""
    prompt, block_size, steps = [3, 1, 4, 1, 5, 9], 4, 4  # the prompt is already too long
    with torch.random.fork_rng():
        torch.manual_seed(0)
        try:
            out = torch.as_tensor(fn(ChainLM(block_size).eval(), torch.tensor([prompt]), steps))
        except ValueError as error:
            if "block_size" not in str(error):
                return _raised(error)
            return {"no_crop": GENERATION_MISTAKES["no_crop"]}
        except Exception as error:  # noqa: BLE001
            return _raised(error)
    if tuple(out.shape) == (1, block_size + 1):
        return {"crop_overwrites": GENERATION_MISTAKES["crop_overwrites"]}
    starts = out.dim() == 2 and out.shape[1] >= len(prompt) and out[0, :len(prompt)].tolist() == prompt
    if tuple(out.shape) != (1, len(prompt) + steps) or not starts:
        return {"shape": _shape_line(out.shape, len(prompt), steps, starts)}
    got = out[0].tolist()
    for crop, position in itertools.product(("last", "first", "short"), (-1, 0)):
        if got == _chain(prompt, steps, block_size, crop, position):
            # reading the first position is named by the sampling, where it shows alone
            return {} if crop == "last" else {f"crop_{crop}": GENERATION_MISTAKES[f"crop_{crop}"]}
    return {"context": GENERATION_MISTAKES["context"]}


def _sampling_mistakes(fn) -> dict[str, str] | Verdict:
    """Draw 4000 next tokens at three settings; name the simplest choices that explain them."""
    # The prompt's first and last tokens predict different things.
    prompt = torch.tensor([[1, 0]]).repeat(4000, 1)  # (4000, 2)
    settings = ((0.5, None), (1.0, 2), (2.0, 3))
    seen = []
    for temperature, top_k in settings:
        with torch.random.fork_rng():
            torch.manual_seed(1)
            try:
                drawn = torch.as_tensor(fn(FakeLM(block_size=8).eval(), prompt.clone(), 1,
                                           temperature=temperature, top_k=top_k))[:, -1]
            except Exception as error:  # noqa: BLE001
                return _raised(error)
        seen.append(torch.bincount(drawn, minlength=5).float() / len(drawn))
        if 0.5 * (seen[-1] - 0.2).abs().sum().item() <= 0.05:  # uniform over the 5 tokens
            # a softmax over the batch of identical rows: a top k then gives NaN and raises
            return {"softmax_dim": GENERATION_MISTAKES["softmax_dim"]}
    fits = []  # (number of mistakes, total distance, names) for the variants within 0.05 everywhere
    for names, choice in _sampling_variants():
        row = FakeLM.LOGITS[0 if choice["position"] == -1 else 1]  # last token 0, first token 1
        gaps = [0.5 * (s - _distribution(row, temperature, top_k, choice["pick"],
                                         choice["temperature_op"], choice["top_k_op"])).abs().sum().item()
                for s, (temperature, top_k) in zip(seen, settings)]
        if max(gaps) <= 0.05:
            fits.append((len(names), sum(gaps), names))
    if fits:
        return {name: GENERATION_MISTAKES[name] for name in min(fits)[2]}
    for s, (temperature, top_k) in zip(seen, settings):
        right = _distribution(FakeLM.LOGITS[0], temperature, top_k)
        if 0.5 * (s - right).abs().sum().item() > 0.05:
            return {"unknown": f"at temperature {temperature} and top_k {top_k} your tokens come "
                               f"out with frequencies {[round(f, 2) for f in s.tolist()]}; the "
                               f"model's logits give {[round(p, 2) for p in right.tolist()]}."}
    return {"unknown": "your tokens' frequencies match no single way of sampling."}


def generate(fn) -> Verdict:
    """``fn(model, idx, steps, temperature=1.0, top_k=None)`` -> idx (N, T + steps), sampled."""
    found = _crop_mistakes(fn)
    if isinstance(found, Verdict):
        return found
    start = torch.tensor([[3, 1, 4]])  # (1, 3)
    model = FakeLM(block_size=64)
    model.train()  # as a model is after training; the loop must switch it off
    with torch.random.fork_rng():
        torch.manual_seed(0)
        try:
            out = torch.as_tensor(fn(model, start.clone(), 3))
        except Exception as error:  # noqa: BLE001
            return _raised(error)
    starts = out.dim() == 2 and out.shape[1] >= 3 and torch.equal(out[:, :3], start)
    if tuple(out.shape) != (1, 6) or not starts:
        return _wrong({"shape": _shape_line(out.shape, 3, 3, starts)})
    if any(training for _, training, _ in model.calls):
        found["train_mode"] = GENERATION_MISTAKES["train_mode"]
    if any(grad for _, _, grad in model.calls):
        found["grad"] = GENERATION_MISTAKES["grad"]
    sampling = _sampling_mistakes(fn)
    if isinstance(sampling, Verdict):
        return sampling
    if sampling:  # a sampling mistake also changes the tokens past block_size: name it alone
        found.pop("context", None)
    found.update(sampling)
    if found:
        return _wrong(found)
    return _right("the loop crops the context to its last block_size tokens, runs the model in "
                  "eval mode without autograd, divides the last position's logits by the "
                  "temperature, keeps the top k and samples.")


# --- 5. surprisal -------------------------------------------------------------------------

def _surprisal_candidates(logits, idx, want):
    """(mistake, the numbers it gives, the line that names it), the right answer first."""
    logp = torch.log_softmax(logits, dim=-1)[0]  # (T, V)
    score = lambda lp, tokens: -lp.gather(1, tokens[:, None])[:, 0] / math.log(2)
    own = ("each position's logits are scored against its own token: position t predicts "
           "token t+1, so take logp[0, :-1] against idx[0, 1:].")
    return [
        ("right", want, ""),
        ("nats", want * math.log(2), "your numbers are in nats: divide by math.log(2) for bits."),
        ("log10", want * math.log10(2), "you used log base 10: bits are log base 2 "
                                        "(divide the natural log by math.log(2))."),
        ("sign", -want, "your surprisal is negative: it is minus the log probability."),
        ("no_shift", score(logp[1:], idx[0, 1:]), own),
        ("no_shift", score(logp[:-1], idx[0, :-1]), own),
        ("shift_reversed", score(logp[1:], idx[0, :-1]),
         "each position's logits are scored against the token before it: position t predicts "
         "token t+1, so take logp[0, :-1] against idx[0, 1:]."),
        ("probabilities", -torch.softmax(logits, -1)[0, :-1].gather(1, idx[0, 1:, None])[:, 0]
         / math.log(2), "you took probabilities, not log probabilities: use torch.log_softmax."),
        ("wrong_axis", score(torch.log_softmax(logits, dim=1)[0, :-1], idx[0, 1:]),
         "your log_softmax normalises over the positions (dim=1): it must run over the "
         "vocabulary, dim=-1."),
        ("wrong_axis", torch.zeros_like(want),
         "your surprisals are all 0: the log_softmax runs over dim=0, the batch, which has one "
         "row, so every log probability is log 1. It must run over the vocabulary, dim=-1."),
    ]


SURPRISAL_TOTALS = {
    "sum": "you return one number, the total: the exercise asks for one surprisal per token "
           "after the first, a vector of T-1 numbers. Drop the .sum().",
    "mean": "you return one number, the average (the cross-entropy loss): the exercise asks "
            "for one surprisal per token after the first, a vector of T-1 numbers. Drop the .mean().",
}


def surprisal(fn) -> Verdict:
    """``fn(logits, idx)`` with logits (1, T, V), idx (1, T) -> (T-1,) bits, one per next token."""
    g = torch.Generator().manual_seed(0)
    T, V = 6, 7
    logits, idx = torch.randn(1, T, V, generator=g) * 2, torch.randint(0, V, (1, T), generator=g)
    want = lm.surprisal(lambda _: logits, idx)[0]  # (T-1,) bits: the package's, on these logits
    try:
        got = torch.as_tensor(fn(logits.clone(), idx.clone())).reshape(-1)
    except Exception as error:  # noqa: BLE001
        return _raised(error, {"same number of dimensions": "idx has shape (1, T): its tokens "
                                                            "are idx[0, 1:], not idx[1:]"})
    if _close(got, want):
        return _right("position t's logits score token t+1, and -log_softmax / ln 2 is the "
                      "surprisal in bits.")
    candidates = _surprisal_candidates(logits, idx, want)
    for name, value, line in candidates[1:]:
        if _close(got, value):
            return _wrong({name: line})
    if got.numel() == 1:  # a total or an average of the right numbers, or of a mistake's
        for (name, value, line), (total, reduce) in itertools.product(
                candidates, (("sum", torch.sum), ("mean", torch.mean))):
            if _close(got, reduce(value).reshape(1)):
                found = {} if name == "right" else {name: line}
                return _wrong({**found, total: SURPRISAL_TOTALS[total]})
    if got.numel() == 0:
        return _wrong({"batch_axis": "your result is empty: idx has shape (1, T), so idx[1:] "
                                     "slices the batch axis, which has one row. Index the tokens: "
                                     "idx[0, 1:], and logits[0, :-1]."})
    logp = torch.log_softmax(logits, dim=-1)[0]
    if _close(got, -logp.gather(1, idx[0, :, None])[:, 0] / math.log(2)):
        return _wrong({"no_shift": candidates[4][2]})
    if got.numel() == T:
        return _wrong({"length": f"you return {T} numbers for {T} tokens: the first token has no "
                                 f"prediction, so there are T-1 = {T - 1} surprisals."})
    return _wrong({"unknown": f"your {got.numel()} numbers differ from the surprisal of each "
                              f"next token ({T - 1} of them, in bits)."})


# --- 7. the reparameterisation -----------------------------------------------------------

REPARAMETERIZE_MISTAKES = {
    "logvar_as_sigma": "your z spreads by logvar itself: logvar is the log of the variance, so "
                       "sigma = torch.exp(0.5 * logvar).",
    "variance_as_sigma": "your z spreads by exp(logvar), the variance: its square root is the "
                         "standard deviation, torch.exp(0.5 * logvar).",
    "log_sigma": "your z spreads by exp(logvar) squared: exp(2 * logvar) reads logvar as "
                 "log sigma, but it is log sigma^2, so sigma = torch.exp(0.5 * logvar).",
    "no_noise": "your z is mu, with no noise: add sigma * eps with eps = torch.randn_like(mu), or "
                "the code is a point and the KL has nothing to pull on.",
    "no_mean": "your z does not centre on mu: z = mu + sigma * eps.",
    "no_gradient": "no gradient reaches mu and logvar (torch.normal(mu, sigma), for one, "
                   "records a path back whose gradient is exactly zero, without a warning). "
                   "Draw eps = torch.randn_like(mu), which needs no gradient, and return "
                   "mu + sigma * eps.",
    "shared_eps": "every row gets the same noise: draw eps of mu's shape, torch.randn_like(mu).",
}


def reparameterize(fn) -> Verdict:
    """``fn(mu, logvar)`` -> z (N, Z): mu + exp(0.5 * logvar) * eps, eps ~ N(0, I), with
    gradients reaching mu and logvar."""
    N, Z = 20_000, 2
    mu = torch.tensor([1.5, -2.0]).repeat(N, 1).requires_grad_()  # (N, Z): one posterior, N draws
    logvar = torch.tensor([0.8, -1.2]).repeat(N, 1).requires_grad_()
    with torch.random.fork_rng():
        torch.manual_seed(0)
        try:
            z = torch.as_tensor(fn(mu, logvar))
        except Exception as error:  # noqa: BLE001
            return _raised(error)
    if z.shape != mu.shape:
        return _wrong({"shape": f"your z has shape {tuple(z.shape)}; it should be mu's, "
                                f"{tuple(mu.shape)}."})
    sample = z.detach().double()
    mean, spread = sample.mean(0), sample.std(0)  # per latent dimension, over the N draws
    lv = logvar[0].detach().double()
    # the spread each reading of logvar gives: exp(0.5 lv) is right
    sd = [torch.exp(0.5 * lv), torch.exp(lv), torch.exp(2 * lv), lv.abs()]
    if torch.all(spread < 1e-6):  # every row the same z
        name = "no_noise" if torch.allclose(mean, mu[0].detach().double(), atol=1e-5) else "shared_eps"
        return _wrong({name: REPARAMETERIZE_MISTAKES[name]})
    near = lambda a, b: bool(torch.all((a - b).abs() <= 0.05 * b.abs() + 0.03))  # 20,000 draws: ~1 %
    found = {}
    if not near(mean, mu[0].detach().double()):
        found["no_mean"] = REPARAMETERIZE_MISTAKES["no_mean"]
    names = ["right", "variance_as_sigma", "log_sigma", "logvar_as_sigma"]
    match = next((name for name, want in zip(names, sd) if near(spread, want)), None)
    if match is None:
        found["unknown"] = (f"your z spreads by {[round(v, 3) for v in spread.tolist()]} per "
                            f"dimension; exp(0.5 * logvar) is {[round(v, 3) for v in sd[0].tolist()]}.")
    elif match != "right":
        found[match] = REPARAMETERIZE_MISTAKES[match]
    if z.requires_grad:
        z.sum().backward()
    reached = lambda x: x.grad is not None and bool(x.grad.abs().sum() > 0)
    # (a z without mu gives mu no gradient either; "no_mean" already says so)
    if not reached(logvar) or ("no_mean" not in found and not reached(mu)):
        found["no_gradient"] = REPARAMETERIZE_MISTAKES["no_gradient"]
    if found:
        return _wrong(found)
    return _right("z = mu + exp(0.5 * logvar) * eps with eps ~ N(0, I): the right spread, and "
                  "gradients reach mu and logvar through it.")


# --- 8. one generative objective ----------------------------------------------------------

def _scalar(result, how: str) -> float | str:
    """A loss as a float, or a sentence saying why it is not one number and how to make it one."""
    value = torch.as_tensor(_first(result))
    if value.numel() != 1:
        return (f"your loss has shape {tuple(value.shape)}, one number per example or per entry: "
                f"return one number, {how}.")
    return float(value)


def _vae_terms(xhat, x, mu, logvar):
    """(name, value) of the reconstruction terms and of the KLs, the slide's first in each."""
    xhat, x, mu, lv = (v.double() for v in (xhat, x, mu, logvar))
    error = xhat - x
    recon = [("right", error.pow(2).sum()),
             ("recon_half", 0.5 * error.pow(2).sum()),
             ("recon_l1", error.abs().sum()),
             ("recon_norm", error.norm()),
             ("recon_bce", F.binary_cross_entropy(xhat, x, reduction="sum"))]
    inner = lambda log_var, var, one=1.0, m2=mu.pow(2): (one + log_var - m2 - var).sum()
    kl = [("right", -0.5 * inner(lv, lv.exp())),
          ("kl_sign", 0.5 * inner(lv, lv.exp())),
          ("kl_half", -inner(lv, lv.exp())),  # the 0.5 missing
          ("kl_factor", inner(lv, lv.exp())),  # the -0.5 missing
          ("logvar_as_log_sigma", -0.5 * inner(2 * lv, (2 * lv).exp())),
          ("logvar_as_log_sigma", -0.5 * inner(lv, (2 * lv).exp())),
          ("logvar_as_sigma", -0.5 * inner(lv, lv.pow(2))),
          ("logvar_as_sigma", -0.5 * inner(lv.pow(2).log(), lv.pow(2))),
          ("kl_missing_one", -0.5 * inner(lv, lv.exp(), one=0.0)),
          ("kl_mu_squared", -0.5 * inner(lv, lv.exp(), m2=mu))]
    return recon, kl


VAE_MISTAKES = {
    "recon_half": "your squared error is halved (the Gaussian log-likelihood's 1/2): the slide's "
                  "term is F.mse_loss(xhat, x, reduction='sum'), with no 0.5.",
    "recon_l1": "your reconstruction term is the absolute error: the slide's is the squared "
                "error, F.mse_loss(xhat, x, reduction='sum').",
    "recon_norm": "your reconstruction term is the norm of the error, a square root: the slide's "
                  "is the squared error, F.mse_loss(xhat, x, reduction='sum').",
    "recon_bce": "your reconstruction term is the binary cross-entropy: the slide's is the squared "
                 "error, F.mse_loss(xhat, x, reduction='sum').",
    "recon": "your reconstruction term is not the squared error between xhat and x: "
             "F.mse_loss(xhat, x, reduction='sum').",
    "kl_sign": "your KL is negative: the closed form is -0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl_half": "your KL is twice the closed form: it starts with -0.5, "
               "-0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl_factor": "your KL is -2 times the right one: the closed form starts with -0.5.",
    "logvar_as_log_sigma": "your KL reads logvar as log sigma (exp(2 * logvar) as the variance): "
                           "logvar is already the log of the variance, so the variance is "
                           "exp(logvar), -0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "logvar_as_sigma": "your KL reads logvar as sigma itself (logvar**2 as the variance): it is "
                       "the log of the variance, so the variance is exp(logvar), "
                       "-0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl_missing_one": "your KL lacks the 1 inside the sum: -0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl_mu_squared": "your KL has mu where mu^2 belongs: -0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "kl": "your KL term differs from the slide's closed form, "
          "-0.5 * sum(1 + logvar - mu^2 - exp(logvar)).",
    "no_beta": "beta changes nothing: the loss is recon + beta * kl.",
    "beta_squared": "your loss grows with beta squared (at beta = 2 the KL counts 4 times): "
                    "the loss is recon + beta * kl, beta once.",
    "beta_nonlinear": "doubling beta does not double the KL's share of your loss: the loss is "
                      "recon + beta * kl.",
    "beta_on_recon": "beta multiplies the reconstruction term: it weighs the KL, recon + beta * kl.",
    "beta_one_minus": "you weigh the two terms by (1 - beta) and beta: the slide's loss is "
                      "recon + beta * kl, with the reconstruction term's weight fixed at 1.",
}


def _explain(value: float, terms, divisors):
    """(name, divisor) of the first term / divisor equal to ``value``, or None."""
    for (name, term), divisor in itertools.product(terms, divisors):
        if math.isclose(value, float(term) / divisor, rel_tol=1e-4, abs_tol=1e-7):
            return name, divisor
    return None


def vae_loss(fn) -> Verdict:
    """``fn(xhat, x, mu, logvar, beta)`` -> the slide's loss: summed MSE + beta * KL.

    Any reduction shared by both terms keeps beta's meaning and is accepted: the sum, or the
    sum divided by N, by D or by N*D.
    """
    g = torch.Generator().manual_seed(0)
    N, D, Z = 4, 64, 3  # Z = 3: no KL divisor is twice another, so a missing 0.5 stays visible
    x, xhat = torch.rand(N, D, generator=g), torch.rand(N, D, generator=g)
    mu, logvar = torch.randn(N, Z, generator=g), torch.randn(N, Z, generator=g) * 0.5
    at = {}
    for beta in (0.0, 1.0, 0.3, 2.0):
        try:
            at[beta] = _scalar(fn(xhat.clone(), x.clone(), mu.clone(), logvar.clone(), beta),
                               "summed over the batch as the slide's is (reduction='sum', or .sum())")
        except Exception as error:  # noqa: BLE001
            return _raised(error)
        if isinstance(at[beta], str):
            return _wrong({"not_scalar": at[beta]})
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)
    # The loss is linear in beta: at beta = 0 it is the reconstruction term alone.
    recon, kl = at[0.0], at[1.0] - at[0.0]
    if not all(close(at[b], recon + b * kl) for b in (0.3, 2.0)):
        if all(close(at[b], recon + b * b * kl) for b in (0.3, 2.0)):
            return _wrong({"beta_squared": VAE_MISTAKES["beta_squared"]})
        return _wrong({"beta_nonlinear": VAE_MISTAKES["beta_nonlinear"]})
    if abs(kl) < 1e-6:
        return _wrong({"no_beta": VAE_MISTAKES["no_beta"]})
    recon_terms, kl_terms = _vae_terms(xhat, x, mu, logvar)
    recon_divisors, kl_divisors = (1, N, D, N * D), (1, N, Z, N * Z, D, N * D)
    r, k = _explain(recon, recon_terms, recon_divisors), _explain(kl, kl_terms, kl_divisors)
    if r is None or k is None:
        if _explain(recon, kl_terms, kl_divisors) and _explain(kl, recon_terms, recon_divisors):
            return _wrong({"beta_on_recon": VAE_MISTAKES["beta_on_recon"]})
        if r and _explain(kl + recon, kl_terms, kl_divisors):
            return _wrong({"beta_one_minus": VAE_MISTAKES["beta_one_minus"]})
        scale = recon / float(recon_terms[0][1])  # both terms times the same unusual number
        if math.isclose(kl, scale * float(kl_terms[0][1]), rel_tol=1e-4):
            return _wrong({"scale": f"your loss is the slide's times {scale:.3g}: the same factor on "
                                    "both terms keeps beta's meaning, but the slide sums them, "
                                    "recon + beta * kl (dividing both by N, by D or by N*D is fine too)."})
        return _wrong({name: VAE_MISTAKES[name] for name, term in (("recon", r), ("kl", k)) if term is None})
    found = {name: VAE_MISTAKES[name] for name, _ in (r, k) if name != "right"}
    (_, r_div), (_, k_div) = r, k
    factor = r_div / k_div  # how many times more the KL weighs than the formula's beta says
    if r_div == N * D and k_div == N * Z:
        found["mean_both"] = (f"you average each term over its own entries: the squared error over "
                              f"N*D = {N * D} numbers, the KL over N*Z = {N * Z}, so beta weighs the "
                              f"KL D/Z = {factor:.3g} times more than you set. Sum over the pixels and "
                              "the latent dimensions; averaging both over the batch is fine.")
    elif r_div == N * D and k_div != r_div:
        found["mean"] = (f"your reconstruction term is the mean over all N*D = {N * D} numbers "
                         "(F.mse_loss's default, reduction='mean'), so beta weighs the KL "
                         f"{factor:g} times more than you set. Use reduction='sum'.")
    elif k_div != r_div:
        found["reduction"] = (f"the two terms are reduced differently, so beta weighs the KL "
                              f"{factor:g} times what you set: sum both, as the slide does.")
    if found:
        return _wrong(found)
    note = {1: "", N: " (you average both over the batch, which keeps beta's meaning)",
            D: " (you divide both by the D pixels, which keeps beta's meaning)",
            N * D: " (you divide both by N*D, which keeps beta's meaning)"}[r_div]
    return _right("the squared error and the KL reduced the same way, so beta is the "
                  f"exchange rate the formula says{note}.")


DIFFUSION_XT = {
    "paper_t": "x_t uses abar[t-1], the paper's numbering: in the code t runs from 0 to T-1 and "
               "abar[t] is already the product of the first t+1 alphas (at t = 0, abar[t-1] is "
               "abar[-1], the last step).",
    "no_sqrt": "x_t uses abar and 1 - abar where their square roots belong.",
    "sqrt_one_term": "x_t takes the square root of one coefficient and not the other: both are "
                     "square roots, sqrt(abar[t]) on x0 and sqrt(1 - abar[t]) on eps.",
    "swapped": "x_t puts sqrt(1 - abar) on x0 and sqrt(abar) on the noise: swapped.",
    "cumprod_again": "x_t uses the cumulative product of abar: abar is already the product of "
                     "the alphas (torch.cumprod(1 - betas, 0)), so index it as it is, abar[t].",
    "alpha_t": "x_t uses one step's alpha_t = abar[t] / abar[t-1]: the closed form jumps from x0 "
               "in one go, with the product of all the steps so far, abar[t].",
    "abar_as_beta": "x_t treats abar as the betas (cumprod(1 - abar)): abar is already the "
                    "cumulative product of the alphas, so use abar[t] itself.",
    "model_x0": "the model is given x0, the clean data: give it the noisy x_t, or it never sees "
                "the noise it must predict.",
    "fresh_eps": "your x_t changes from one run to the next: you draw new noise (torch.randn_like) "
                 "instead of using the eps you are given, so the loss cannot compare the model's "
                 "guess with the noise that went into x_t. Use the argument eps.",
    "xt": "your x_t is not sqrt(abar[t]) * x0 + sqrt(1 - abar[t]) * eps, row by row "
          "(abar[t].sqrt()[:, None]).",
}


def _diffusion_xts(x0, t, eps, abar) -> list[tuple[str, torch.Tensor]]:
    """(name, x_t) for the right closed form and each way of getting it wrong."""
    blend = lambda a, b: a[:, None] * x0 + b[:, None] * eps
    jump = lambda a: blend(a.sqrt(), (1 - a).sqrt())  # the closed form with a for abar[t]
    a = abar[t]
    alpha_t = torch.where(t > 0, abar[t] / abar[(t - 1).clamp(min=0)], abar[0])
    return [("right", diffusion.q_sample(x0, t, eps, abar)),
            ("paper_t", jump(abar[t - 1])),  # t = 0 wraps to abar[-1]
            ("no_sqrt", blend(a, 1 - a)),
            ("sqrt_one_term", blend(a.sqrt(), 1 - a)),
            ("sqrt_one_term", blend(a, (1 - a).sqrt())),
            ("swapped", blend((1 - a).sqrt(), a.sqrt())),
            ("cumprod_again", jump(torch.cumprod(abar, 0)[t])),
            ("alpha_t", jump(alpha_t)),
            ("abar_as_beta", jump(torch.cumprod(1 - abar, 0)[t])),
            ("model_x0", x0)]


def _diffusion_run(fn, seed, inputs, guess):
    """Run ``fn`` once with a fake denoiser: (what the model saw, the loss)."""
    seen = {}

    def model(xt, t_in=None):
        seen["xt"] = torch.as_tensor(xt).detach().clone()
        seen["t"] = None if t_in is None else torch.as_tensor(t_in).detach().clone()
        return guess

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        loss = fn(model, *(v.clone() for v in inputs))
    return seen, loss


def _model_t(seen_t, other_t, t) -> dict[str, str]:
    """The mistake in the t the model was given, if any. (N,) or (N, 1) are both fine."""
    if seen_t is None:
        return {"no_t": "the model is not given t: call model(x_t, t), so that it knows how much "
                        "noise to look for."}
    if other_t is not None and not torch.equal(seen_t, other_t):
        return {"fresh_t": "the model's t changes from one run to the next: you draw new steps "
                           "(torch.randint) instead of using the t you are given."}
    if seen_t.numel() == len(t):
        given = seen_t.reshape(-1).double()
        if torch.equal(given, t.double()):
            return {}
        if torch.equal(given, (t + 1).double()):
            return {"model_paper_t": "the model is given t + 1, the paper's numbering: give it the "
                                     "same t that indexes abar, or training and sampling disagree."}
    return {"model_t": "the model is not given the step t of each example."}


def diffusion_loss(fn) -> Verdict:
    """``fn(model, x0, t, eps, abar)`` -> the slide's MSE between model(x_t, t) and eps.

    It runs twice, with different random seeds: noise or steps drawn inside the function,
    instead of the eps and t given, change between the runs.
    """
    g = torch.Generator().manual_seed(0)
    N, D, T = 6, 2, 50
    x0, eps = torch.randn(N, D, generator=g), torch.randn(N, D, generator=g)
    t = torch.tensor([0, 3, 10, 20, 35, 49])
    abar = torch.cumprod(1 - torch.linspace(1e-3, 0.2, T), dim=0)
    guess = torch.randn(N, D, generator=g)  # what the fake denoiser answers
    runs = []
    for seed in (0, 1):
        try:
            runs.append(_diffusion_run(fn, seed, (x0, t, eps, abar), guess))
        except IndexError as error:
            return _raised(error, {"out of bounds": "t runs from 0 to T-1 in the code: abar[t] "
                                                    "with the paper's t = T is past the end"})
        except Exception as error:  # noqa: BLE001
            return _raised(error, {"must match the size": "abar[t] has shape (N,): index it "
                                                          "[:, None] so it scales each row of x0"})
    (seen, loss), (again, _) = runs
    if "xt" not in seen:
        return _wrong({"no_model": "your function never calls the model on x_t and t."})
    found = _model_t(seen["t"], again.get("t"), t)
    if "fresh_t" in found:
        pass  # x_t moves with the steps drawn: the runs say nothing about the noise
    elif not torch.equal(seen["xt"], again["xt"]):
        found["fresh_eps"] = DIFFUSION_XT["fresh_eps"]
    else:
        match = next((name for name, xt in _diffusion_xts(x0, t, eps, abar)
                      if _close(seen["xt"], xt)), "xt")
        if match != "right":
            found[match] = DIFFUSION_XT[match]
    value = _scalar(loss, "the mean: F.mse_loss's default, reduction='mean', or .mean()")
    if isinstance(value, str):
        found["not_scalar"] = value
    elif "fresh_eps" not in found:
        known_xt = not {"xt", "fresh_t"} & set(found)
        found.update(_diffusion_target(value, guess, eps, x0, seen["xt"], known_xt))
    if found:
        return _wrong(found)
    return _right("x_t from the closed form at the code's t, and the mean squared error "
                  "between the model's guess and the noise that was added.")


def _diffusion_target(loss: float, guess, eps, x0, xt, known_xt: bool) -> dict[str, str]:
    """The mistake in what the loss compares the model's guess with, and how it reduces."""
    targets = [("right", F.mse_loss(guess, eps)),
               ("target_x0", F.mse_loss(guess, x0)),
               ("target_xt", F.mse_loss(guess, xt)),
               ("target_sum", F.mse_loss(guess, eps, reduction="sum")),
               ("target_sum", (guess - eps).pow(2).sum(1).mean())]
    lines = {"target_x0": "the loss compares the prediction with x0: predict the noise you added, eps.",
             "target_xt": "the loss compares the prediction with x_t, the model's own input: "
                          "predict the noise you added, eps.",
             "target_sum": "the loss is summed; the slide's F.mse_loss averages, which keeps "
                           "the step size independent of the batch."}
    name = next((name for name, v in targets if math.isclose(loss, v.item(), rel_tol=1e-4)), None)
    if name is None:
        return {"loss": "the loss is not F.mse_loss(model(x_t, t), eps)."} if known_xt else {}
    return {} if name == "right" else {name: lines[name]}
