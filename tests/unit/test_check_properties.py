"""The checks hold for answers they were not built from: families of answers, each
accepted if and only if it is right.

Each family is a function of a few choices a student makes (the axis, the divisor, where a
threshold comes from). Where the family is small, every member is tried, and "right" is
judged on the test's own inputs, not the check's. Where it is large (attention, top k),
Hypothesis draws members and inputs: an answer that differs from the reference on a drawn
input must be refused. The draws are derandomised, so every run tries the same answers.
"""

import functools
import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rec11 import attention as ref
from rec11 import check

PROPERTY = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


# --- attention --------------------------------------------------------------------------------

def attention_answer(power, divisor, fill, dim, mask_t):
    def attention(Q, K, V, mask):
        d = {"k": Q.size(-1), "v": V.size(-1)}[divisor]
        mask = mask.transpose(-2, -1) if mask_t else mask
        scores = Q @ K.transpose(-2, -1) / d ** power
        A = torch.softmax(scores.masked_fill(mask == 0, fill), dim=dim)
        return A @ V
    return attention


@functools.cache
def attention_verdict(*choice):
    return check.attention(attention_answer(*choice)).ok


ATTENTION_CHOICES = st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from("kv"),
                              st.sampled_from([float("-inf"), -1e9, -10.0, 0.0]),
                              st.sampled_from([-1, -2]), st.booleans())


@st.composite
def attention_inputs(draw):
    """Q, K, V and a mask in which every query keeps a key; scores of either size."""
    N, T_q, T_k = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 5))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    spread = draw(st.sampled_from([1.0, 6.0]))
    Q, K = (spread * torch.randn(N, T, d_k, generator=g) for T in (T_q, T_k))
    V = torch.randn(N, T_k, d_v, generator=g)
    mask = torch.rand(T_q, T_k, generator=g) < 0.6
    mask[torch.arange(T_q), torch.arange(T_q) % T_k] = True
    return Q, K, V, mask


def differs(fn, want, *args) -> bool:
    try:
        got = fn(*args)
    except (RuntimeError, KeyError):
        return True  # raising on a valid input is wrong too
    return got.shape != want.shape or not torch.allclose(got, want, atol=1e-4, equal_nan=True)


@PROPERTY
@given(ATTENTION_CHOICES, attention_inputs())
def test_attention_refuses_every_answer_that_differs_on_a_drawn_input(choice, inputs):
    Q, K, V, mask = inputs
    fn = attention_answer(*choice)
    if differs(fn, ref.attention(Q, K, V, mask)[0], Q, K, V, mask):
        assert not attention_verdict(*choice), f"{choice} differs on {tuple(Q.shape)} and passed"


def test_attention_accepts_the_right_members_of_the_family():
    for fill in (float("-inf"), -1e9):
        assert attention_verdict(0.5, "k", fill, -1, False)


# --- split and merge: every order of the four axes ------------------------------------------

AXES = ["N", "T", "H", "h"]  # h: the head size d/H


