"""Train the tiny GPT on the grammar, sample from it, and measure its surprisal.

Because the grammar's probabilities are known exactly (``rec11.grammar``), the trained
model can be checked against the truth: its cross-entropy against the language's
entropy, and its surprisal against the exact surprisal, word by word.

Shape letters: N batch, T sequence length, V vocabulary.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field

import torch
from torch.nn import functional as F

from rec11 import cache, gpt, grammar
from rec11.seeds import shifted


@dataclass(frozen=True)
class LMConfig:
    model: gpt.GPTConfig = field(
        default_factory=lambda: gpt.GPTConfig(vocab_size=len(grammar.VOCAB))
    )
    language: grammar.GrammarConfig = grammar.GrammarConfig()  # the grammar's probabilities
    steps: int = 1500
    batch_size: int = 128  # sentences per step, each freshly drawn from the grammar
    lr: float = 3e-3
    warmup: int = 100  # steps of linear warm-up before the cosine decay
    weight_decay: float = 0.0  # fresh data every step: nothing to overfit, nothing to regularise
    n_heldout: int = 5000
    seed: int = 0


def lm_loss(model, ids, reduction: str = "mean"):
    """Cross-entropy in nats of predicting ids[:, 1:] from ids[:, :-1]; padding is no target."""
    logits = model(ids[:, :-1])  # (N, T-1, V)
    targets = ids[:, 1:]  # (N, T-1)
    return F.cross_entropy(
        logits.transpose(1, 2), targets, ignore_index=grammar.PAD_ID, reduction=reduction
    )  # scalar, or (N, T-1) with zeros at padding


@torch.no_grad()
def heldout_nats_per_token(model, ids) -> float:
    """Mean cross-entropy per predicted token (words and EOS) over the sentences in ids."""
    nll = lm_loss(model, ids, reduction="sum")
    return nll.item() / (ids[:, 1:] != grammar.PAD_ID).sum().item()


@torch.no_grad()
def exact_nats_per_token(model, cfg: grammar.GrammarConfig = grammar.GrammarConfig()) -> float:
    """The model's cross-entropy against the true distribution, over every sentence at once.

    Σ_s P(s) · (−log q(s)), divided by the mean tokens per sentence: no sampling noise,
    so (this − entropy) is exactly the model's excess, the KL per token.
    """
    ids, p = grammar.table(cfg)  # (S, T), (S,)
    # in chunks, to keep the (S, T, V) logits out of memory
    nll = torch.cat([lm_loss(model, c, reduction="none").sum(1) for c in ids.split(4096)])  # (S,)
    return (p * nll.double()).sum().item() / grammar.entropy(cfg).tokens_per_sentence


def train(model, cfg: LMConfig) -> dict:
    """Train ``model`` in place with AdamW, on fresh grammar sentences every step.

    Returns plain data for the cache: the loss curve, the wall time, and the held-out
    and exact cross-entropy beside the grammar's true entropy, in nats and bits per token.
    """
    torch.use_deterministic_algorithms(True)
    data = torch.Generator().manual_seed(shifted(cfg.seed))
    # A separate draw. The language is finite, so held-out sentences also occur in
    # training: what is held out is the sample, not the strings.
    heldout_gen = torch.Generator().manual_seed(shifted(cfg.seed + 1))
    heldout = grammar.sample_ids(cfg.n_heldout, heldout_gen, cfg.language)
    opt = torch.optim.AdamW(
        model.parameters(), lr=cfg.lr, betas=(0.9, 0.99), weight_decay=cfg.weight_decay
    )

    def lr_at(step):  # linear warm-up, then cosine decay to zero
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    losses, start = [], time.perf_counter()
    for step in range(cfg.steps):  # noqa: B007 - unused; a rename would change code_hash and retrain
        loss = lm_loss(model, grammar.sample_ids(cfg.batch_size, data, cfg.language))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    seconds = time.perf_counter() - start
    model.eval()
    every = max(1, cfg.steps // 100)  # keep about 100 points of the loss curve
    chunks = [losses[i : i + every] for i in range(0, len(losses), every)]
    H = grammar.entropy(cfg.language)
    held = heldout_nats_per_token(model, heldout)
    exact = exact_nats_per_token(model, cfg.language)
    return {
        "seconds": seconds,  # the training loop
        "eval_seconds": time.perf_counter() - start - seconds,  # the two cross-entropies
        "threads": torch.get_num_threads(),
        "loss_every": every,  # train_loss[i] is the mean over steps i*every .. (i+1)*every - 1
        "train_loss": [sum(c) / len(c) for c in chunks],
        "heldout_nats_per_token": held,
        "heldout_bits_per_token": held / math.log(2),
        "exact_ce_nats_per_token": exact,
        "exact_ce_bits_per_token": exact / math.log(2),
        "entropy_nats_per_token": H.nats_per_token,
        "entropy_bits_per_token": H.bits_per_token,
    }


def make(cfg: LMConfig) -> gpt.GPT:
    """A freshly initialised GPT, seeded without disturbing the caller's random state."""
    with torch.random.fork_rng():
        torch.manual_seed(shifted(cfg.seed))
        return gpt.GPT(cfg.model)


