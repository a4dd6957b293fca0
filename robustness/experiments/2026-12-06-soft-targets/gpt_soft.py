"""GPT arms: base (one-hot targets) vs soft (grammar's exact next-word distribution)."""
import json, math, sys, time
from dataclasses import replace
from collections import defaultdict
import torch
from torch.nn import functional as F
from rec11 import grammar, lm
from rec11.seeds import shifted

arm, seeds, out = sys.argv[1], [int(s) for s in sys.argv[2].split(",")], sys.argv[3]
torch.set_num_threads(1)

def soft_table():
    ids, p = grammar.table()
    S, T = ids.shape
    acc = defaultdict(lambda: torch.zeros(len(grammar.VOCAB), dtype=torch.float64))
    rows = ids.tolist()
    for i, r in enumerate(rows):
        for t in range(T - 1):
            if r[t + 1] == grammar.PAD_ID:
                break
            acc[tuple(r[: t + 1])][r[t + 1]] += p[i].item()
    soft = torch.zeros(S, T - 1, len(grammar.VOCAB))
    for i, r in enumerate(rows):
        for t in range(T - 1):
            if r[t + 1] == grammar.PAD_ID:
                break
            d = acc[tuple(r[: t + 1])]
            soft[i, t] = (d / d.sum()).float()
    return ids, p, soft

def train_soft(model, cfg, ids, p, soft):
    torch.use_deterministic_algorithms(True)
    data = torch.Generator().manual_seed(shifted(cfg.seed))
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.99), weight_decay=0)
    def lr_at(step):
        if step < cfg.warmup:
            return (step + 1) / cfg.warmup
        pr = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return 0.5 * (1 + math.cos(math.pi * min(pr, 1.0)))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    for step in range(cfg.steps):
        pick = torch.multinomial(p, cfg.batch_size, replacement=True, generator=data)
        x, tgt = ids[pick], soft[pick]  # (N, T), (N, T-1, V)
        logits = model(x[:, :-1])
        mask = x[:, 1:] != grammar.PAD_ID
        ce = -(tgt * F.log_softmax(logits, -1)).sum(-1)  # (N, T-1)
        loss = ce[mask].mean()
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); sched.step()
    model.eval()

if arm == "soft":
    t0 = time.time(); tab = soft_table(); print("table", time.time() - t0, flush=True)
for seed in seeds:
    cfg = replace(lm.LMConfig(), seed=seed)
    model = lm.make(cfg)
    t0 = time.time()
    if arm == "soft":
        train_soft(model, cfg, *tab)
    else:
        lm.train(model, cfg)
    secs = time.time() - t0
    tests = grammar.TEST_SENTENCES
    mb = {n: lm.word_surprisal(model, s) for n, s in tests.items()}
    eb = {n: grammar.surprisal(s, eos=True) for n, s in tests.items()}
    gaps = [abs(mb[n][t] - eb[n][t]) for n, s in tests.items() for t in range(len(s.split()))]
    fell_gap = abs(mb["garden path"][-2] - eb["garden path"][-2])
    exact = lm.exact_nats_per_token(model)
    g = torch.Generator().manual_seed(123)
    rec = dict(arm=arm, seed=seed, secs=secs, max_gap=max(gaps), mae=sum(gaps)/len(gaps),
               fell_gap=fell_gap, kl_nats=exact - grammar.entropy().nats_per_token)
    print(json.dumps(rec), flush=True)
    with open(out, "a") as f:
        f.write(json.dumps(rec) + "\n")
