"""A check names a mistake only when it is certain, and otherwise shows a counterexample
that is real: the input it names, run again, shows the difference it reports."""

import math
import re

import torch
import torch.nn.functional as F

from rec11 import attention as ref
from rec11 import check


def _keys(lengths, T):
    return torch.arange(T)[None, :] < lengths[:, None]  # (N, T)


def pad_causal_keeps_future(lengths, T):
    """The padding part right; the causal part keeps the future instead of the past."""
    return _keys(lengths, T)[:, None, None, :] & torch.triu(torch.ones(T, T)).bool()


def pad_causal_strictly_future(lengths, T):
    """Keeps only keys after the query: no mistake the check knows by name."""
    T_ = torch.arange(T)
    return _keys(lengths, T)[:, None, None, :] & (T_[None, :] > T_[:, None])


def pad_causal_hides_self(lengths, T):
    causal = torch.tril(torch.ones(T, T), diagonal=-1).bool()  # misses the diagonal
    return _keys(lengths, T)[:, None, None, :] & causal


def test_a_padding_mask_with_a_wrong_causal_part_is_not_told_its_padding_is_wrong():
    assert check.padding_mask(pad_causal_keeps_future).mistakes == ["causal_inverted"]
    assert check.padding_mask(pad_causal_hides_self).mistakes == ["causal_diagonal"]
    verdict = check.padding_mask(pad_causal_strictly_future)
    assert verdict.mistakes == ["differs"] and "Try:" in repr(verdict), verdict


def test_uniform_noise_is_named_as_such_not_as_a_wrong_mean():
    verdict = check.reparameterize(lambda mu, lv: mu + torch.exp(0.5 * lv) * torch.rand_like(mu))
    assert verdict.mistakes == ["uniform"], verdict


def test_a_detached_z_is_not_called_torch_normal():
    verdict = check.reparameterize(
        lambda mu, lv: (mu + torch.exp(0.5 * lv) * torch.randn_like(mu)).detach())
    assert not verdict.ok and "torch_normal" not in verdict.mistakes, verdict
    assert "no gradient flows back" in repr(verdict)


def test_beta_on_both_terms_is_named_and_the_terms_are_not_blamed():
    def vae_loss(xhat, x, mu, logvar, beta):
        recon = F.mse_loss(xhat, x, reduction="sum")
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return beta * (recon + kl)
    assert check.vae_loss(vae_loss).mistakes == ["beta_on_both"]


def test_autograd_left_off_is_named_and_switched_back_on():
    def generate(model, idx, steps, temperature=1.0, top_k=None):
        torch.set_grad_enabled(False)  # leaks: a plain statement, not a context
        model.eval()
        for _ in range(steps):
            logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
            idx = torch.cat([idx, torch.multinomial(torch.softmax(logits, -1), 1)], dim=1)
        return idx
    verdict = check.generate(generate)
    assert verdict.mistakes == ["grad_leak"]
    assert torch.is_grad_enabled(), "the check must leave autograd as it found it"


def _counterexample(verdict):
    """(check name, case) that a verdict's "Try: ... check.inputs(name, k)" points to."""
    found = re.search(r"check\.inputs\('(\w+)', (\d+)\)", repr(verdict))
    assert found and "Try:" in repr(verdict), verdict
    return found.group(1), int(found.group(2))


def test_an_unnamed_attention_mistake_shows_a_real_counterexample():
    def attention(Q, K, V, mask):  # scores squared before the softmax: no mistake by name
        scores = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))) ** 2
        return torch.softmax(scores.masked_fill(mask == 0, float("-inf")), dim=-1) @ V
    verdict = check.attention(attention)
    assert verdict.mistakes == ["differs"], verdict
    name, k = _counterexample(verdict)
    Q, K, V, mask = check.inputs(name, k)
    assert not torch.allclose(attention(Q, K, V, mask), ref.attention(Q, K, V, mask)[0])
    assert k == 0, "the smallest case that differs comes first"


def test_a_split_that_is_right_only_for_one_head_size_shows_where_it_fails():
    def split_heads(x, H):
        N, T, d = x.shape  # noqa: RUF059
        return x.view(N, T, H, 4).transpose(1, 2)  # the head size typed as 4
    verdict = check.split_heads(split_heads)
    name, k = _counterexample(verdict)
    x, H = check.inputs(name, k)
    assert x.shape[-1] // H != 4, "the case named is one where the head size is not 4"


def test_a_counterexample_names_a_case_on_which_the_answer_really_differs():
    def surprisal(logits, idx):  # bits of the most likely token, not of the next one
        logp = torch.log_softmax(logits, dim=-1)[0, :-1]
        return -logp.max(-1).values / math.log(2)
    verdict = check.surprisal(surprisal)
    name, k = _counterexample(verdict)
    logits, idx = check.inputs(name, k)
    right = -torch.log_softmax(logits, -1)[0, :-1].gather(1, idx[0, 1:, None])[:, 0] / math.log(2)
    assert not torch.allclose(surprisal(logits, idx), right)


def test_every_case_of_every_battery_is_fresh_each_time():
    """A student's in-place edit of an input cannot reach the next case or run."""
    Q, *_ = check.inputs("attention", 0)
    Q.zero_()
    assert check.inputs("attention", 0)[0].abs().sum() > 0


def _attention(scores_of, weights=lambda A: A, fill=float("-inf")):
    def attention(Q, K, V, mask):
        scores = scores_of(Q, K, V).masked_fill(mask == 0, fill)
        return weights(torch.softmax(scores, dim=-1)) @ V
    return attention


ATTENTION_SLIPS = [  # each used to get the same "not in a way this check recognises"
    (_attention(lambda Q, K, V: Q @ K.transpose(-2, -1) / Q.size(-1) ** 1 / 2), "scale_half"),
    (_attention(lambda Q, K, V: Q @ K.transpose(-2, -1) / math.sqrt(V.size(-1))), "scale_dv"),
    (_attention(lambda Q, K, V: K @ Q.transpose(-2, -1) / math.sqrt(Q.size(-1))), "keys_queries"),
    (_attention(lambda Q, K, V: Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1)),
                weights=lambda A: A.transpose(-2, -1)), "weights_transposed"),
    (_attention(lambda Q, K, V: Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1)), fill=-10.0),
     "fill_finite"),
]


def test_attention_names_the_slips_it_used_to_lump_together():
    for fn, name in ATTENTION_SLIPS:
        assert check.attention(fn).mistakes == [name]
