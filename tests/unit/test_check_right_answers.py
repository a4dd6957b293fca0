"""Each check passes a right answer however it is written: other functions, other dtypes, loops."""

import math

import pytest
import torch
import torch.nn.functional as F

from rec11 import attention as att
from rec11 import check, diffusion, lm, vae


def right(verdict):
    assert verdict.ok and repr(verdict).startswith("Right: "), f"a right answer was refused:\n{verdict!r}"
    assert not verdict.mistakes
    return repr(verdict)


# --- attention -------------------------------------------------------------------------------

def att_answer(Q, K, V, mask):  # Exercise 2's answer
    d_k = Q.size(-1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)
    scores = scores.masked_fill(mask == 0, float("-inf"))
    A = torch.softmax(scores, dim=-1)
    return A @ V


def att_einsum(Q, K, V, mask):
    scores = torch.einsum("nqd,nkd->nqk", Q, K) / Q.shape[-1] ** 0.5
    scores = scores.masked_fill(~mask.bool(), float("-inf"))
    return torch.einsum("nqk,nkv->nqv", scores.softmax(-1), V)


def att_sdpa(Q, K, V, mask):
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask.bool())


def att_float64(Q, K, V, mask):
    Q, K, V = Q.double(), K.double(), V.double()
    scores = Q @ K.mT / math.sqrt(K.size(-1))
    return torch.softmax(scores.masked_fill(mask == 0, -math.inf), dim=-1) @ V


def att_batch_loop(Q, K, V, mask):
    out = []
    for q, k, v in zip(Q, K, V):
        scores = q @ k.T / math.sqrt(q.size(-1))
        scores[mask == 0] = float("-inf")
        out.append(torch.softmax(scores, dim=1) @ v)
    return torch.stack(out)


def att_large_negative(Q, K, V, mask):
    scores = Q @ K.transpose(1, 2) * Q.size(-1) ** -0.5
    return F.softmax(scores.masked_fill(mask == 0, -1e9), dim=-1) @ V


def att_returns_weights(Q, K, V, mask):
    return att.attention(Q, K, V, mask)  # (out, A)


@pytest.mark.parametrize("fn", [att_answer, att_einsum, att_sdpa, att_float64, att_batch_loop,
                                att_large_negative, att_returns_weights], ids=lambda f: f.__name__)
def test_attention_passes(fn):
    right(check.attention(fn))


# --- split_heads, merge_heads, padding_mask ---------------------------------------------------

