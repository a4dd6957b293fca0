"""Exercise 4: a generation loop, ``check.generate(fn)``.

Two kinds of case. On ``ChainLM`` the next token is fixed by the context, so what a loop
writes shows how it crops the context, row by row in a batch of different prompts. On
``FakeLM`` the next token is drawn from known probabilities, so the frequencies of
12,000 draws at four settings of temperature and top k show how the loop samples: the
rows of the batch differ, and the logits are unsorted, with ties away from the top-k
boundary.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import torch
import torch.nn.functional as F

from rec11.check.core import GRAD_LEAK, Case, Verdict, battery, case_name, raised, right, run, wrong


class FakeLM(torch.nn.Module):
    """A stand-in language model whose next-token logits depend only on the last token.

    It records, for every call, the context length, ``self.training`` and whether
    autograd was on; it refuses contexts longer than ``cfg.block_size``, as the GPT does.
    """

    # Rows differ and are unsorted; ties sit outside the top 2 and top 3, never across
    # their boundary, where "top k" would be ambiguous.
    LOGITS = torch.tensor([[0.5, 2.0, -1.0, 1.0, 0.5, 1.5],   # after token 0
                           [1.0, -0.5, 3.0, 1.5, 0.5, 0.0],   # after token 1
                           [-1.0, -1.0, 0.2, 2.5, -1.0, 1.0],
                           [2.0, 1.5, -0.5, 0.0, 1.0, -2.0],
                           [0.3, 1.2, 0.8, -0.4, 2.2, 0.0],
                           [-0.5, 0.7, 1.9, 0.1, -1.1, 1.4]])

    def __init__(self, block_size: int = 8):
        super().__init__()
        self.cfg = SimpleNamespace(block_size=block_size, vocab_size=len(self.LOGITS))  # as gpt.GPT
        self.weight = torch.nn.Parameter(torch.zeros(()))  # so that autograd has a graph to keep
        self.calls: list[tuple[int, bool, bool]] = []

    def forward(self, idx):
        N, T = idx.shape  # noqa: RUF059
        self.calls.append((T, self.training, torch.is_grad_enabled()))
        if T > self.cfg.block_size:
            raise ValueError(f"sequence of {T} tokens, block_size is {self.cfg.block_size}")
        return self.LOGITS[idx] + self.weight  # (N, T, V)


class ChainLM(FakeLM):
    """A stand-in whose next token is fixed by everything it has read, up to ``block_size``.

    Position t's logits put all their weight (a margin of 30) on (3 * the sum of tokens 0..t
    + 1) mod V: causal, as a GPT is, and a loop that keeps the last block_size tokens, the
    first ones, or one token fewer writes a different continuation. Sampling at any
    temperature down to 0.5 is then deterministic (other tokens: under 1e-11 a draw).
    """

    V = 11

    def __init__(self, block_size: int = 4):
        super().__init__(block_size)
        self.cfg.vocab_size = self.V

    @classmethod
    def next_token(cls, tokens: list[int]) -> int:
        return (3 * sum(tokens) + 1) % cls.V

    def forward(self, idx):
        N, T = idx.shape  # noqa: RUF059
        self.calls.append((T, self.training, torch.is_grad_enabled()))
        if T > self.cfg.block_size:
            raise ValueError(f"sequence of {T} tokens, block_size is {self.cfg.block_size}")
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


# (prompts, block_size, steps, temperature, top_k) of the deterministic cases
CHAINS = [([[3, 1, 4]], 8, 3, 1.0, None),
          ([[3, 1, 4, 1, 5, 9]], 4, 4, 1.0, None),          # the prompt is already too long
          ([[2, 7, 1, 8, 2], [1, 4, 1, 4, 2], [5, 0, 5, 0, 9]], 4, 3, 1.0, 2),
          ([[6, 2], [9, 9]], 3, 5, 0.5, None)]

KINDS = torch.tensor([[4, 0], [2, 1], [5, 2], [0, 3]])  # (first token, last token) of each prompt
PER_KIND = 3_000  # draws per prompt and setting
SETTINGS = [(1.0, None), (0.5, None), (1.0, 2), (2.0, 3)]  # (temperature, top_k)
GAP = 0.12  # L1 distance a right sampler stays within (see _sampling_gaps)


def _sampling_batch() -> torch.Tensor:
    """(12,000, 2) prompts, the four kinds interleaved: row i is of kind i % 4."""
    return KINDS.repeat(PER_KIND, 1)


def _left_out(setting) -> str:
    return " (the defaults: left out of the call)" if tuple(setting) == DEFAULTS else ""


@battery("generate")
def cases() -> list[Case]:
    """(model, idx, steps, temperature, top_k): four ChainLM cases, then FakeLM's settings."""
    out = [Case(lambda c=c: (ChainLM(c[1]).train(), torch.tensor(c[0]), c[2], c[3], c[4]),
                f"{len(c[0])} prompt(s) of {len(c[0][0])} tokens, block_size {c[1]}, {c[2]} "
                f"steps, temperature {c[3]}, top_k {c[4]}{_left_out(c[3:])}")
           for c in CHAINS]
    out += [Case(lambda s=s: (FakeLM().eval(), _sampling_batch(), 1, s[0], s[1]),
                 f"12,000 prompts of 4 kinds, 1 step, temperature {s[0]}, top_k {s[1]}"
                 f"{_left_out(s)}")
            for s in SETTINGS]
    return out


