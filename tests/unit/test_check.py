"""The exercises' checks pass the right answer and name each classic mistake, and only it."""

import math

import pytest
import torch
import torch.nn.functional as F

from rec11 import attention as att
from rec11 import check, diffusion, lm, vae


def names(verdict):
    assert verdict.lines and all(line.startswith("Not yet: ") for line in verdict.lines), verdict
    return set(verdict.mistakes)


def attention_with(dim=-1, scale=True, masking="before"):
    def fn(Q, K, V, mask):
        scores = Q @ K.transpose(-2, -1)
        if scale:
            scores = scores / math.sqrt(K.size(-1))
        if masking == "before":
            scores = scores.masked_fill(mask == 0, float("-inf"))
        if masking == "zero":
            scores = scores.masked_fill(mask == 0, 0)
        A = torch.softmax(scores, dim=dim)
        if masking == "after":
            A = A.masked_fill(mask == 0, 0)
        return A @ V
    return fn


def test_attention_passes_the_package_and_names_each_detail():
    assert check.attention(lambda *a: att.attention(*a))
    assert check.attention(lambda Q, K, V, m: F.scaled_dot_product_attention(Q, K, V, attn_mask=m.bool()))
    assert check.attention(attention_with()).ok
    assert names(check.attention(attention_with(dim=-2))) == {"dim"}
    assert names(check.attention(attention_with(masking="after"))) == {"mask_after"}
    assert names(check.attention(attention_with(masking="zero"))) == {"mask_zero"}
    assert names(check.attention(attention_with(masking="none"))) == {"no_mask"}
    assert names(check.attention(attention_with(scale=False))) == {"no_scale"}
    all_three = check.attention(attention_with(dim=-2, scale=False, masking="after"))
    assert names(all_three) == {"dim", "mask_after", "no_scale"}
    assert "your rows do not sum to 1: the mask is applied after the softmax" in repr(all_three)


def test_attention_reports_a_wrong_shape_and_an_error():
    assert names(check.attention(lambda Q, K, V, m: Q)) == {"shape"}
    verdict = check.attention(lambda Q, K, V, m: Q @ K.permute(2, 1, 0))  # K.T of a batch
    assert names(verdict) == {"raised"} and "RuntimeError" in repr(verdict)


def test_split_and_merge_heads():
    assert check.split_heads(att.split_heads) and check.merge_heads(att.merge_heads)
    N_T = lambda x: (x.shape[0], x.shape[1])
    assert names(check.split_heads(lambda x, H: x.view(x.shape[0], H, x.shape[1], -1))) == {"view_without_transpose"}
    assert names(check.split_heads(lambda x, H: x.view(*N_T(x), H, -1))) == {"no_transpose"}
    assert names(check.merge_heads(lambda x: x.reshape(x.shape[0], x.shape[2], -1))) == {"reshape_without_transpose"}
    verdict = check.merge_heads(lambda x: x.transpose(1, 2).view(x.shape[0], x.shape[2], -1))
    assert "use reshape" in repr(verdict)


def test_padding_mask():
    real = lambda L, T: torch.arange(T)[None, :] < L[:, None]  # (N, T)
    assert check.padding_mask(lambda L, T: real(L, T)[:, None, None, :])
    assert names(check.padding_mask(real)) == {"no_axes"}
    assert names(check.padding_mask(lambda L, T: real(L, T)[:, None, :, None])) == {"masks_queries"}
    assert names(check.padding_mask(lambda L, T: ~real(L, T)[:, None, None, :])) == {"inverted"}
    assert names(check.padding_mask(lambda L, T: torch.ones(len(L), 1, 1, T))) == {"nothing"}


def loop(crop=True, eval_mode=True, no_grad=True, pick="sample", temperature_op="divide",
         top_k_extra=0, position=-1):
    def generate(model, idx, steps, temperature=1.0, top_k=None):
        if eval_mode:
            model.eval()
        with torch.set_grad_enabled(not no_grad):
            for _ in range(steps):
                context = idx[:, -model.cfg.block_size:] if crop else idx
                logits = model(context)[:, position, :]
                logits = logits / temperature if temperature_op == "divide" else logits * temperature
                if top_k:
                    k = top_k + top_k_extra
                    logits[logits < torch.topk(logits, k).values[:, [-1]]] = float("-inf")
                probs = torch.softmax(logits, dim=-1)
                nxt = probs.argmax(-1, keepdim=True) if pick == "argmax" else torch.multinomial(probs, 1)
                idx = torch.cat([idx, nxt], dim=1)
        return idx
    return generate