def split_answer(view_order, permute, head_size):
    """x.view(the sizes in ``view_order``).permute(``permute``): a student's split."""
    def split_heads(x, H):
        N, T, d = x.shape
        size = {"N": N, "T": T, "H": H, "h": head_size or d // H}
        return x.view(*(size[a] for a in view_order)).permute(*permute)
    return split_heads


@functools.cache
def split_verdict(view_order, permute, head_size):
    return check.split_heads(split_answer(view_order, permute, head_size)).ok


# Shapes on which no two axes have the same size: an answer that agrees on all of them
# reads every axis right. They are the test's own, not the check's.
ORACLE_SHAPES = [(3, 5, 2, 4), (2, 3, 4, 1), (4, 1, 3, 2), (1, 2, 5, 3)]  # (N, T, H, h)


def right_on_every_shape(fn, reference, make) -> bool:
    return not any(differs(fn, reference(*args), *args)
                   for args in (make(*shape) for shape in ORACLE_SHAPES))


@pytest.mark.parametrize("head_size", [None, 4])
def test_split_heads_accepts_exactly_the_right_orders_of_all_576(head_size):
    """Every order of the view's four sizes, with every permutation after it."""
    make = lambda N, T, H, h: (torch.randn(N, T, H * h), H)
    for view_order in itertools.permutations(AXES):
        for permute in itertools.permutations(range(4)):
            fn = split_answer(view_order, permute, head_size)
            right = right_on_every_shape(fn, ref.split_heads, make)
            assert split_verdict(view_order, permute, head_size) == right, (view_order, permute)


def test_split_heads_accepts_the_right_order():
    assert split_verdict(("N", "T", "H", "h"), (0, 2, 1, 3), None)


def merge_answer(unpack, permute):
    """out.permute(``permute``).reshape(N, T, H * d_h), with the sizes unpacked in the
    order ``unpack`` (a student who writes ``H, N, T, d_h = out.shape``)."""
    def merge_heads(out):
        size = dict(zip(unpack, out.shape))
        return out.permute(*permute).reshape(size["N"], size["T"], size["H"] * size["h"])
    return merge_heads


@functools.cache
def merge_verdict(unpack, permute):
    return check.merge_heads(merge_answer(unpack, permute)).ok


def test_merge_heads_accepts_exactly_the_right_orders_of_all_576():
    """Every order of unpacking the four sizes, with every permutation before the reshape."""
    make = lambda N, T, H, h: (torch.randn(N, H, T, h),)
    for unpack in itertools.permutations(AXES):
        for permute in itertools.permutations(range(4)):
            fn = merge_answer(unpack, permute)
            right = right_on_every_shape(fn, ref.merge_heads, make)
            assert merge_verdict(unpack, permute) == right, (unpack, permute)


def test_merge_heads_accepts_the_right_order():
    assert merge_verdict(("N", "H", "T", "h"), (0, 2, 1, 3))


# --- top k: where each row's threshold comes from -------------------------------------------

def top_k_filter(source, strict, extra):
    def keep(logits, k):
        kth = torch.topk(logits, min(k + extra, logits.size(-1))).values[:, -1]  # (N,)
        threshold = {"row": kth[:, None], "row0": kth[0], "last": kth[-1],
                     "min": kth.min(), "max": kth.max(), "mean": kth.mean()}[source]
        hide = logits < threshold if strict else logits <= threshold
        return logits.masked_fill(hide, float("-inf"))
    return keep


def generate_answer(source, strict, extra):
    keep = top_k_filter(source, strict, extra)

    @torch.no_grad()
    def generate(model, idx, steps, temperature=1.0, top_k=None):
        model.eval()
        for _ in range(steps):
            logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
            if top_k:
                logits = keep(logits, top_k)
            nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
            idx = torch.cat([idx, nxt], dim=1)
        return idx
    return generate


@functools.cache
def generate_verdict(*choice):
    return check.generate(generate_answer(*choice)).ok


@PROPERTY
@given(st.sampled_from(["row", "row0", "last", "min", "max", "mean"]), st.booleans(),
       st.sampled_from([0, 1]), st.integers(2, 6), st.integers(1, 5),
       st.integers(0, 2**16))
def test_generate_refuses_every_top_k_that_keeps_other_tokens_in_a_drawn_batch(
        source, strict, extra, N, k, seed):
    logits = torch.randn(N, 7, generator=torch.Generator().manual_seed(seed))  # no ties
    kept = top_k_filter(source, strict, extra)(logits, k).isfinite()
    right = top_k_filter("row", True, 0)(logits, k).isfinite()
    if not torch.equal(kept, right):
        assert not generate_verdict(source, strict, extra)


def test_generate_accepts_each_rows_own_threshold():
    assert generate_verdict("row", True, 0)


# --- the reparameterisation: the noise's shape, its seed and the spread ---------------------

def reparameterize_answer(eps_shape, power, seed, noise):
    def reparameterize(mu, logvar):
        if seed is not None:
            torch.manual_seed(seed)
        shape = {"full": mu.shape, "row": (mu.size(0), 1), "column": (1, mu.size(1))}[eps_shape]
        eps = torch.randn(shape) if noise == "normal" else math.sqrt(12) * (torch.rand(shape) - 0.5)
        return mu + torch.exp(power * logvar) * eps.to(mu.dtype)
    return reparameterize


@PROPERTY
@given(st.sampled_from(["full", "row", "column"]), st.sampled_from([0.25, 0.5, 1.0]),
       st.one_of(st.none(), st.integers(0, 2**31 - 1)), st.sampled_from(["normal", "uniform"]))
def test_reparameterize_accepts_only_fresh_independent_normal_noise(eps_shape, power, seed,
                                                                      noise):
    right = (eps_shape, power, seed, noise) == ("full", 0.5, None, "normal")
    verdict = check.reparameterize(reparameterize_answer(eps_shape, power, seed, noise))
    assert verdict.ok == right, verdict


# --- the VAE loss: reductions and where beta goes -------------------------------------------

REDUCE = {"sum": lambda t: t.sum(), "batch": lambda t: t.sum() / t.size(0),
          "mean": lambda t: t.mean()}


def vae_answer(recon_reduce, kl_reduce, beta_on, half):
    def vae_loss(xhat, x, mu, logvar, beta):
        recon = (0.5 if half else 1.0) * REDUCE[recon_reduce]((xhat - x) ** 2)
        kl = REDUCE[kl_reduce](-0.5 * (1 + logvar - mu ** 2 - logvar.exp()))
        return {"kl": recon + beta * kl, "both": beta * (recon + kl),
                "squared": recon + beta ** 2 * kl}[beta_on]
    return vae_loss


@PROPERTY
@given(st.sampled_from(list(REDUCE)), st.sampled_from(list(REDUCE)),
       st.sampled_from(["kl", "both", "squared"]), st.booleans())
def test_vae_loss_accepts_only_a_shared_reduction_with_beta_on_the_kl(recon_reduce, kl_reduce,
                                                                     beta_on, half):
    # "mean" divides each term by its own size (N*D against N*Z): a different reduction
    shared = recon_reduce == kl_reduce != "mean"
    right = shared and beta_on == "kl" and not half
    verdict = check.vae_loss(vae_answer(recon_reduce, kl_reduce, beta_on, half))
    assert verdict.ok == right, verdict


# --- the diffusion step ----------------------------------------------------------------------

def diffusion_answer(shift, model_shift, first_row, target, detach):
    def diffusion_loss(model, x0, t, eps, abar):
        s = t[:1].expand_as(t) if first_row else t
        a = abar[s + shift][:, None]  # (N, 1)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        guess = model(xt, t + model_shift)
        guess = guess.detach() if detach else guess
        return F.mse_loss(guess, {"eps": eps, "x0": x0}[target])
    return diffusion_loss


@PROPERTY
@given(st.sampled_from([0, -1]), st.sampled_from([0, 1]), st.booleans(),
       st.sampled_from(["eps", "x0"]), st.booleans())
def test_diffusion_loss_accepts_only_the_right_step(shift, model_shift, first_row, target,
                                                   detach):
    right = (shift, model_shift, first_row, target, detach) == (0, 0, False, "eps", False)
    verdict = check.diffusion_loss(diffusion_answer(shift, model_shift, first_row, target,
                                                    detach))
    assert verdict.ok == right, verdict


# --- surprisal -------------------------------------------------------------------------------

def surprisal_answer(base, shift):
    def surprisal(logits, idx):
        logp = torch.log_softmax(logits, dim=-1)[0]  # (T, V)
        rows, tokens = {"right": (logp[:-1], idx[0, 1:]), "none": (logp[1:], idx[0, 1:]),
                        "reversed": (logp[1:], idx[0, :-1])}[shift]
        return -rows.gather(1, tokens[:, None])[:, 0] / math.log(base)
    return surprisal


@PROPERTY
@given(st.sampled_from([2, math.e, 10]), st.sampled_from(["right", "none", "reversed"]))
def test_surprisal_accepts_only_bits_of_the_next_token(base, shift):
    right = base == 2 and shift == "right"
    assert check.surprisal(surprisal_answer(base, shift)).ok == right