MISTAKES = {
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
    "top_k_row0": "every row is cut at the first row's threshold: each sequence has its own "
                  "k-th largest logit, torch.topk(logits, k).values[:, [-1]], shape (N, 1).",
    "top_k_last_row": "every row is cut at the last row's threshold: each sequence has its own "
                      "k-th largest logit, torch.topk(logits, k).values[:, [-1]], shape (N, 1).",
    "top_k_batch": "every row is cut at one threshold taken over the whole batch (.min() or "
                   ".max() of the rows' k-th largest): each sequence has its own, "
                   "torch.topk(logits, k).values[:, [-1]], shape (N, 1).",
    "top_k_unmapped": "you sample a position in the top-k list, not a token: torch.topk "
                      "returns values and indices, and the token is indices.gather(-1, "
                      "choice) (position 0 is the largest logit, not token 0).",
    "softmax_dim": "your tokens do not follow the model's logits: the softmax runs over dim=0, "
                   "the batch, so each row's probabilities depend on the other rows. "
                   "Normalise across the vocabulary: torch.softmax(logits, dim=-1).",
    "first_position": "you sample from the logits of the first position: the next token is "
                      "predicted by the last one, model(idx)[:, -1, :].",
    "no_crop": "the context grows past the model's block_size and the model refuses it: crop "
               "it to the last block_size tokens, idx[:, -model.cfg.block_size:], before "
               "each call.",
    "crop_first": "you keep the first block_size tokens: the model then predicts what follows "
                  "the start of the text, again and again. Keep the last ones, "
                  "idx[:, -model.cfg.block_size:].",
    "crop_short": "you crop the context to block_size - 1 tokens: the model takes block_size, "
                  "so give it idx[:, -model.cfg.block_size:].",
    "crop_overwrites": "your result loses the start of the prompt: the loop overwrites idx "
                       "with the cropped context. Crop into a new name, context = "
                       "idx[:, -model.cfg.block_size:], give that to the model, and append "
                       "each new token to idx.",
    "train_mode": "the model ran in training mode: call model.eval() first, or dropout keeps "
                  "switching off parts of the network while you sample.",
    "grad": "autograd was on: wrap the loop in torch.no_grad(), or every step keeps its graph "
            "in memory for a backward pass that never comes.",
}


DEFAULTS = (1.0, None)  # (temperature, top_k) of the exercise's signature


def _call(fn, args):
    """Run ``fn`` on a case. A case at the defaults leaves them out, fn(model, idx, steps),
    as a student calls it: a default other than temperature=1.0, top_k=None then shows."""
    model, idx, steps, temperature, top_k = args
    if (temperature, top_k) == DEFAULTS:
        return run(fn, (model, idx, steps))
    return run(fn, (model, idx, steps), temperature=temperature, top_k=top_k)


