"""Exercise 1: delete the 1/√d_k, then train one attention layer at d_k = 8 and d_k = 512.

The task is associative recall. Each sequence holds ``n_pairs`` (key, value) pairs and
then a query key; the answer is the value stored with that key. One attention layer
solves it: the query must put its weight on the pair whose key matches, and read out
that pair's value. Each pair sits at one position (key embedding + value embedding),
so no position codes are needed: the pairs form a set, and attention ignores order.

Besides the training curves, ``train`` measures on a fixed batch, at initialisation
and then along training, what the missing 1/√d_k does to the softmax and to the
gradients on either side of it. ``grid`` runs the four settings at several learning
rates, because whether the unscaled d_k = 512 model fails depends on the learning rate.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from rec11 import attention as attn
from rec11 import cache
from rec11.seeds import shifted

DIAG_SEED = 1234  # the fixed batch for diagnostics
EVAL_SEED = 4321  # the fixed held-out batch for final loss and accuracy


@dataclass(frozen=True)
class RecallConfig:
    d_k: int = 8  # width of queries and keys: the only thing Exercise 1 varies
    scaled: bool = True  # False deletes the 1/√d_k
    n_pairs: int = 16  # (key, value) pairs per sequence: T_k, the keys a query chooses among
    n_keys: int = 32  # key vocabulary; a sequence's keys are distinct
    n_values: int = 16  # value vocabulary: chance accuracy is 1/n_values
    d: int = 64  # embedding width, fixed so that d_k alone changes
    lr: float = 1e-2  # Adam; fine for the scaled model, too much for unscaled d_k=512
    steps: int = 400
    batch_size: int = 64
    seed: int = 0
    log_every: int = 20  # curves: mean over each window of this many steps, diagnose at its end
    n_eval: int = 1024  # held-out sequences for the final numbers


def make_batch(cfg: RecallConfig, N: int, generator: torch.Generator):
    """N sequences: keys (N, n_pairs), values (N, n_pairs), query (N,), target (N,)."""
    # distinct keys per sequence, so that the query has exactly one right answer
    keys = torch.rand(N, cfg.n_keys, generator=generator).argsort(-1)[:, : cfg.n_pairs]
    values = torch.randint(cfg.n_values, (N, cfg.n_pairs), generator=generator)
    slot = torch.randint(cfg.n_pairs, (N, 1), generator=generator)  # which pair is asked for
    query = keys.gather(1, slot)[:, 0]
    target = values.gather(1, slot)[:, 0]
    return keys, values, query, target


class RecallModel(nn.Module):
    """Embeddings, one attention layer (scaled or not), a linear readout.

    PyTorch's default initialisation throughout: what a student's model starts from.
    """

    def __init__(self, cfg: RecallConfig):
        super().__init__()
        self.cfg = cfg
        self.key_emb = nn.Embedding(cfg.n_keys, cfg.d)
        self.value_emb = nn.Embedding(cfg.n_values, cfg.d)
        self.W_q = nn.Linear(cfg.d, cfg.d_k, bias=False)
        self.W_k = nn.Linear(cfg.d, cfg.d_k, bias=False)
        self.W_v = nn.Linear(cfg.d, cfg.d, bias=False)
        self.readout = nn.Linear(cfg.d, cfg.n_values)
        # attn.attention divides by √d_k when scale is None; 1.0 is the deleted √d_k
        self.scale = None if cfg.scaled else 1.0

    def forward(self, keys, values, query):
        """Returns logits (N, n_values) and the attention weights A (N, 1, n_pairs)."""
        x = self.key_emb(keys) + self.value_emb(values)  # (N, T, d): one position per pair
        q = self.W_q(self.key_emb(query)).unsqueeze(1)  # (N, 1, d_k): one query per sequence
        k, v = self.W_k(x), self.W_v(x)  # (N, T, d_k), (N, T, d)
        out, A = attn.attention(q, k, v, scale=self.scale)  # (N, 1, d), (N, 1, T)
        return self.readout(out.squeeze(1)), A  # (N, n_values)


def make(cfg: RecallConfig) -> RecallModel:
    """The model, initialised from cfg.seed: same seed and d_k, same weights, scaled or not.
    Seeded without disturbing the caller's random state."""
    with torch.random.fork_rng():
        torch.manual_seed(shifted(cfg.seed))
        return RecallModel(cfg)


