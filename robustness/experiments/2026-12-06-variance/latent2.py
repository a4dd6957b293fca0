"""How much of the latent-2 cloud's distance from the origin is training noise?

    PYTHONPATH=src python robustness/experiments/2026-12-06-variance/latent2.py ARM FIRST LAST > ARM.jsonl

Trains ``vae.LATENT2`` under seeds FIRST..LAST-1, one thread, and prints one JSON line per
seed: ``centre``, the value further/vae.md's claim 'the whole cloud sits around the origin'
checks (the largest |mean| of the held-out digits' codes, threshold 0.3); ``centre_all``, the
same over all 1,797 digits; ``width``, the value of 'about as wide as the prior'. ARM is
``base`` (the book's training), ``decay`` (the same epochs, the learning rate decayed to zero
on a cosine) or ``e240`` (twice the epochs).
"""

import json
import math
import sys
import time
from dataclasses import replace

import torch

from rec11 import data, vae
from rec11.seeds import shifted


def train_decayed(model, X):
    """vae.train, with the learning rate falling from cfg.lr to zero on a cosine over all steps."""
    cfg = model.cfg
    with torch.random.fork_rng():
        torch.manual_seed(shifted(cfg.seed))
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        total, step = cfg.epochs * math.ceil(len(X) / cfg.batch_size), 0
        for epoch in range(cfg.epochs):
            beta = vae.warmed_beta(cfg, epoch)
            for idx in torch.randperm(len(X)).split(cfg.batch_size):
                for group in opt.param_groups:
                    group["lr"] = cfg.lr * 0.5 * (1 + math.cos(math.pi * step / total))
                step += 1
                x = X[idx]  # (N, D)
                xhat, mu, logvar = model(x)
                loss, _, _ = vae.vae_loss(xhat, x, mu, logvar, beta)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()


def main(arm: str, first: int, last: int) -> None:
    torch.set_num_threads(1)
    X_train, _, X_test, _ = data.digits_split()
    for seed in range(first, last):
        cfg = replace(vae.LATENT2, seed=seed, epochs=240 if arm == "e240" else vae.LATENT2.epochs)
        model = vae.make(cfg)
        start = time.time()
        (train_decayed if arm == "decay" else vae.train)(model, X_train)
        codes, _ = vae.encode(model, X_test)  # (297, 2)
        every, _ = vae.encode(model, torch.cat([X_train, X_test]))  # (1797, 2)
        print(json.dumps({"seed": seed, "centre": codes.mean(0).abs().max().item(),
                          "centre_all": every.mean(0).abs().max().item(),
                          "width": (codes.std(0) - 1).abs().max().item(), "sec": time.time() - start}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