HINTS = {"probability tensor contains": "are the probabilities a softmax over the vocabulary, "
                                        "dim=-1, of logits with no NaN?",
         "block_size": "crop the context to its last block_size tokens before each call"}


def generate(fn) -> Verdict:
    """``fn(model, idx, steps, temperature=1.0, top_k=None)`` -> idx (N, T + steps), sampled.

    A right loop is refused with chance below 1e-6: each of the 16 (prompt, setting) pairs
    of the sampling cases has 3,000 draws, and a right sampler's frequencies lie within an
    L1 distance of 0.12 of the model's probabilities with chance above 1 - 3e-8 (the
    Bretagnolle-Huber-Carol inequality, 2^V exp(-n 0.12^2 / 2) with V = 6).
    """
    battery_ = cases()
    found: dict[str, str] = {}
    for k, case in enumerate(battery_[:len(CHAINS)]):
        args = case.make()
        ran = _call(fn, args)
        where = case_name("generate", k, case)
        if ran.grad_leaked:
            return wrong({"grad_leak": GRAD_LEAK})
        model = args[0]
        if any(training for _, training, _ in model.calls):
            found["train_mode"] = MISTAKES["train_mode"]
        if any(grad for _, _, grad in model.calls):
            found["grad"] = MISTAKES["grad"]
        if isinstance(ran.error, ValueError) and "block_size" in str(ran.error):
            found["no_crop"] = MISTAKES["no_crop"]  # the model refused the long context
            continue
        if ran.error is not None:
            return raised(ran.error, where, HINTS)
        line = _chain_mistake(ran.value, args, where, k)
        if "context" in line:  # a sampling mistake changes the tokens too: name it alone
            sampling = _sampling_mistakes(fn, battery_[len(CHAINS):])
            if isinstance(sampling, dict) and sampling and "sampling" not in sampling:
                line = sampling
        if line:
            return wrong({**line, **found})
    sampling = _sampling_mistakes(fn, battery_[len(CHAINS):])
    if isinstance(sampling, Verdict):
        return sampling
    found.update(sampling)
    if found:
        return wrong(found)
    return right("the loop crops each row's context to its last block_size tokens, runs the "
                 "model in eval mode without autograd, divides the last position's logits by "
                 "the temperature, keeps each row's top k and samples.")


def _chain_mistake(out, args, where, k) -> dict[str, str]:
    """{} when every row is the model's continuation; else the mistake or the evidence."""
    model, idx, steps, _, _ = args
    prompts, block = idx.tolist(), model.cfg.block_size
    N, T = idx.shape
    try:
        out = torch.as_tensor(out)
    except (TypeError, ValueError, RuntimeError):
        return {"type": f"your function returned a {type(out).__name__}: return idx, a tensor."}
    if tuple(out.shape) == (N, block + 1) and T + steps != block + 1:
        return {"crop_overwrites": MISTAKES["crop_overwrites"]}
    if out.dim() != 2 or tuple(out.shape) != (N, T + steps) or not torch.equal(out[:, :T], idx):
        starts = out.dim() == 2 and out.shape[1] >= T and torch.equal(out[:N, :T], idx)
        return {"shape": f"on {where} the result should be each prompt followed by {steps} "
                         f"tokens, shape ({N}, {T + steps}); yours has shape "
                         f"{tuple(out.shape)}" + ("" if starts else " and does not start "
                                                  "with the prompts") +
                         ". Try: torch.cat([idx, nxt], dim=1) at each step, and return idx."}
    got = out.tolist()
    if got == [_chain(p, steps, block, "last", -1) for p in prompts]:
        return {}
    for crop, position in itertools.product(("last", "first", "short"), (-1, 0)):
        if got == [_chain(p, steps, block, crop, position) for p in prompts]:
            return {} if crop == "last" else {f"crop_{crop}": MISTAKES[f"crop_{crop}"]}
    n = next(i for i, (g, p) in enumerate(zip(got, prompts))
             if g != _chain(p, steps, block, "last", -1))
    want = _chain(prompts[n], steps, block, "last", -1)
    at = next(i for i, (a, b) in enumerate(zip(got[n], want)) if a != b)
    return {"context": f"on {where}, row {n} should continue as {want[T:]} (each token "
                       f"predicted from the last {block} tokens before it), and yours writes "
                       f"{got[n][T:]}: token {at} differs. Try: model, idx, steps, "
                       f"temperature, top_k = check.inputs('generate', {k}), and print the "
                       "context the model sees at each step."}


