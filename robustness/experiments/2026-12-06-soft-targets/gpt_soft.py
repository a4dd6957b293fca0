"""The tiny GPT trained two ways under the same seeds: how closely does it match the grammar?

    PYTHONPATH=src python robustness/experiments/2026-12-06-soft-targets/gpt_soft.py ARM SEEDS OUT

ARM is ``base`` (the book's ``lm.train``: each prefix's target is the word the drawn sentence
holds) or ``soft`` (the target is the grammar's whole next-word distribution at that prefix).
SEEDS is a comma-separated list; one JSON line per seed is appended to OUT: the largest gap
between the model's and the grammar's surprisal over the five test sentences (the quantity of
'almost on top of each other'), the mean gap, the gap at *fell*, and the model's excess
cross-entropy over the entropy in nats per token.
"""

import json
import math
import sys
import time
from collections import defaultdict
from dataclasses import replace

import torch
from torch.nn import functional as F

from rec11 import grammar, lm
from rec11.seeds import shifted


def soft_table():
    """(ids, p, next_word): every sentence, its probability, and P(next | prefix) at each position."""
    ids, p = grammar.table()
    S, T = ids.shape
    mass = defaultdict(lambda: torch.zeros(len(grammar.VOCAB), dtype=torch.float64))
    rows = ids.tolist()
    for i, row in enumerate(rows):  # each next word's probability mass, per prefix
        for t in range(T - 1):
            if row[t + 1] == grammar.PAD_ID:
                break
            mass[tuple(row[: t + 1])][row[t + 1]] += p[i].item()
    next_word = torch.zeros(S, T - 1, len(grammar.VOCAB))  # (S, T-1, V), zeros at padding
    for i, row in enumerate(rows):
        for t in range(T - 1):
            if row[t + 1] == grammar.PAD_ID:
                break
            m = mass[tuple(row[: t + 1])]
            next_word[i, t] = (m / m.sum()).float()
    return ids, p, next_word


def train_soft(model, cfg: lm.LMConfig, ids, p, next_word):
    """lm.train's optimiser, schedule and draws, with the grammar's distribution as the target."""
    torch.use_deterministic_algorithms(True)
    data = torch.Generator().manual_seed(shifted(cfg.seed))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.99), weight_decay=0)

    def lr_at(step):  # linear warm-up, then cosine decay to zero, as lm.train
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    for _ in range(cfg.steps):
        pick = torch.multinomial(p, cfg.batch_size, replacement=True, generator=data)  # (N,)
        x, target = ids[pick], next_word[pick]  # (N, T), (N, T-1, V)
        nats = -(target * F.log_softmax(model(x[:, :-1]), -1)).sum(-1)  # (N, T-1)
        loss = nats[x[:, 1:] != grammar.PAD_ID].mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    model.eval()


def main(arm: str, seeds: list[int], out: str):
    torch.set_num_threads(1)
    table = soft_table() if arm == "soft" else None
    tests = grammar.TEST_SENTENCES
    exact_bits = {name: grammar.surprisal(s, eos=True) for name, s in tests.items()}
    for seed in seeds:
        cfg = replace(lm.LMConfig(), seed=seed)
        model = lm.make(cfg)
        start = time.time()
        if arm == "soft":
            train_soft(model, cfg, *table)
        else:
            lm.train(model, cfg)
        seconds = time.time() - start
        model_bits = {name: lm.word_surprisal(model, s) for name, s in tests.items()}
        gaps = [abs(model_bits[n][t] - exact_bits[n][t])
                for n, s in tests.items() for t in range(len(s.split()))]  # words, not </s>
        fell = abs(model_bits["garden path"][-2] - exact_bits["garden path"][-2])
        excess = lm.exact_nats_per_token(model) - grammar.entropy().nats_per_token
        record = {"arm": arm, "seed": seed, "secs": seconds, "max_gap": max(gaps),
                  "mae": sum(gaps) / len(gaps), "fell_gap": fell, "kl_nats": excess}
        print(json.dumps(record), flush=True)
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2].split(",")], sys.argv[3])
