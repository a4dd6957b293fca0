"""The worked answers of book/exercises.md, copied from its solution cells for mutation testing.

``make mutants`` mutates this file (mutmut, configured in pyproject.toml) and runs
tests/mutation/test_answers.py on each mutant: a mutant is killed when its check refuses it.
tests/unit/test_mutation_answers.py keeps every function here the same as the page's.

One difference, forced by the tool: mutmut leaves decorated functions alone, so the page's
``@torch.no_grad()`` on ``generate`` is applied after the ``def`` instead (the unit test
reads ``generate = torch.no_grad()(generate)`` as that decorator).
"""

import math

import torch
import torch.nn.functional as F


def attention(Q, K, V, mask):
    d_k = Q.size(-1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)     # (N, T, T)
    scores = scores.masked_fill(mask == 0, float("-inf"))
    A = torch.softmax(scores, dim=-1)                     # rows sum to 1
    return A @ V                                          # (N, T, d_v)


def split_heads(x, H):
    N, T, d = x.shape
    return x.view(N, T, H, d // H).transpose(1, 2)   # (N, H, T, d/H)


def merge_heads(out):
    N, H, T, d_head = out.shape
    # tokens back next to the batch first, then each token's heads side by side
    return out.transpose(1, 2).reshape(N, T, H * d_head)  # (N, T, d)


def padding_mask(lengths, T):
    keys = torch.arange(T)[None, :] < lengths[:, None]   # (N, T)
    return keys[:, None, None, :]                        # (N, 1, 1, T)


def generate(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()  # dropout off while sampling
    for _ in range(steps):
        context = idx[:, -model.cfg.block_size:]  # (N, <= block_size)
        logits = model(context)[:, -1, :] / temperature
        if top_k:
            topk_threshold = torch.topk(logits, top_k).values[:, [-1]]
            logits[logits < topk_threshold] = float('-inf')
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs, 1)         # SAMPLE, not argmax
        idx = torch.cat([idx, nxt], dim=1)
    return idx


generate = torch.no_grad()(generate)  # no graph: nothing here is trained


def surprisal(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)             # (1, T, V)
    nats = -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0]   # (T-1,)
    return nats / math.log(2)                            # bits


def reparameterize(mu, logvar):
    eps = torch.randn_like(mu)                # (N, Z): no gradient needed
    return mu + torch.exp(0.5 * logvar) * eps


def vae_loss(xhat, x, mu, logvar, beta):
    recon = F.mse_loss(xhat, x, reduction='sum')
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return recon + beta * kl


def diffusion_loss(model, x0, t, eps, abar):
    xt = abar[t].sqrt()[:,None]*x0 + (1-abar[t]).sqrt()[:,None]*eps
    return F.mse_loss(model(xt, t), eps)      # predict the noise