def test_generate_passes_a_right_loop():
    verdict = check.generate(loop())
    assert verdict.ok and repr(verdict).startswith("Right: ")


@pytest.mark.parametrize("mistake, kwargs", [
    ("no_crop", {"crop": False}), ("train_mode", {"eval_mode": False}), ("grad", {"no_grad": False}),
    ("argmax", {"pick": "argmax"}), ("temperature_multiplied", {"temperature_op": "multiply"}),
    ("top_k_off_by_one", {"top_k_extra": 1}), ("first_position", {"position": 0})])
def test_generate_names_each_mistake(mistake, kwargs):
    assert names(check.generate(loop(**kwargs))) == {mistake}


def test_generate_names_several_at_once():
    assert names(check.generate(loop(crop=False, eval_mode=False, no_grad=False, pick="argmax"))) == {
        "no_crop", "train_mode", "grad", "argmax"}


def test_surprisal():
    right = lambda l, i: -torch.log_softmax(l, -1)[0, :-1].gather(1, i[0, 1:, None]) / math.log(2)
    assert check.surprisal(right)
    assert check.surprisal(lambda l, i: lm.surprisal(lambda _: l, i)[0])
    assert names(check.surprisal(lambda l, i: right(l, i) * math.log(2))) == {"nats"}
    assert names(check.surprisal(lambda l, i: -right(l, i))) == {"sign"}
    assert names(check.surprisal(lambda l, i: -torch.log_softmax(l, -1)[0, 1:].gather(1, i[0, 1:, None])
                                 / math.log(2))) == {"no_shift"}
    assert names(check.surprisal(lambda l, i: -torch.log_softmax(l, 1)[0, :-1].gather(1, i[0, 1:, None])
                                 / math.log(2))) == {"wrong_axis"}
    assert names(check.surprisal(lambda l, i: torch.zeros(l.shape[1]))) == {"length"}


def test_vae_loss():
    kl = lambda mu, lv: -0.5 * torch.sum(1 + lv - mu.pow(2) - lv.exp())
    assert check.vae_loss(lambda xh, x, mu, lv, b: vae.vae_loss(xh, x, mu, lv, b)[0])
    assert check.vae_loss(lambda xh, x, mu, lv, b: (F.mse_loss(xh, x, reduction="sum") + b * kl(mu, lv)) / len(x))
    mean = check.vae_loss(lambda xh, x, mu, lv, b: F.mse_loss(xh, x) + b * kl(mu, lv))
    assert names(mean) == {"mean"} and "256 times" in repr(mean)
    assert names(check.vae_loss(lambda xh, x, mu, lv, b: F.mse_loss(xh, x, reduction="sum")
                                - b * kl(mu, lv))) == {"kl_sign"}
    assert names(check.vae_loss(lambda xh, x, mu, lv, b: F.mse_loss(xh, x, reduction="sum")
                                + kl(mu, lv))) == {"no_beta"}
    assert names(check.vae_loss(lambda xh, x, mu, lv, b: F.mse_loss(xh, x, reduction="sum") / len(x)
                                + b * kl(mu, lv))) == {"reduction"}


def diffusion_step(index=0, model_t=0, target="eps", rows=True):
    def fn(model, x0, t, eps, abar):
        a = abar[t + index]
        if rows:
            a = a[:, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        return F.mse_loss(model(xt, t + model_t), eps if target == "eps" else x0)
    return fn


def test_diffusion_loss():
    assert check.diffusion_loss(diffusion_step())
    assert check.diffusion_loss(lambda model, x0, t, eps, abar: F.mse_loss(
        model(diffusion.q_sample(x0, t, eps, abar), t), eps))
    paper = check.diffusion_loss(diffusion_step(index=-1))
    assert names(paper) == {"paper_t"} and "abar[-1]" in repr(paper)
    assert names(check.diffusion_loss(diffusion_step(model_t=1))) == {"model_paper_t"}
    assert names(check.diffusion_loss(diffusion_step(target="x0"))) == {"target_x0"}
    assert "[:, None]" in repr(check.diffusion_loss(diffusion_step(rows=False)))
    assert "out of bounds" in repr(check.diffusion_loss(diffusion_step(index=1)))