def split_answer(x, H):  # Exercise 3's answer
    N, T, d = x.shape
    return x.view(N, T, H, d // H).transpose(1, 2)


def split_permute(x, H):
    return x.reshape(*x.shape[:2], H, -1).permute(0, 2, 1, 3)


def split_chunks(x, H):
    return torch.stack(x.chunk(H, dim=-1), dim=1)


def merge_permute(x):
    N, H, T, d_h = x.shape
    return x.permute(0, 2, 1, 3).reshape(N, T, H * d_h)


def merge_contiguous_view(x):
    N, H, T, d_h = x.shape  # noqa: RUF059
    return x.transpose(1, 2).contiguous().view(N, T, -1)


def merge_cat(x):
    return torch.cat(x.unbind(1), dim=-1)


def _keys(lengths, T):
    return torch.arange(T)[None, :] < lengths[:, None]  # (N, T)


def pad_answer(lengths, T):  # Exercise 3's answer
    keys = torch.arange(T)[None, :] < lengths[:, None]
    return keys[:, None, None, :]


def pad_float(lengths, T):
    return _keys(lengths, T).float()[:, None, None, :]


def pad_int(lengths, T):
    return _keys(lengths, T).long().view(len(lengths), 1, 1, T)


def pad_loop(lengths, T):
    mask = torch.zeros(len(lengths), 1, 1, T)
    for n, length in enumerate(lengths):
        mask[n, ..., :length] = 1
    return mask


def pad_with_causal(lengths, T):  # as Exercise 3's worked answer builds it
    return _keys(lengths, T)[:, None, None, :] & (torch.tril(torch.ones(T, T)) == 1)


def pad_with_causal_float(lengths, T):
    return _keys(lengths, T)[:, None, None, :].float() * torch.tril(torch.ones(T, T))


@pytest.mark.parametrize("check_fn, fn", [
    (check.split_heads, split_answer), (check.split_heads, att.split_heads),
    (check.split_heads, split_permute), (check.split_heads, split_chunks),
    (check.merge_heads, att.merge_heads), (check.merge_heads, merge_permute),
    (check.merge_heads, merge_contiguous_view), (check.merge_heads, merge_cat),
    (check.padding_mask, pad_answer), (check.padding_mask, pad_float), (check.padding_mask, pad_int),
    (check.padding_mask, pad_loop), (check.padding_mask, pad_with_causal),
    (check.padding_mask, pad_with_causal_float),
], ids=lambda v: getattr(v, "__name__", None))
def test_shapes_pass(check_fn, fn):
    right(check_fn(fn))


def test_padding_mask_with_causal_says_so():
    assert "causal" in right(check.padding_mask(pad_with_causal))
    assert "causal" not in right(check.padding_mask(pad_answer))


# --- generate ---------------------------------------------------------------------------------

@torch.no_grad()
def gen_answer(model, idx, steps, temperature=1.0, top_k=None):  # Exercise 4's answer
    model.eval()
    for _ in range(steps):
        context = idx[:, -model.cfg.block_size:]
        logits = model(context)[:, -1, :] / temperature
        if top_k:
            topk_threshold = torch.topk(logits, top_k).values[:, [-1]]
            logits[logits < topk_threshold] = float('-inf')
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs, 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


def gen_categorical(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    with torch.inference_mode():
        for _ in range(steps):
            logits = model(idx[:, -model.cfg.block_size:])[:, -1] / temperature
            if top_k is not None:
                kth = logits.topk(top_k, dim=-1).values[..., -1:]
                logits = logits.masked_fill(logits < kth, -math.inf)
            nxt = torch.distributions.Categorical(logits=logits).sample()
            idx = torch.cat([idx, nxt[:, None]], dim=1)
    return idx


def gen_gumbel_max(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    with torch.no_grad():
        for _ in range(steps):
            logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
            if top_k:
                logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
            gumbel = -torch.log(-torch.log(torch.rand_like(logits)))
            idx = torch.cat([idx, (logits + gumbel).argmax(-1, keepdim=True)], dim=1)
    return idx


def gen_topk_scatter(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    with torch.no_grad():
        for _ in range(steps):
            context = idx if idx.size(1) <= model.cfg.block_size else idx[:, -model.cfg.block_size:]
            logits = model(context)[:, -1, :] / temperature
            if top_k:
                values, where = torch.topk(logits, top_k)
                logits = torch.full_like(logits, float("-inf")).scatter(1, where, values)
            nxt = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, nxt), dim=1)
    return idx


def gen_package(model, idx, steps, temperature=1.0, top_k=None):
    was = model.training
    model.eval()
    with torch.no_grad():
        for _ in range(steps):
            logits = model(idx[:, -model.cfg.block_size:])
            probs = torch.softmax(logits[:, -1, :] / temperature, dim=-1)
            if top_k:
                kth = probs.topk(top_k).values[:, -1:]
                probs = torch.where(probs < kth, torch.zeros_like(probs), probs)
            idx = torch.cat([idx, torch.multinomial(probs, 1)], dim=1)
    model.train(was)
    return idx


@pytest.mark.parametrize("fn", [gen_answer, gen_categorical, gen_gumbel_max, gen_topk_scatter,
                                gen_package], ids=lambda f: f.__name__)
def test_generate_passes(fn):
    right(check.generate(fn))


# --- surprisal --------------------------------------------------------------------------------

def surp_answer(logits, idx):  # Exercise 5's answer
    logp = torch.log_softmax(logits, dim=-1)
    nats = -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0]
    return nats / math.log(2)


def surp_cross_entropy(logits, idx):
    return F.cross_entropy(logits[0, :-1], idx[0, 1:], reduction="none") / math.log(2)


def surp_gather_batched(logits, idx):
    logp = logits.log_softmax(-1)[:, :-1]
    return -logp.gather(2, idx[:, 1:].unsqueeze(-1)).squeeze(-1) / math.log(2)  # (1, T-1)


def surp_log2(logits, idx):
    p = torch.softmax(logits[0], dim=-1)
    return -torch.log2(p[torch.arange(idx.shape[1] - 1), idx[0, 1:]])


def surp_loop(logits, idx):
    out = []
    for t in range(idx.shape[1] - 1):
        out.append(-torch.log_softmax(logits[0, t], 0)[idx[0, t + 1]].item() / math.log(2))
    return out


@pytest.mark.parametrize("fn", [surp_answer, surp_cross_entropy, surp_gather_batched, surp_log2,
                                surp_loop, lambda l, i: lm.surprisal(lambda _: l, i)[0]],
                         ids=lambda f: f.__name__)
def test_surprisal_passes(fn):
    right(check.surprisal(fn))


# --- vae_loss ---------------------------------------------------------------------------------

def _kl(mu, logvar):
    return -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


def vae_answer(xhat, x, mu, logvar, beta):  # Exercise 7's answer
    recon = F.mse_loss(xhat, x, reduction='sum')
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return recon + beta * kl


def vae_distributions(xhat, x, mu, logvar, beta):
    q = torch.distributions.Normal(mu, torch.exp(0.5 * logvar))
    p = torch.distributions.Normal(torch.zeros_like(mu), torch.ones_like(mu))
    kl = torch.distributions.kl_divergence(q, p).sum()
    return ((xhat - x) ** 2).sum() + beta * kl


def vae_batch_mean_of_sums(xhat, x, mu, logvar, beta):
    recon = F.mse_loss(xhat, x, reduction="none").sum(dim=1).mean()
    kl = (-0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(dim=1)).mean()
    return recon + beta * kl


def vae_over_N(xhat, x, mu, logvar, beta):
    return (F.mse_loss(xhat, x, reduction="sum") + beta * _kl(mu, logvar)) / x.shape[0]


def vae_over_D(xhat, x, mu, logvar, beta):
    return (F.mse_loss(xhat, x, reduction="sum") + beta * _kl(mu, logvar)) / x.shape[1]


def vae_over_ND(xhat, x, mu, logvar, beta):
    return (F.mse_loss(xhat, x, reduction="sum") + beta * _kl(mu, logvar)) / x.numel()


def vae_mean_recon_scaled_kl(xhat, x, mu, logvar, beta):
    return F.mse_loss(xhat, x) + beta * _kl(mu, logvar) / x.numel()


def vae_tuple(xhat, x, mu, logvar, beta):
    return vae.vae_loss(xhat, x, mu, logvar, beta)  # (loss, recon, kl)


def vae_std_form(xhat, x, mu, logvar, beta):
    std = torch.exp(0.5 * logvar)
    kl = 0.5 * torch.sum(mu ** 2 + std ** 2 - 1 - torch.log(std ** 2))
    return torch.sum((x - xhat) ** 2) + beta * kl


@pytest.mark.parametrize("fn", [vae_answer, vae_distributions, vae_batch_mean_of_sums, vae_over_N,
                                vae_over_D, vae_over_ND, vae_mean_recon_scaled_kl, vae_tuple,
                                vae_std_form], ids=lambda f: f.__name__)
def test_vae_loss_passes(fn):
    right(check.vae_loss(fn))


# --- diffusion_loss ---------------------------------------------------------------------------

def diff_answer(model, x0, t, eps, abar):  # Exercise 7's answer
    xt = abar[t].sqrt()[:, None] * x0 + (1 - abar[t]).sqrt()[:, None] * eps
    return F.mse_loss(model(xt, t), eps)


def diff_t_column(model, x0, t, eps, abar):
    a = abar[t][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t[:, None]), eps)