def diagnose(model: RecallModel, cfg: RecallConfig, N: int = 256) -> dict:
    """What the softmax sees and passes back, on a fixed batch. Leaves no gradients behind.

    ``grad_A`` and ``grad_scores`` are medians over sequences of the norm of that
    sequence's own loss gradient, just after and just before the softmax: the typical
    query. ``grad_W_q`` and ``grad_W_k`` are norms of the batch-mean loss gradient, the
    one an optimiser would use. ``saturated`` is the fraction of rows of A with a weight
    above 0.99; ``attn_on_answer`` the mean weight on the pair the query asks for.
    """
    keys, values, query, target = make_batch(cfg, N, torch.Generator().manual_seed(shifted(DIAG_SEED)))
    answer = (keys == query.unsqueeze(1)).float().unsqueeze(1)  # (N, 1, T): one-hot on the right pair
    model.zero_grad()
    logits, A = model(keys, values, query)
    A.retain_grad()
    loss = F.cross_entropy(logits, target)
    loss.backward()
    with torch.no_grad():
        q = model.W_q(model.key_emb(query)).unsqueeze(1)  # (N, 1, d_k)
        k = model.W_k(model.key_emb(keys) + model.value_emb(values))  # (N, T, d_k)
        scale = 1 / math.sqrt(cfg.d_k) if model.scale is None else model.scale
        scores = q @ k.transpose(-2, -1) * scale  # (N, 1, T): the softmax's input
        g_A = A.grad * N  # (N, 1, T): row i is d loss_i / d A_i, what arrives at the softmax
        # back through the softmax, whose Jacobian is diag(A) - A Aᵀ: what reaches the
        # scores. It vanishes when a row of A is one-hot, whatever g_A is.
        g_scores = A * (g_A - (A * g_A).sum(-1, keepdim=True))  # (N, 1, T)
        max_weight = A.max(-1).values
        info = {
            "loss": loss.item(),
            "logit_std": scores.std(-1).mean().item(),  # within a row: all a softmax sees
            "entropy": torch.special.entr(A).sum(-1).mean().item(),  # entr(0) = 0
            "entropy_max": math.log(cfg.n_pairs),  # uniform attention
            "max_weight": max_weight.mean().item(),  # 1.0 is one-hot
            "saturated": (max_weight > 0.99).float().mean().item(),
            "attn_on_answer": (A * answer).sum(-1).mean().item(),  # 1/n_pairs if blind
            "grad_A": g_A.norm(dim=-1).median().item(),
            "grad_scores": g_scores.norm(dim=-1).median().item(),
            "grad_W_q": model.W_q.weight.grad.norm().item(),
            "grad_W_k": model.W_k.weight.grad.norm().item(),
        }
    model.zero_grad(set_to_none=True)
    return info


@torch.no_grad()
def evaluate(model: RecallModel, cfg: RecallConfig) -> tuple[float, float]:
    """Loss and accuracy on a fixed held-out batch."""
    keys, values, query, target = make_batch(cfg, cfg.n_eval, torch.Generator().manual_seed(shifted(EVAL_SEED)))
    logits, _ = model(keys, values, query)
    return F.cross_entropy(logits, target).item(), (logits.argmax(-1) == target).float().mean().item()


def train(model: RecallModel, cfg: RecallConfig) -> dict:
    """Adam on fresh batches. Returns plain data (JSON-ready) for the page to plot.

    Keys: ``config``; ``step`` (end of each logging window), ``loss`` and ``acc``
    (training means per window); ``final_loss`` and ``final_acc`` (held-out batch) and
    ``chance_acc``; ``init`` and ``final`` (``diagnose`` before and after training);
    ``trace``, each ``diagnose`` quantity as a list at steps ``[0] + step``.
    """
    diags = [diagnose(model, cfg)]
    gen = torch.Generator().manual_seed(shifted(cfg.seed))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    steps, losses, accs, window = [], [], [], []
    for step in range(1, cfg.steps + 1):
        keys, values, query, target = make_batch(cfg, cfg.batch_size, gen)
        logits, _ = model(keys, values, query)
        loss = F.cross_entropy(logits, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        window.append((loss.item(), (logits.argmax(-1) == target).float().mean().item()))
        if step % cfg.log_every == 0 or step == cfg.steps:
            steps.append(step)
            losses.append(sum(w[0] for w in window) / len(window))
            accs.append(sum(w[1] for w in window) / len(window))
            window = []
            diags.append(diagnose(model, cfg))
    final_loss, final_acc = evaluate(model, cfg)
    return {
        "config": asdict(cfg),
        "step": steps,
        "loss": losses,
        "acc": accs,
        "final_loss": final_loss,
        "final_acc": final_acc,
        "chance_acc": 1 / cfg.n_values,
        "init": diags[0],
        "final": diags[-1],
        "trace": {key: [d[key] for d in diags] for key in diags[0]},
    }


def load(cfg: RecallConfig = RecallConfig()) -> tuple[RecallModel, dict]:
    """(model, info): trained now, or loaded from the model cache (rec11.cache)."""
    return cache.load_or_train("recall", cfg, lambda: make(cfg), lambda m: train(m, cfg))


SETTINGS = [(8, True), (8, False), (512, True), (512, False)]  # (d_k, scaled)


def grid(base: RecallConfig = RecallConfig(), lrs=(None,), seeds=(None,)) -> list[dict]:
    """``load`` every (d_k, scaled) in SETTINGS at each learning rate and seed.

    None means base.lr or base.seed. Returns the ``info`` dicts, with the learning
    rate outermost, then the seed, then SETTINGS in order.
    """
    cfgs = [
        replace(
            base,
            d_k=d_k,
            scaled=scaled,
            lr=base.lr if lr is None else lr,
            seed=base.seed if seed is None else seed,
        )
        for lr in lrs
        for seed in seeds
        for d_k, scaled in SETTINGS
    ]
    return [load(cfg)[1] for cfg in cfgs]
