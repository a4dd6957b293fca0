"""Exercise 5: the surprisal of each next token, in bits, ``check.surprisal(fn)``."""

from __future__ import annotations

import math

import torch

from rec11 import lm
from rec11.check.core import (
    GRAD_LEAK,
    Case,
    Verdict,
    battery,
    case_name,
    close,
    first_difference,
    named,
    raised,
    right,
    run,
    wrong,
)


def _sentence(seed, T, V, spread=2.0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(1, T, V, generator=g, dtype=dtype) * spread  # (1, T, V)
    idx = torch.randint(0, V, (1, T), generator=g)  # (1, T)
    return logits, idx


@battery("surprisal")
def cases() -> list[Case]:
    rows = [(1, 2, 5, 2.0, torch.float32), (0, 6, 7, 2.0, torch.float32),
            (2, 9, 4, 2.0, torch.float32), (3, 7, 6, 5.0, torch.float32),
            (4, 5, 11, 2.0, torch.float64)]
    return [Case(lambda r=r: _sentence(*r),
                 f"{'float64 ' if r[4] is torch.float64 else ''}logits (1, {r[1]}, {r[2]})"
                 f"{', large' if r[3] > 2 else ''}")
            for r in rows]


def _score(logp, tokens):
    """-log p of each token under its row of log probabilities, in bits."""
    return -logp.gather(1, tokens[:, None])[:, 0] / math.log(2)


def _right(logits, idx):
    return lm.surprisal(lambda _: logits, idx)[0]  # (T-1,) bits


def _bits(fn):
    """A variant from a function of (log probabilities (T, V), tokens (T,))."""
    return lambda logits, idx: fn(torch.log_softmax(logits, dim=-1)[0], idx[0])


OWN = ("each position's logits are scored against its own token: position t predicts "
       "token t+1, so take logp[0, :-1] against idx[0, 1:].")
MISTAKES = {
    "nats": "your numbers are in nats: divide by math.log(2) for bits.",
    "log10": "you used log base 10: bits are log base 2 (divide the natural log by math.log(2)).",
    "sign": "your surprisal is negative: it is minus the log probability.",
    "no_shift": OWN,
    "shift_reversed": "each position's logits are scored against the token before it: "
                      "position t predicts token t+1, so take logp[0, :-1] against idx[0, 1:].",
    "probabilities": "you took probabilities, not log probabilities: use torch.log_softmax.",
    "wrong_axis": "your log_softmax normalises over the wrong axis: over dim=1, the "
                  "positions, or over dim=0, the batch, which has one row, so that every log "
                  "probability is log 1 = 0. It must run over the vocabulary, dim=-1.",
    "sum": "you return one number, the total: the exercise asks for one surprisal per token "
           "after the first, a vector of T-1 numbers. Drop the .sum().",
    "mean": "you return one number, the average (the cross-entropy loss): the exercise asks "
            "for one surprisal per token after the first, a vector of T-1 numbers. "
            "Drop the .mean().",
}


def _variants():
    singles = {
        "nats": lambda lg, ix: _right(lg, ix) * math.log(2),
        "log10": lambda lg, ix: _right(lg, ix) * math.log10(2),
        "sign": lambda lg, ix: -_right(lg, ix),
        "no_shift": _bits(lambda lp, t: _score(lp[1:], t[1:])),
        "shift_reversed": _bits(lambda lp, t: _score(lp[1:], t[:-1])),
        "probabilities": lambda lg, ix: (
            -torch.softmax(lg, -1)[0, :-1].gather(1, ix[0, 1:, None])[:, 0] / math.log(2)),
    }
    yield ["wrong_axis"], lambda lg, ix: _score(torch.log_softmax(lg, dim=1)[0, :-1], ix[0, 1:])
    yield ["wrong_axis"], lambda lg, ix: _score(torch.log_softmax(lg, dim=0)[0, :-1], ix[0, 1:])
    yield [], _right  # the right numbers, summed or averaged, below
    yield ["no_shift"], _bits(lambda lp, t: _score(lp[:-1], t[:-1]))
    yield ["no_shift"], _bits(lambda lp, t: _score(lp, t))  # all T tokens, each its own
    yield from (([name], fn) for name, fn in singles.items())


def _totals():
    """Every variant, and its total and its mean: one number, not T-1."""
    for names, fn in _variants():
        if names:
            yield names, fn
        yield [*names, "sum"], lambda lg, ix, fn=fn: fn(lg, ix).sum().reshape(1)
        yield [*names, "mean"], lambda lg, ix, fn=fn: fn(lg, ix).mean().reshape(1)


def surprisal(fn) -> Verdict:
    """``fn(logits, idx)`` with logits (1, T, V), idx (1, T) -> (T-1,) bits, one per next token.

    Five sentences, from one surprisal (T = 2) to float64 and large logits.
    """
    battery_, student, wanted, args = cases(), [], [], []
    for k, case in enumerate(battery_):
        logits, idx = case.make()
        ran = run(fn, (logits, idx))
        if ran.error is not None:
            return raised(ran.error, case_name("surprisal", k, case), {
                "same number of dimensions": "idx has shape (1, T): its tokens are idx[0, 1:], "
                                             "not idx[1:]"})
        if ran.grad_leaked:
            return wrong({"grad_leak": GRAD_LEAK})
        try:
            got = torch.as_tensor(ran.value).detach().reshape(-1)
        except (TypeError, ValueError, RuntimeError):
            return wrong({"type": f"your function returned a {type(ran.value).__name__}: "
                                  "return a tensor of T-1 numbers."})
        student.append(got)
        wanted.append(_right(logits, idx))
        args.append(case.make())
    bad = [k for k, (s, w) in enumerate(zip(student, wanted)) if not close(s, w)]
    if not bad:
        return right("position t's logits score token t+1, and -log_softmax / ln 2 is the "
                     "surprisal in bits, on every sentence tried.")
    names = named(student, _totals(), args, wanted)
    if names:
        return wrong({name: MISTAKES[name] for name in names})
    k = bad[0]
    got, want = student[k], wanted[k]
    where = case_name("surprisal", k, battery_[k])
    if got.numel() == 0:
        return wrong({"batch_axis": f"on {where} your result is empty: idx has shape "
                                          "(1, T), so idx[1:] slices the batch axis, which has "
                                          "one row. Index the tokens: idx[0, 1:], and "
                                          "logits[0, :-1]."})
    if got.numel() == want.numel() + 1:
        return wrong({"length": f"on {where} you return {got.numel()} numbers for "
                                f"{got.numel()} tokens: the first token has no prediction, "
                                "so there are T-1 surprisals."})
    return wrong({"differs": f"on {where} your numbers differ from the surprisal of each next "
                             f"token in bits: {first_difference(got, want)}. Try: logits, idx = "
                             f"check.inputs('surprisal', {k}), and work out the first number "
                             "by hand."})