def _distribution(z, top_k, pick="sample", top_k_op="right", batch=None):
    """The next-token distribution of one row of logits ``z`` (already tempered).

    ``batch`` holds every row's tempered logits, for the mistakes that read other rows."""
    if pick == "argmax":
        return F.one_hot(z.argmax(), len(z)).double()
    if pick == "softmax_dim0":  # each row's own top k, then a softmax down the batch
        top_k = None if top_k_op == "ignored" else top_k
        cut = lambda row: row.masked_fill(row < torch.topk(row, top_k).values[-1],
                                          float("-inf")) if top_k else row
        batch = torch.stack([cut(row) for row in batch])
        counts = PER_KIND * batch.exp().sum(0)  # each kind is PER_KIND rows of the batch
        weight = cut(z).exp() / counts  # 0/0 where no row keeps a token: the loop raises
        return weight / weight.sum()
    if top_k and top_k_op != "ignored":
        if top_k_op == "unmapped":
            values = torch.topk(z, top_k).values
            return torch.cat([torch.softmax(values, -1), torch.zeros(len(z) - top_k,
                                                                     dtype=z.dtype)])
        k = top_k + 1 if top_k_op == "off_by_one" else top_k
        kth = lambda row: torch.topk(row, min(k, len(row))).values[-1]
        threshold = {"row0": lambda: kth(batch[0]), "last_row": lambda: kth(batch[-1]),
                     "batch_min": lambda: min(kth(r) for r in batch),
                     "batch_max": lambda: max(kth(r) for r in batch)}.get(top_k_op,
                                                                           lambda: kth(z))()
        hide = z <= threshold if top_k_op == "one_short" else z < threshold
        z = z.masked_fill(hide, float("-inf"))
    return torch.softmax(z, dim=-1)


SAMPLING_CHOICES = {"position": {-1: None, 0: "first_position"},
                    "pick": {"sample": None, "argmax": "argmax", "softmax_dim0": "softmax_dim"},
                    "temperature_op": {"divide": None, "multiply": "temperature_multiplied",
                                       "ignored": "temperature_ignored"},
                    "top_k_op": {"right": None, "ignored": "top_k_ignored",
                                 "off_by_one": "top_k_off_by_one", "one_short": "top_k_one_short",
                                 "row0": "top_k_row0", "last_row": "top_k_last_row",
                                 "batch_min": "top_k_batch", "batch_max": "top_k_batch",
                                 "unmapped": "top_k_unmapped"}}


def sampling_variants():
    """Every combination of the choices: (mistake names, keyword arguments)."""
    keys = list(SAMPLING_CHOICES)
    for values in itertools.product(*(SAMPLING_CHOICES[key] for key in keys)):
        choice = dict(zip(keys, values))
        plain = (choice["temperature_op"], choice["top_k_op"]) == ("divide", "right")
        if choice["pick"] == "argmax" and not plain:
            continue  # argmax ignores the temperature and top k
        if choice["pick"] == "softmax_dim0" and (choice["temperature_op"] != "divide" or
                                                 choice["top_k_op"] not in ("right", "ignored")):
            continue
        names = tuple(SAMPLING_CHOICES[key][value] for key, value in choice.items()
                      if SAMPLING_CHOICES[key][value])
        yield names, choice


def variant_distributions(choice) -> torch.Tensor:
    """(settings, kinds, V) next-token probabilities of the loop these choices make."""
    out = []
    for temperature, top_k in SETTINGS:
        rows = FakeLM.LOGITS[KINDS[:, 0 if choice["position"] == 0 else 1]].double()
        z = {"divide": rows / temperature, "multiply": rows * temperature,
             "ignored": rows}[choice["temperature_op"]]
        batch = z  # the kinds in the order the batch repeats them
        out.append(torch.stack([_distribution(row, top_k, choice["pick"], choice["top_k_op"],
                                              batch) for row in z]))
    return torch.stack(out)


