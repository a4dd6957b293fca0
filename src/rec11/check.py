"""Checks for the Exercises page: each runs a student's function and names the mistake.

    from rec11 import check
    check.attention(my_attention)

A check runs the function on small fixed inputs and compares what comes back with the
right answer and with each classic mistake: the softmax over the wrong axis, the mask
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
    "mask_after": "your rows do not sum to 1: the mask is applied after the softmax. "
                  "Fill the forbidden scores with -inf before it, so the weights that "
                  "remain are renormalised.",
    "mask_zero": "forbidden keys still get weight: you fill their scores with 0, and "
                 "e^0 = 1 is not zero. Fill them with float('-inf').",
    "mask_inverted": "you hide the allowed keys and keep the forbidden ones: the mask is "
                     "1 where attention is allowed, so fill where mask == 0.",
    "no_mask": "positions see the future: the mask is never applied.",
    "no_scale": "your scores are not divided by sqrt(d_k): at d_k = 16 they are 4 times "
                "too large, and the softmax saturates as d_k grows.",
    "scale_dk": "you divide by d_k, not sqrt(d_k): the scores come out too small.",
}


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


def attention(fn) -> Verdict:
    """``fn(Q, K, V, mask)`` -> out (N, T, d_v): scaled, masked before, softmax on dim=-1."""
    Q, K, V, mask = attention_inputs()
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
    if _close(out, want):
        return _right("the scores are scaled by sqrt(d_k), masked with -inf before the "
                      "softmax, and normalised across the keys (dim=-1).")
    for dim, scale, masking in itertools.product((-1, -2), ("sqrt", "none", "dk"),
                                                 ("before", "after", "zero", "inverted", "none")):
        if _close(out, _attention_variant(Q, K, V, mask, dim, scale, masking)):
            found = {}
            if dim == -2:
                found["dim"] = ATTENTION_MISTAKES["dim"]
            if masking != "before":
                name = {"after": "mask_after", "zero": "mask_zero", "inverted": "mask_inverted",
                        "none": "no_mask"}[masking]
                found[name] = ATTENTION_MISTAKES[name]
            if scale != "sqrt":
                name = {"none": "no_scale", "dk": "scale_dk"}[scale]
                found[name] = ATTENTION_MISTAKES[name]
            return _wrong(found)
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
    return _wrong({"unknown": "the shape is right, but token t's row is not its H heads' "
                              "outputs side by side."})


def padding_mask(fn) -> Verdict:
    """``fn(lengths, T)`` -> a mask that broadcasts against scores (N, H, T, T), 1 on real keys."""
    lengths, T, H = torch.tensor([3, 5, 2]), 5, 2
    N = len(lengths)
    want = (torch.arange(T)[None, :] < lengths[:, None])[:, None, None, :]  # (N, 1, 1, T)
    try:
        mask = torch.as_tensor(fn(lengths.clone(), T))
    except Exception as error:  # noqa: BLE001
        return _raised(error)
    scores = torch.zeros(N, H, T, T)
    try:
        masked = scores.masked_fill(mask == 0, float("-inf"))
    except RuntimeError:
        if mask.shape == (N, T):
            return _wrong({"no_axes": f"your mask has shape {tuple(mask.shape)}: against scores "
                           f"of shape (N, H, T, T) it lines up with the last two axes, not with "
                           "the batch. Give it shape (N, 1, 1, T): mask[:, None, None, :]."})
        return _wrong({"shape": f"a mask of shape {tuple(mask.shape)} does not broadcast "
                                f"against scores of shape {tuple(scores.shape)}."})
    if masked.shape != scores.shape:
        return _wrong({"shape": f"your mask of shape {tuple(mask.shape)} makes the scores "
                                f"{tuple(masked.shape)}, not (N, H, T, T) = {tuple(scores.shape)}."})
    A = torch.softmax(masked, dim=-1)
    if torch.isnan(A).any():
        return _wrong({"masks_queries": "some rows of the weights are NaN: your mask hides every "
                       "key from the padded queries, and the softmax of a row of -inf is 0/0. "
                       "Mask the keys (the last axis): shape (N, 1, 1, T)."})
    if torch.equal(masked.isinf(), want.expand(N, H, T, T).logical_not()):
        return _right("shape (N, 1, 1, T) broadcasts over the heads and the queries, and "
                      "hides the padded keys of each sequence.")
    if torch.equal(masked.isinf(), want.expand(N, H, T, T)):
        return _wrong({"inverted": "you hide the real tokens and keep the padding: the mask "
                                   "is 1 where attention is allowed."})
    return _wrong({"unknown": "your mask does not hide exactly the padded keys of each "
                              "sequence: sequence n has lengths[n] real tokens, then padding."})


# --- 4. a generation loop -----------------------------------------------------------------

class FakeLM(torch.nn.Module):
    """A stand-in language model whose next-token logits depend only on the current token.

    It records, for every call, the context length, ``self.training`` and whether
    autograd was on; it refuses contexts longer than ``cfg.block_size``, as the GPT does.
    """

    LOGITS = torch.tensor([[2.0, 1.0, 0.4, 0.0, -1.0],   # after token 0
                           [0.0, 0.0, 3.0, 0.0, 0.0],    # after token 1
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


def _sampling_candidates(logits, temperature, top_k):
    """{mistake: next-token distribution} for one row of logits."""

    def dist(z, k):
        z = z.clone()
        if k:
            z[z < torch.topk(z, min(k, len(z))).values[-1]] = float("-inf")
        return torch.softmax(z, dim=-1)

    out = {"right": dist(logits / temperature, top_k),
           "argmax": F.one_hot(logits.argmax(), len(logits)).float(),
           "temperature_multiplied": dist(logits * temperature, top_k),
           "temperature_ignored": dist(logits, top_k),
           "top_k_ignored": dist(logits / temperature, None)}
    if top_k:
        out["top_k_off_by_one"] = dist(logits / temperature, top_k + 1)
    return out


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
    "first_position": "you sample from the logits of the first position: the next token is "
                      "predicted by the last one, model(idx)[:, -1, :].",
}


def generate(fn) -> Verdict:
    """``fn(model, idx, steps, temperature=1.0, top_k=None)`` -> idx (N, T + steps), sampled."""
    found: dict[str, str] = {}
    start = torch.tensor([[3, 1, 4]])  # (1, 3)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        try:  # 3 tokens and a block_size of 4: the context must be cropped by the second step
            fn(FakeLM(block_size=4).eval(), start.clone(), 3)
        except ValueError as error:
            if "block_size" not in str(error):
                return _raised(error)
            found["no_crop"] = ("the context grows past the model's block_size and the model "
                                "refuses it: crop it to the last block_size tokens, "
                                "idx[:, -model.cfg.block_size:], before each call.")
        except Exception as error:  # noqa: BLE001
            return _raised(error)
        model = FakeLM(block_size=64)
        model.train()  # as a model is after training; the loop must switch it off
        try:
            out = fn(model, start.clone(), 3)
        except Exception as error:  # noqa: BLE001
            return _raised(error)
    if tuple(out.shape) != (1, 6) or not torch.equal(out[:, :3], start):
        return _wrong({"shape": "for a (1, 3) prompt and 3 steps the result should be the "
                                "prompt followed by 3 tokens, shape (1, 6); yours has shape "
                                f"{tuple(out.shape)}" + ("" if tuple(out.shape) != (1, 6) else
                                                         " and does not start with the prompt")
                                + "."})
    if any(training for _, training, _ in model.calls):
        found["train_mode"] = ("the model ran in training mode: call model.eval() first, or "
                               "dropout keeps switching off parts of the network while you sample.")
    if any(grad for _, _, grad in model.calls):
        found["grad"] = ("autograd was on: wrap the loop in torch.no_grad(), or every step keeps "
                         "its graph in memory for a backward pass that never comes.")
    # The sampling itself: 4000 rows, one step each, from a prompt whose first and last
    # tokens predict different things, at three settings.
    prompt = torch.tensor([[1, 0]]).repeat(4000, 1)  # (4000, 2)
    for temperature, top_k in ((0.5, None), (1.0, 2), (2.0, 3)):
        with torch.random.fork_rng():
            torch.manual_seed(1)
            try:
                drawn = fn(FakeLM(block_size=8).eval(), prompt.clone(), 1,
                           temperature=temperature, top_k=top_k)[:, -1]
            except Exception as error:  # noqa: BLE001
                return _raised(error)
        seen = torch.bincount(drawn, minlength=5).float() / len(drawn)
        candidates = {}  # (mistakes, ...): the distribution they would sample from
        for position, row in (((), 0), (("first_position",), 1)):  # last token 0, first token 1
            for name, p in _sampling_candidates(FakeLM.LOGITS[row], temperature, top_k).items():
                candidates[position + ((name,) if name != "right" else ())] = p
        distance = {names: 0.5 * (seen - p).abs().sum().item() for names, p in candidates.items()}
        nearest = min(distance, key=distance.get)
        if distance[nearest] > 0.05:
            right = [round(p, 2) for p in candidates[()].tolist()]
            found["unknown"] = (f"at temperature {temperature} and top_k {top_k} your tokens come "
                                f"out with frequencies {[round(f, 2) for f in seen.tolist()]}; "
                                f"the model's logits give {right}.")
            break
        found.update({name: GENERATION_MISTAKES[name] for name in nearest})
    if found:
        return _wrong(found)
    return _right("the loop crops the context, runs the model in eval mode without "
                  "autograd, divides the last position's logits by the temperature, keeps the "
                  "top k and samples.")


# --- 5. surprisal -------------------------------------------------------------------------

def surprisal(fn) -> Verdict:
    """``fn(logits, idx)`` with logits (1, T, V), idx (1, T) -> (T-1,) bits, one per next token."""
    g = torch.Generator().manual_seed(0)
    T, V = 6, 7
    logits, idx = torch.randn(1, T, V, generator=g) * 2, torch.randint(0, V, (1, T), generator=g)
    want = lm.surprisal(lambda _: logits, idx)[0]  # (T-1,) bits: the package's, on these logits
    try:
        got = torch.as_tensor(fn(logits.clone(), idx.clone())).reshape(-1)
    except Exception as error:  # noqa: BLE001
        return _raised(error)
    if _close(got, want):
        return _right("position t's logits score token t+1, and -log_softmax / ln 2 is the "
                      "surprisal in bits.")
    logp = torch.log_softmax(logits, dim=-1)
    candidates = {
        "nats": (want * math.log(2), "your numbers are in nats: divide by math.log(2) for bits."),
        "log10": (want * math.log10(2), "you used log base 10: bits are log base 2 "
                                         "(divide the natural log by math.log(2))."),
        "sign": (-want, "your surprisal is negative: it is minus the log probability."),
        "no_shift": (-logp[0, 1:].gather(1, idx[0, 1:, None])[:, 0] / math.log(2),
                     "each position's logits are scored against its own token: position t "
                     "predicts token t+1, so take logp[0, :-1] against idx[0, 1:]."),
        "probabilities": (-torch.softmax(logits, -1)[0, :-1].gather(1, idx[0, 1:, None])[:, 0]
                          / math.log(2), "you took probabilities, not log probabilities: "
                                         "use torch.log_softmax."),
        "wrong_axis": (-torch.log_softmax(logits, dim=1)[0, :-1].gather(1, idx[0, 1:, None])[:, 0]
                       / math.log(2), "your log_softmax normalises over the positions (dim=1): "
                                      "it must run over the vocabulary, dim=-1."),
    }
    for name, (value, line) in candidates.items():
        if _close(got, value):
            return _wrong({name: line})
    if got.numel() == T:
        return _wrong({"length": f"you return {T} numbers for {T} tokens: the first token has no "
                                 f"prediction, so there are T-1 = {T - 1} surprisals."})
    return _wrong({"unknown": f"your {got.numel()} numbers differ from the surprisal of each "
                              f"next token ({T - 1} of them, in bits)."})


# --- 7. one generative objective ----------------------------------------------------------

def vae_loss(fn) -> Verdict:
    """``fn(xhat, x, mu, logvar, beta)`` -> the slide's loss: summed MSE + beta * KL."""
    g = torch.Generator().manual_seed(0)
    N, D, Z = 4, 64, 2
    x, xhat = torch.rand(N, D, generator=g), torch.rand(N, D, generator=g)
    mu, logvar = torch.randn(N, Z, generator=g), torch.randn(N, Z, generator=g) * 0.5
    try:
        at = {beta: float(_first(fn(xhat, x, mu, logvar, beta))) for beta in (0.0, 1.0)}
    except Exception as error:  # noqa: BLE001
        return _raised(error)
    # The loss is linear in beta: at beta = 0 it is the reconstruction term alone.
    recon, kl = at[0.0], at[1.0] - at[0.0]
    _, recon_sum, kl_sum = (float(term) for term in vae.vae_loss(xhat, x, mu, logvar))  # the slide's
    r, k = recon / recon_sum, kl / kl_sum  # each term against the slide's, summed
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-4)
    if close(k, -1):
        return _wrong({"kl_sign": "your KL is negative: the closed form is "
                                  "-0.5 * sum(1 + logvar - mu^2 - exp(logvar))."})
    if close(k, -2):
        return _wrong({"kl_factor": "your KL is -2 times the right one: the closed form "
                                    "starts with -0.5."})
    if abs(k) < 1e-6:
        return _wrong({"no_beta": "beta changes nothing: the loss is recon + beta * kl."})
    if not any(close(r, 1 / n) for n in (1, N, N * D)):
        return _wrong({"recon": "your reconstruction term is not the squared error between "
                                "xhat and x: F.mse_loss(xhat, x, reduction='sum')."})
    if not any(close(k, 1 / n) for n in (1, N, N * Z)):
        return _wrong({"kl": "your KL term differs from the slide's closed form, "
                             "-0.5 * sum(1 + logvar - mu^2 - exp(logvar))."})
    factor = k / r  # how many times more the KL weighs than the formula's beta says
    if close(factor, 1):
        note = "" if close(r, 1) else " (you average both over the batch, which keeps beta's meaning)"
        return _right("the squared error and the KL reduced the same way, so beta is the "
                      f"exchange rate the formula says{note}.")
    if close(r, 1 / (N * D)):
        return _wrong({"mean": f"your reconstruction term is the mean over all N*D = {N * D} "
                               "numbers (F.mse_loss's default, reduction='mean'), so beta weighs "
                               f"the KL {factor:g} times more than you set. Use reduction='sum'."})
    return _wrong({"reduction": f"the two terms are reduced differently, so beta weighs the KL "
                                f"{factor:g} times what you set: sum both, as the slide does."})