def load(cfg: LMConfig = LMConfig()) -> tuple[gpt.GPT, dict]:
    """The trained model and its training info, from the disk cache or trained now."""
    return cache.load_or_train(
        "grammar-gpt", cfg, make=lambda: make(cfg), train=lambda model: train(model, cfg)
    )


@torch.no_grad()
def generate(model, idx, steps: int, temperature=1.0, top_k: int | None = None, generator=None):
    """Extend each row of idx (N, T) by up to ``steps`` tokens, sampling; stop at EOS.

    temperature = 0 means its limit T → 0, where the softmax puts all its mass on the
    largest logit: argmax, greedy decoding. (Dividing by 0 itself would give nan.)
    A row that has produced EOS is filled with padding until every row has, and the
    model no longer runs on it: in a batch of sentences most rows end well before the
    longest, so this saves most of the work. A model whose rows carry state of their
    own (the sentence VAE's decoder, one z per row) defines ``rows(index)``: the same
    model for those rows only.
    """
    done = (idx == grammar.EOS_ID).any(dim=1, keepdim=True)  # (N, 1)
    for _ in range(steps):
        live = (~done[:, 0]).nonzero()[:, 0]  # (n,) the rows still writing
        context = idx[live, -model.cfg.block_size :]  # (n, T) the model has no positions beyond
        run = model.rows(live) if hasattr(model, "rows") else model
        # Ended rows get flat logits and still take a random draw, thrown away below, so
        # each live row draws what it would draw if no row were skipped.
        logits = torch.zeros(len(idx), model.cfg.vocab_size)  # (N, V)
        logits[live] = run(context)[:, -1, :]
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)  # greedy
        else:
            logits = logits / temperature
            if top_k:
                topk_threshold = torch.topk(logits, top_k).values[:, [-1]]  # (N, 1)
                logits[logits < topk_threshold] = float("-inf")
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator)  # SAMPLE, not argmax
        nxt = nxt.masked_fill(done, grammar.PAD_ID)  # (N, 1)
        idx = torch.cat([idx, nxt], dim=1)
        done = done | (nxt == grammar.EOS_ID)
        if done.all():
            break
    return idx


@torch.no_grad()
def surprisal(model, idx):
    """Bits per token: −log2 of the probability the model gave each token that occurred.

    idx: (N, T) -> (N, T-1); entry t is the surprisal of idx[:, t+1] given idx[:, :t+1].
    """
    logp = torch.log_softmax(model(idx), dim=-1)  # (N, T, V)
    return -logp[:, :-1].gather(2, idx[:, 1:, None]).squeeze(2) / math.log(2)  # (N, T-1)


def word_surprisal(model, sentence) -> list[float]:
    """The model's surprisal of each word of a sentence and of its EOS, in bits.

    Lines up with ``grammar.surprisal(sentence, eos=True)``.
    """
    idx = torch.tensor([grammar.encode(sentence)])  # (1, T)
    return surprisal(model, idx)[0].tolist()


def texts(idx) -> list[str | None]:
    """Each row's words between <s> and the first </s>; None for a row that never ended."""
    out = []
    for row in idx.tolist():
        if grammar.EOS_ID not in row:
            out.append(None)
            continue
        words = [grammar.VOCAB[i] for i in row[: row.index(grammar.EOS_ID)] if i != grammar.BOS_ID]
        out.append(" ".join(words))
    return out


def fraction_grammatical(idx, cfg: grammar.GrammarConfig = grammar.GrammarConfig()) -> float:
    """Share of rows that ended and are a complete sentence of the grammar."""
    return sum(t is not None and grammar.is_grammatical(t, cfg) for t in texts(idx)) / len(idx)


def distinct_share(idx) -> float:
    """Distinct samples / samples: 1 when no two rows agree, 1/N when all do."""
    return len(set(texts(idx))) / len(idx)


def most_common(idx) -> tuple[str | None, float]:
    """The most frequent sample and its share: greedy decoding's repetition shows as share 1."""
    text, count = Counter(texts(idx)).most_common(1)[0]
    return text, count / len(idx)