def _frequencies(fn, cases) -> tuple[torch.Tensor, dict[int, Verdict]]:
    """(settings, kinds, V) frequencies of the student's next tokens, NaN where the loop
    raised, and the verdict of each setting on which it raised."""
    out, raised_at = [], {}
    V = len(FakeLM.LOGITS)
    for s, case in enumerate(cases):
        args = case.make()
        ran = _call(fn, args)
        if ran.error is not None or ran.grad_leaked:
            raised_at[s] = (raised(ran.error, case_name("generate", len(CHAINS) + s, case),
                                   HINTS) if ran.error is not None else
                            wrong({"grad_leak": GRAD_LEAK}))
            out.append(torch.full((len(KINDS), V), float("nan"), dtype=torch.float64))
            continue
        drawn = torch.as_tensor(ran.value)[:, -1].reshape(PER_KIND, len(KINDS))  # (n, kinds)
        out.append(torch.stack([torch.bincount(drawn[:, j], minlength=V)[:V].double()
                                / PER_KIND for j in range(len(KINDS))]))
    return torch.stack(out), raised_at


def _fits(seen, p) -> bool:
    """Whether frequencies ``seen`` fit probabilities ``p``: within GAP where the loop ran,
    and NaN (a loop that raises) exactly where the student's raised."""
    ran = ~seen.isnan().any(-1)  # (settings, kinds)
    valid = ~p.isnan().any(-1)
    if not torch.equal(ran.all(-1), valid.all(-1)):
        return False
    gaps = (seen - p).abs().sum(-1)
    return bool((gaps[ran] <= GAP).all())


def _sampling_mistakes(fn, cases) -> dict[str, str] | Verdict:
    """{} when every frequency is within GAP of the model's; else the named mistakes or the
    (prompt, setting) that is furthest off."""
    seen, raised_at = _frequencies(fn, cases)
    if any(isinstance(v, Verdict) and "grad_leak" in v.mistakes for v in raised_at.values()):
        return wrong({"grad_leak": GRAD_LEAK})
    right_p = variant_distributions({"position": -1, "pick": "sample",
                                     "temperature_op": "divide", "top_k_op": "right"})
    if not raised_at and _fits(seen, right_p):
        return {}
    fits = {names for names, choice in sampling_variants()
            if names and _fits(seen, variant_distributions(choice))}
    fewest = min((len(n) for n in fits), default=0)
    simplest = {n for n in fits if len(n) == fewest}
    if len(simplest) == 1:
        return {name: MISTAKES[name] for name in simplest.pop()}
    if raised_at:
        return raised_at[min(raised_at)]
    gaps = (seen - right_p).abs().sum(-1)  # (settings, kinds) L1 distances
    s, j = divmod(int(gaps.argmax()), len(KINDS))
    k = len(CHAINS) + s
    return {"sampling": f"on {case_name('generate', k, cases[s])}, after the prompt "
                        f"{KINDS[j].tolist()} your next tokens came out with frequencies "
                        f"{_rounded(seen[s, j])}, where the model's logits give "
                        f"{_rounded(right_p[s, j])}: {gaps[s, j]:.2f} apart in L1, where "
                        f"{PER_KIND:,} right draws stay within {GAP}. Try: "
                        f"model, idx, steps, temperature, top_k = check.inputs('generate', {k}),"
                        " and print your probabilities for the rows idx[:4]"
                        + (_DEFAULTS_TRY if SETTINGS[s] == DEFAULTS else ".")}


# A case at the defaults calls fn(model, idx, steps): a wrong default shows only there.
_DEFAULTS_TRY = (", with your function called as generate(model, idx, steps), as this case "
                 "calls it: are its defaults temperature=1.0, top_k=None?")


def _rounded(p) -> list[float]:
    return [round(v, 2) for v in p.tolist()]