def diffusion_loss(fn) -> Verdict:
    """``fn(model, x0, t, eps, abar)`` -> the slide's MSE between model(x_t, t) and eps."""
    g = torch.Generator().manual_seed(0)
    N, D, T = 6, 2, 50
    x0, eps = torch.randn(N, D, generator=g), torch.randn(N, D, generator=g)
    t = torch.tensor([0, 3, 10, 20, 35, 49])
    abar = torch.cumprod(1 - torch.linspace(1e-3, 0.2, T), dim=0)
    guess = torch.randn(N, D, generator=g)  # what the fake denoiser answers
    seen = {}

    def model(xt, t_in):
        seen["xt"], seen["t"] = xt.detach().clone(), torch.as_tensor(t_in).clone()
        return guess

    try:
        loss = float(fn(model, x0.clone(), t.clone(), eps.clone(), abar.clone()))
    except IndexError as error:
        return _raised(error, {"out of bounds": "t runs from 0 to T-1 in the code: abar[t] with "
                                                "the paper's t = T is past the end"})
    except Exception as error:  # noqa: BLE001
        return _raised(error, {"must match the size": "abar[t] has shape (N,): index it "
                                                      "[:, None] so it scales each row of x0"})
    if "xt" not in seen:
        return _wrong({"no_model": "your function never calls the model on x_t and t."})
    found = {}
    blend = lambda a, b: a[:, None] * x0 + b[:, None] * eps
    xts = {"right": diffusion.q_sample(x0, t, eps, abar),
           "paper_t": blend(abar[t - 1].sqrt(), (1 - abar[t - 1]).sqrt()),  # t = 0 wraps to abar[-1]
           "no_sqrt": blend(abar[t], 1 - abar[t]),
           "swapped": blend((1 - abar[t]).sqrt(), abar[t].sqrt())}
    lines = {"paper_t": "x_t uses abar[t-1], the paper's numbering: in the code t runs from 0 "
                        "to T-1 and abar[t] is already the product of the first t+1 alphas "
                        "(at t = 0, abar[t-1] is abar[-1], the last step).",
             "no_sqrt": "x_t uses abar and 1 - abar where their square roots belong.",
             "swapped": "x_t puts sqrt(1 - abar) on x0 and sqrt(abar) on the noise: swapped."}
    match = next((name for name, value in xts.items() if _close(seen["xt"], value)), None)
    if match is None:
        found["xt"] = ("your x_t is not sqrt(abar[t]) * x0 + sqrt(1 - abar[t]) * eps, row by "
                       "row (abar[t].sqrt()[:, None]).")
    elif match != "right":
        found[match] = lines[match]
    if seen["t"].shape == t.shape and torch.equal(seen["t"], t + 1):
        found["model_paper_t"] = ("the model is given t + 1, the paper's numbering: give it the "
                                  "same t that indexes abar, or training and sampling disagree.")
    elif seen["t"].shape != t.shape or not torch.equal(seen["t"], t):
        found["model_t"] = "the model is not given the step t of each example."
    targets = {"right": F.mse_loss(guess, eps).item(),
               "x0": F.mse_loss(guess, x0).item(),
               "sum": F.mse_loss(guess, eps, reduction="sum").item()}
    target = next((k for k, v in targets.items() if math.isclose(loss, v, rel_tol=1e-4)), None)
    if target == "x0":
        found["target_x0"] = "the loss compares the prediction with x0: predict the noise you added, eps."
    elif target == "sum":
        found["target_sum"] = ("the loss is summed; the slide's F.mse_loss averages, which keeps "
                               "the step size independent of the batch.")
    elif target is None and "xt" not in found:
        found["loss"] = "the loss is not F.mse_loss(model(x_t, t), eps)."
    if found:
        return _wrong(found)
    return _right("x_t from the closed form at the code's t, and the mean squared error "
                  "between the model's guess and the noise that was added.")