def diff_gather(model, x0, t, eps, abar):
    a = abar.gather(0, t).unsqueeze(1)
    xt = torch.sqrt(a) * x0 + torch.sqrt(1 - a) * eps
    return ((model(xt, t) - eps) ** 2).mean()


def diff_view(model, x0, t, eps, abar):
    a = abar[t].view(-1, 1)
    xt = a ** 0.5 * x0 + (1 - a) ** 0.5 * eps
    return F.mse_loss(eps, model(xt, t.float()))


def diff_package(model, x0, t, eps, abar):
    return F.mse_loss(model(diffusion.q_sample(x0, t, eps, abar), t), eps)


@pytest.mark.parametrize("fn", [diff_answer, diff_t_column, diff_gather, diff_view, diff_package],
                         ids=lambda f: f.__name__)
def test_diffusion_loss_passes(fn):
    right(check.diffusion_loss(fn))


def test_the_checks_are_deterministic():
    for _ in range(2):
        assert check.generate(gen_answer).ok and check.diffusion_loss(diff_answer).ok


def rep_slide(mu, logvar):
    return mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)


def rep_sqrt_of_variance(mu, logvar):
    return mu + logvar.exp().sqrt() * torch.randn(mu.shape)


def rep_rsample(mu, logvar):
    return torch.distributions.Normal(mu, torch.exp(0.5 * logvar)).rsample()


@pytest.mark.parametrize("fn", [rep_slide, rep_sqrt_of_variance, rep_rsample],
                         ids=lambda f: f.__name__)
def test_reparameterize_passes(fn):
    assert check.reparameterize(fn).ok
