"""Each check names the mistake in a wrong answer a student could have written, and never passes it.

One small function per mistake, written as a student would; each row of a table gives the
check, the function and the key the verdict must name.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from rec11 import check


def names(verdict):
    assert not verdict.ok, f"a wrong answer passed:\n{verdict!r}"
    assert verdict.lines and all(line.startswith("Not yet: ") for line in verdict.lines), verdict
    return set(verdict.mistakes)


# --- attention: fn(Q, K, V, mask) -----------------------------------------------------------

def att_no_scale(Q, K, V, mask):
    scores = (Q @ K.transpose(-2, -1)).masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


def att_scale_dk(Q, K, V, mask):
    scores = (Q @ K.transpose(-2, -1) / Q.size(-1)).masked_fill(mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


def att_mask_after(Q, K, V, mask):
    A = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1)), dim=-1)
    return A.masked_fill(mask == 0, 0) @ V


def att_mask_zero(Q, K, V, mask):
    scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(mask == 0, 0)
    return torch.softmax(scores, dim=-1) @ V


def att_mask_inverted(Q, K, V, mask):
    scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(mask == 1, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


def att_no_mask(Q, K, V, mask):
    return torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1)), dim=-1) @ V


def att_own_causal_mask(Q, K, V, mask):
    T = Q.size(-2)
    causal = torch.tril(torch.ones(T, T))  # builds its own, ignores the argument
    scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(causal == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


def att_mask_and_causal(Q, K, V, mask):
    T = Q.size(-2)
    allowed = (mask == 1) & (torch.tril(torch.ones(T, T)) == 1)  # "to be safe"
    scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


def att_sdpa_float_mask(Q, K, V, mask):
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)  # a float mask is added


def att_is_causal(Q, K, V, mask):
    return F.scaled_dot_product_attention(Q, K, V, is_causal=True)


def _att_dim(dim):
    def attention(Q, K, V, mask):
        scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(mask == 0, float("-inf"))
        return torch.softmax(scores, dim=dim) @ V
    return attention


def att_starter(Q, K, V, mask):  # Exercise 2's starter
    scores = Q @ K.transpose(-2, -1)
    A = torch.softmax(scores, dim=-2)
    A = A.masked_fill(mask == 0, 0)
    return A @ V


def att_mask_transposed(Q, K, V, mask):
    scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(mask.T == 0, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


@pytest.mark.parametrize("fn, expected", [
    (att_no_scale, {"no_scale"}), (att_scale_dk, {"scale_dk"}), (att_mask_after, {"mask_after"}),
    (att_mask_zero, {"mask_zero"}), (att_mask_inverted, {"mask_inverted"}),
    (att_no_mask, {"no_mask"}), (att_own_causal_mask, {"own_mask"}),
    (att_mask_and_causal, {"adds_causal"}),
    (att_sdpa_float_mask, {"mask_added"}), (att_is_causal, {"own_mask"}),
    (att_mask_transposed, {"mask_transposed"}),
    (_att_dim(-2), {"dim"}), (_att_dim(1), {"dim"}), (_att_dim(0), {"dim_batch"}),
    (att_starter, {"dim", "mask_after", "no_scale"}),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_attention_names_the_mistake(fn, expected):
    assert names(check.attention(fn)) == expected


# --- split_heads, merge_heads, padding_mask --------------------------------------------------

def split_view_without_transpose(x, H):
    N, T, d = x.shape
    return x.view(N, H, T, d // H)


def split_reshape_without_transpose(x, H):
    N, T, d = x.shape
    return x.reshape(N, H, T, d // H)


def split_no_transpose(x, H):
    N, T, d = x.shape
    return x.view(N, T, H, d // H)


def split_interleaved(x, H):
    N, T, d = x.shape
    return x.view(N, T, d // H, H).permute(0, 3, 1, 2)


def merge_reshape_without_transpose(x):
    N, H, T, d_h = x.shape
    return x.reshape(N, T, H * d_h)


def merge_view_after_transpose(x):
    N, H, T, d_h = x.shape
    return x.transpose(1, 2).view(N, T, H * d_h)


def merge_no_reshape(x):
    return x.transpose(1, 2)


def merge_interleaved(x):
    N, H, T, d_h = x.shape
    return x.permute(0, 2, 3, 1).reshape(N, T, H * d_h)


def _keys(lengths, T):
    return torch.arange(T)[None, :] < lengths[:, None]  # (N, T)


def pad_no_axes(lengths, T):
    return _keys(lengths, T)


def pad_one_axis(lengths, T):
    return _keys(lengths, T)[:, None, :]


def pad_masks_queries(lengths, T):
    return _keys(lengths, T)[:, None, :, None]


def pad_inverted(lengths, T):
    return (torch.arange(T)[None, :] >= lengths[:, None])[:, None, None, :]


def pad_inverted_with_tilde(lengths, T):
    return ~_keys(lengths, T)[:, None, None, :]


def pad_off_by_one(lengths, T):
    return (torch.arange(T)[None, :] <= lengths[:, None])[:, None, None, :]


def pad_from_one(lengths, T):
    return (torch.arange(1, T + 1)[None, :] < lengths[:, None])[:, None, None, :]


def pad_additive(lengths, T):
    mask = torch.zeros(len(lengths), 1, 1, T)
    return mask.masked_fill(~_keys(lengths, T)[:, None, None, :], float("-inf"))


def pad_max_length(lengths, T):
    return (torch.arange(int(lengths.max()))[None, :] < lengths[:, None])[:, None, None, :]


def pad_only_causal(lengths, T):
    return torch.tril(torch.ones(T, T))[None, None].expand(len(lengths), 1, T, T)


def pad_off_by_one_and_causal(lengths, T):
    keys = torch.arange(T)[None, :] <= lengths[:, None]
    return keys[:, None, None, :] & (torch.tril(torch.ones(T, T)) == 1)


@pytest.mark.parametrize("check_fn, fn, expected", [
    (check.split_heads, split_view_without_transpose, {"view_without_transpose"}),
    (check.split_heads, split_reshape_without_transpose, {"view_without_transpose"}),
    (check.split_heads, split_no_transpose, {"no_transpose"}),
    (check.split_heads, split_interleaved, {"interleaved"}),
    (check.merge_heads, merge_reshape_without_transpose, {"reshape_without_transpose"}),
    (check.merge_heads, merge_view_after_transpose, {"raised"}),
    (check.merge_heads, merge_no_reshape, {"no_merge"}),
    (check.merge_heads, merge_interleaved, {"interleaved"}),
    (check.padding_mask, pad_no_axes, {"no_axes"}),
    (check.padding_mask, pad_one_axis, {"one_axis"}),
    (check.padding_mask, pad_masks_queries, {"masks_queries"}),
    (check.padding_mask, pad_inverted, {"inverted"}),
    (check.padding_mask, pad_inverted_with_tilde, {"inverted"}),
    (check.padding_mask, pad_off_by_one, {"off_by_one_late"}),
    (check.padding_mask, pad_from_one, {"off_by_one_early"}),
    (check.padding_mask, pad_additive, {"additive"}),
    (check.padding_mask, pad_max_length, {"max_length"}),
    (check.padding_mask, pad_only_causal, {"only_causal"}),
    (check.padding_mask, pad_off_by_one_and_causal, {"off_by_one_late"}),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_shapes_name_the_mistake(check_fn, fn, expected):
    assert names(check_fn(fn)) == expected


def test_merge_heads_view_says_use_reshape():
    assert "use reshape" in repr(check.merge_heads(merge_view_after_transpose))


# --- generate(model, idx, steps, temperature=1.0, top_k=None) ---------------------------------

def _crop_last(model, idx):
    return idx[:, -model.cfg.block_size:]


def _top_k_strict(logits, k):
    logits[logits < torch.topk(logits, k).values[:, [-1]]] = float("-inf")
    return logits


def _make_loop(crop=_crop_last, top_k_filter=_top_k_strict, scale=lambda z, t: z / t,
               pick=lambda p: torch.multinomial(p, 1), position=-1, eval_mode=True, no_grad=True,
               softmax_dim=-1):
    """A loop right in everything but what is passed in."""
    def generate(model, idx, steps, temperature=1.0, top_k=None):
        if eval_mode:
            model.eval()
        with torch.set_grad_enabled(not no_grad):
            for _ in range(steps):
                logits = model(crop(model, idx))[:, position, :]
                logits = scale(logits, temperature)
                if top_k:
                    logits = top_k_filter(logits, top_k)
                idx = torch.cat([idx, pick(torch.softmax(logits, dim=softmax_dim))], dim=1)
        return idx
    return generate


gen_argmax = _make_loop(pick=lambda p: p.argmax(-1, keepdim=True))
gen_temperature_multiplied = _make_loop(scale=lambda z, t: z * t)
gen_temperature_ignored = _make_loop(scale=lambda z, t: z)
gen_top_k_ignored = _make_loop(top_k_filter=lambda z, k: z)
gen_top_k_one_too_many = _make_loop(top_k_filter=lambda z, k: _top_k_strict(z, k + 1))
gen_first_position = _make_loop(position=0)
gen_no_crop = _make_loop(crop=lambda model, idx: idx)
gen_crop_first = _make_loop(crop=lambda model, idx: idx[:, :model.cfg.block_size])
gen_crop_short = _make_loop(crop=lambda model, idx: idx[:, -(model.cfg.block_size - 1):])
gen_train_mode = _make_loop(eval_mode=False)
gen_grad_on = _make_loop(no_grad=False)


def gen_top_k_le(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    with torch.no_grad():
        for _ in range(steps):
            logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
            if top_k:
                threshold = torch.topk(logits, top_k).values[:, [-1]]
                logits[logits <= threshold] = float("-inf")  # drops the k-th too
            probs = torch.softmax(logits, dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, 1)], dim=1)
    return idx


def gen_crop_overwrites(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    with torch.no_grad():
        for _ in range(steps):
            idx = idx[:, -model.cfg.block_size:]  # the prompt's start is lost
            logits = model(idx)[:, -1, :] / temperature
            if top_k:
                logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
            idx = torch.cat([idx, torch.multinomial(torch.softmax(logits, -1), 1)], dim=1)
    return idx


def gen_starter(model, idx, steps, temperature=1.0, top_k=None):  # Exercise 4's starter
    for _ in range(steps):
        logits = model(idx)[:, -1, :] / temperature
        if top_k:
            topk_threshold = torch.topk(logits, top_k).values[:, [-1]]
            logits[logits < topk_threshold] = float('-inf')
        probs = torch.softmax(logits, dim=-1)
        nxt = torch.multinomial(probs, 1)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


@pytest.mark.parametrize("fn, expected", [
    (gen_argmax, {"argmax"}), (gen_temperature_multiplied, {"temperature_multiplied"}),
    (gen_temperature_ignored, {"temperature_ignored"}), (gen_top_k_ignored, {"top_k_ignored"}),
    (gen_top_k_one_too_many, {"top_k_off_by_one"}), (gen_top_k_le, {"top_k_one_short"}),
    (gen_first_position, {"first_position"}), (gen_no_crop, {"no_crop"}),
    (gen_crop_first, {"crop_first"}), (gen_crop_short, {"crop_short"}),
    (gen_crop_overwrites, {"crop_overwrites"}), (gen_train_mode, {"train_mode"}),
    (gen_grad_on, {"grad"}), (gen_starter, {"no_crop", "train_mode", "grad"}),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_generate_names_the_mistake(fn, expected):
    assert names(check.generate(fn)) == expected


def gen_softmax_over_batch(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    with torch.no_grad():
        for _ in range(steps):
            logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
            idx = torch.cat([idx, torch.multinomial(torch.softmax(logits, dim=0), 1)], dim=1)
    return idx


def gen_stale_context(model, idx, steps, temperature=1.0, top_k=None):
    model.eval()
    context = idx[:, -model.cfg.block_size:]  # cropped once, never updated
    with torch.no_grad():
        for _ in range(steps):
            logits = model(context)[:, -1, :] / temperature
            if top_k:
                logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
            idx = torch.cat([idx, torch.multinomial(torch.softmax(logits, -1), 1)], dim=1)
    return idx


gen_softmax_over_batch_top_k = _make_loop(softmax_dim=0)
gen_first_position_top_k_ignored = _make_loop(position=0, top_k_filter=lambda z, k: z)


def test_generate_names_the_softmax_over_the_batch_alone():
    """Not "context" too: the crop is right, the uniform tokens only look like a wrong one."""
    # this loop also never applies top_k, which the sampling at top_k 2 and 3 shows
    assert names(check.generate(gen_softmax_over_batch)) == {"softmax_dim", "top_k_ignored"}
    assert names(check.generate(gen_softmax_over_batch_top_k)) == {"softmax_dim"}


def test_generate_names_a_top_k_mistake_behind_the_first_position():
    assert names(check.generate(gen_first_position_top_k_ignored)) == {"first_position", "top_k_ignored"}


def test_generate_reports_what_it_cannot_name():
    assert names(check.generate(gen_stale_context)) == {"context"}


def test_generate_top_k_le_is_not_called_argmax():
    verdict = check.generate(gen_top_k_le)
    assert "argmax" not in verdict.mistakes and "<=" in repr(verdict)


# --- surprisal(logits, idx) ------------------------------------------------------------------

def _bits(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


def surp_nats(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0]


def surp_log10(logits, idx):
    p = torch.softmax(logits, dim=-1)[0, :-1].gather(1, idx[0, 1:, None])[:, 0]
    return -torch.log10(p)


def surp_sign(logits, idx):
    return -_bits(logits, idx)


def surp_no_shift(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, 1:].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


def surp_own_token(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, :-1].gather(1, idx[0, :-1, None])[:, 0] / math.log(2)


def surp_every_token(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0].gather(1, idx[0, :, None])[:, 0] / math.log(2)


def surp_shift_reversed(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, 1:].gather(1, idx[0, :-1, None])[:, 0] / math.log(2)


def surp_probabilities(logits, idx):
    p = torch.softmax(logits, dim=-1)
    return -p[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


def surp_wrong_axis(logits, idx):
    logp = torch.log_softmax(logits, dim=1)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


def surp_batch_axis(logits, idx):
    logp = torch.log_softmax(logits, dim=0)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)


def surp_sum(logits, idx):
    return _bits(logits, idx).sum()


def surp_mean(logits, idx):
    return _bits(logits, idx).mean()


def surp_mean_nats(logits, idx):  # the training loss
    return F.cross_entropy(logits[0, :-1], idx[0, 1:])


def surp_idx_without_batch(logits, idx):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[:-1].gather(2, idx[1:, :, None])[..., 0] / math.log(2)


def surp_starter(logits, idx):  # Exercise 5's starter
    logp = torch.log_softmax(logits, dim=-1)
    return -logp[0, :-1].gather(1, idx[0, 1:, None])[:, 0]


@pytest.mark.parametrize("fn, expected", [
    (surp_nats, {"nats"}), (surp_log10, {"log10"}), (surp_sign, {"sign"}),
    (surp_no_shift, {"no_shift"}), (surp_own_token, {"no_shift"}), (surp_every_token, {"no_shift"}),
    (surp_shift_reversed, {"shift_reversed"}), (surp_probabilities, {"probabilities"}),
    (surp_wrong_axis, {"wrong_axis"}), (surp_batch_axis, {"wrong_axis"}),
    (surp_sum, {"sum"}), (surp_mean, {"mean"}), (surp_mean_nats, {"nats", "mean"}),
    (surp_idx_without_batch, {"batch_axis"}), (surp_starter, {"nats"}),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_surprisal_names_the_mistake(fn, expected):
    assert names(check.surprisal(fn)) == expected


# --- vae_loss(xhat, x, mu, logvar, beta) ------------------------------------------------------

def _kl(mu, logvar):
    return -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


def _sse(xhat, x):
    return F.mse_loss(xhat, x, reduction="sum")


def vae_kl_sign(xhat, x, mu, logvar, beta):
    return _sse(xhat, x) + beta * 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


def vae_kl_no_half(xhat, x, mu, logvar, beta):
    return _sse(xhat, x) - beta * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


def vae_kl_no_factor(xhat, x, mu, logvar, beta):
    return _sse(xhat, x) + beta * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


def vae_logvar_as_log_sigma(xhat, x, mu, logvar, beta):
    kl = -0.5 * torch.sum(1 + 2 * logvar - mu.pow(2) - torch.exp(2 * logvar))
    return _sse(xhat, x) + beta * kl


def vae_exp_squared(xhat, x, mu, logvar, beta):
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp() ** 2)
    return _sse(xhat, x) + beta * kl


def vae_logvar_as_sigma(xhat, x, mu, logvar, beta):
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar ** 2)
    return _sse(xhat, x) + beta * kl


def vae_kl_missing_one(xhat, x, mu, logvar, beta):
    return _sse(xhat, x) + beta * -0.5 * torch.sum(logvar - mu.pow(2) - logvar.exp())


def vae_mean(xhat, x, mu, logvar, beta):  # Exercise 7's starter
    return F.mse_loss(xhat, x) + beta * _kl(mu, logvar)


def vae_mean_both(xhat, x, mu, logvar, beta):
    kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    return F.mse_loss(xhat, x) + beta * kl


def vae_recon_per_example(xhat, x, mu, logvar, beta):
    return _sse(xhat, x) / len(x) + beta * _kl(mu, logvar)


def vae_beta_squared(xhat, x, mu, logvar, beta):
    return _sse(xhat, x) + beta ** 2 * _kl(mu, logvar)


def vae_beta_on_recon(xhat, x, mu, logvar, beta):
    return beta * _sse(xhat, x) + _kl(mu, logvar)


def vae_one_minus_beta(xhat, x, mu, logvar, beta):
    return (1 - beta) * _sse(xhat, x) + beta * _kl(mu, logvar)


def vae_no_beta(xhat, x, mu, logvar, beta):
    return _sse(xhat, x) + _kl(mu, logvar)


def vae_half_squared_error(xhat, x, mu, logvar, beta):
    return 0.5 * _sse(xhat, x) + beta * _kl(mu, logvar)


def vae_bce(xhat, x, mu, logvar, beta):
    return F.binary_cross_entropy(xhat, x, reduction="sum") + beta * _kl(mu, logvar)


def vae_l1(xhat, x, mu, logvar, beta):
    return F.l1_loss(xhat, x, reduction="sum") + beta * _kl(mu, logvar)


def vae_doubled(xhat, x, mu, logvar, beta):
    return 2 * (_sse(xhat, x) + beta * _kl(mu, logvar))


def vae_per_example(xhat, x, mu, logvar, beta):
    recon = ((xhat - x) ** 2).sum(1)
    kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(1)
    return recon + beta * kl  # (N,): never reduced over the batch


@pytest.mark.parametrize("fn, expected", [
    (vae_kl_sign, {"kl_sign"}), (vae_kl_no_half, {"kl_half"}), (vae_kl_no_factor, {"kl_factor"}),
    (vae_logvar_as_log_sigma, {"logvar_as_log_sigma"}), (vae_exp_squared, {"logvar_as_log_sigma"}),
    (vae_logvar_as_sigma, {"logvar_as_sigma"}), (vae_kl_missing_one, {"kl_missing_one"}),
    (vae_mean, {"mean"}), (vae_mean_both, {"mean_both"}), (vae_recon_per_example, {"reduction"}),
    (vae_beta_squared, {"beta_squared"}), (vae_beta_on_recon, {"beta_on_recon"}),
    (vae_one_minus_beta, {"beta_one_minus"}), (vae_no_beta, {"no_beta"}),
    (vae_half_squared_error, {"recon_half"}), (vae_bce, {"recon_bce"}), (vae_l1, {"recon_l1"}),
    (vae_per_example, {"not_scalar"}), (vae_doubled, {"scale"}),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_vae_loss_names_the_mistake(fn, expected):
    assert names(check.vae_loss(fn)) == expected


def test_vae_mean_says_how_much_more_the_kl_weighs():
    assert "256 times" in repr(check.vae_loss(vae_mean))


# --- diffusion_loss(model, x0, t, eps, abar) --------------------------------------------------

def _rows(a):
    return a[:, None]


def diff_paper_t(model, x0, t, eps, abar):  # Exercise 7's starter
    a = abar[t - 1][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), eps)


def diff_paper_t_past_the_end(model, x0, t, eps, abar):
    a = abar[t + 1][:, None]
    xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
    return F.mse_loss(model(xt, t), eps)


def diff_no_rows(model, x0, t, eps, abar):
    xt = abar[t].sqrt() * x0 + (1 - abar[t]).sqrt() * eps
    return F.mse_loss(model(xt, t), eps)


def diff_no_sqrt(model, x0, t, eps, abar):
    a = _rows(abar[t])
    return F.mse_loss(model(a * x0 + (1 - a) * eps, t), eps)


def diff_sqrt_on_x0_only(model, x0, t, eps, abar):
    a = _rows(abar[t])
    return F.mse_loss(model(a.sqrt() * x0 + (1 - a) * eps, t), eps)


def diff_sqrt_on_eps_only(model, x0, t, eps, abar):
    a = _rows(abar[t])
    return F.mse_loss(model(a * x0 + (1 - a).sqrt() * eps, t), eps)


def diff_swapped(model, x0, t, eps, abar):
    a = _rows(abar[t])
    return F.mse_loss(model((1 - a).sqrt() * x0 + a.sqrt() * eps, t), eps)


def diff_cumprod_again(model, x0, t, eps, abar):
    a = _rows(torch.cumprod(abar, dim=0)[t])
    return F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps)


def diff_one_step_alpha(model, x0, t, eps, abar):
    alphas = torch.cat([abar[:1], abar[1:] / abar[:-1]])
    a = _rows(alphas[t])
    return F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps)


def diff_abar_as_betas(model, x0, t, eps, abar):
    a = _rows(torch.cumprod(1 - abar, dim=0)[t])
    return F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps)


def diff_model_sees_x0(model, x0, t, eps, abar):
    return F.mse_loss(model(x0, t), eps)


def diff_fresh_eps(model, x0, t, eps, abar):
    eps = torch.randn_like(x0)  # ignores the argument
    a = _rows(abar[t])
    return F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps)


def diff_fresh_eps_in_xt_only(model, x0, t, eps, abar):
    a = _rows(abar[t])
    xt = a.sqrt() * x0 + (1 - a).sqrt() * torch.randn_like(x0)
    return F.mse_loss(model(xt, t), eps)


def diff_fresh_t(model, x0, t, eps, abar):
    t = torch.randint(0, len(abar), t.shape)
    a = _rows(abar[t])
    return F.mse_loss(model(a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps)


def _xt(x0, t, eps, abar):
    a = _rows(abar[t])
    return a.sqrt() * x0 + (1 - a).sqrt() * eps


def diff_target_x0(model, x0, t, eps, abar):
    return F.mse_loss(model(_xt(x0, t, eps, abar), t), x0)


def diff_target_xt(model, x0, t, eps, abar):
    xt = _xt(x0, t, eps, abar)
    return F.mse_loss(model(xt, t), xt)


def diff_summed(model, x0, t, eps, abar):
    return F.mse_loss(model(_xt(x0, t, eps, abar), t), eps, reduction="sum")


def diff_summed_over_dims(model, x0, t, eps, abar):
    return ((model(_xt(x0, t, eps, abar), t) - eps) ** 2).sum(dim=1).mean()


def diff_per_example(model, x0, t, eps, abar):
    return ((model(_xt(x0, t, eps, abar), t) - eps) ** 2).mean(dim=1)  # (N,)


def diff_per_entry(model, x0, t, eps, abar):
    return F.mse_loss(model(_xt(x0, t, eps, abar), t), eps, reduction="none")  # (N, D)


def diff_model_paper_t(model, x0, t, eps, abar):
    return F.mse_loss(model(_xt(x0, t, eps, abar), t + 1), eps)


def diff_model_not_given_t(model, x0, t, eps, abar):
    return F.mse_loss(model(_xt(x0, t, eps, abar)), eps)


def diff_model_given_abar(model, x0, t, eps, abar):
    return F.mse_loss(model(_xt(x0, t, eps, abar), abar[t]), eps)


def diff_no_model(model, x0, t, eps, abar):
    return F.mse_loss(_xt(x0, t, eps, abar), eps)


@pytest.mark.parametrize("fn, expected", [
    (diff_paper_t, {"paper_t"}), (diff_no_sqrt, {"no_sqrt"}),
    (diff_sqrt_on_x0_only, {"sqrt_one_term"}), (diff_sqrt_on_eps_only, {"sqrt_one_term"}),
    (diff_swapped, {"swapped"}), (diff_cumprod_again, {"cumprod_again"}),
    (diff_one_step_alpha, {"alpha_t"}), (diff_abar_as_betas, {"abar_as_beta"}),
    (diff_model_sees_x0, {"model_x0"}), (diff_fresh_eps, {"fresh_eps"}),
    (diff_fresh_eps_in_xt_only, {"fresh_eps"}), (diff_fresh_t, {"fresh_t"}),
    (diff_target_x0, {"target_x0"}), (diff_target_xt, {"target_xt"}),
    (diff_summed, {"target_sum"}), (diff_summed_over_dims, {"target_sum"}),
    (diff_per_example, {"not_scalar"}), (diff_per_entry, {"not_scalar"}),
    (diff_model_paper_t, {"model_paper_t"}), (diff_model_not_given_t, {"no_t"}),
    (diff_model_given_abar, {"model_t"}), (diff_no_model, {"no_model"}),
    (diff_paper_t_past_the_end, {"raised"}), (diff_no_rows, {"raised"}),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_diffusion_loss_names_the_mistake(fn, expected):
    assert names(check.diffusion_loss(fn)) == expected


def test_diffusion_raised_errors_carry_their_hint():
    assert "[:, None]" in repr(check.diffusion_loss(diff_no_rows))
    assert "out of bounds" in repr(check.diffusion_loss(diff_paper_t_past_the_end))
    assert "abar[-1]" in repr(check.diffusion_loss(diff_paper_t))


# --- the reparameterisation -------------------------------------------------------------

def rep_logvar_as_sigma(mu, logvar):
    return mu + logvar * torch.randn_like(mu)


def rep_variance_as_sigma(mu, logvar):
    return mu + torch.exp(logvar) * torch.randn_like(mu)


def rep_log_sigma(mu, logvar):
    return mu + torch.exp(2 * logvar) * torch.randn_like(mu)


def rep_no_noise(mu, logvar):
    return mu


def rep_no_mean(mu, logvar):
    return torch.exp(0.5 * logvar) * torch.randn_like(mu)


def rep_torch_normal(mu, logvar):
    return torch.normal(mu, torch.exp(0.5 * logvar))


def rep_one_eps_for_all(mu, logvar):
    return mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape[-1])


@pytest.mark.parametrize("fn, expected", [
    (rep_logvar_as_sigma, {"logvar_as_sigma"}), (rep_variance_as_sigma, {"variance_as_sigma"}),
    (rep_log_sigma, {"log_sigma"}), (rep_no_noise, {"no_noise"}), (rep_no_mean, {"no_mean"}),
    (rep_torch_normal, {"torch_normal"}), (rep_one_eps_for_all, {"shared_eps"}),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_reparameterize_names_the_mistake(fn, expected):
    assert names(check.reparameterize(fn)) == expected
