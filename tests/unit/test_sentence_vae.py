"""The sentence VAE: shapes, the slide's lines, z reaching the decoder, the measurements, the cache."""

import json
import math
from dataclasses import replace

import pytest
import torch
from torch.distributions import Normal, kl_divergence

from rec11 import grammar as G
from rec11 import lm
from rec11 import sentence_vae as sv
from rec11.gpt import GPTConfig

TINY = sv.SentenceVAEConfig(
    decoder=GPTConfig(vocab_size=len(G.VOCAB), n_layer=1, n_head=2, d=16),
    z_dim=3, emb=8, hidden=16, steps=6, batch_size=16,
)


@pytest.fixture
def model():
    return sv.make(TINY).eval()


@pytest.fixture
def ids():
    return G.sample_ids(12, torch.Generator().manual_seed(3))  # (12, T)


# ---------------------------------------------------------------- the model


def test_shapes(model, ids):
    N, T = ids.shape
    assert model.encoder(ids).shape == (N, 2 * TINY.z_dim)
    logits, mu, logvar = model(ids)
    assert logits.shape == (N, T - 1, len(G.VOCAB))
    assert mu.shape == logvar.shape == (N, TINY.z_dim)


def test_forward_is_the_slides_two_lines(model, ids):
    torch.manual_seed(7)
    logits, mu, logvar = model(ids)
    torch.manual_seed(7)
    eps = torch.randn_like(mu)
    z = mu + torch.exp(0.5 * logvar) * eps
    torch.testing.assert_close(logits, model.decode(ids[:, :-1], z))
    torch.testing.assert_close(torch.cat([mu, logvar], 1), model.encoder(ids))


def test_encoder_reads_the_sentence_and_ignores_padding(model, ids):
    padded = torch.cat([ids, torch.full((len(ids), 3), G.PAD_ID)], dim=1)
    torch.testing.assert_close(model.encoder(padded), model.encoder(ids))
    changed = ids.clone()
    changed[:, 1] = G.STOI["a"] if changed[0, 1] != G.STOI["a"] else G.STOI["the"]
    assert (model.encoder(changed) - model.encoder(ids)).abs().max() > 1e-4


def test_the_decoder_receives_z(model, ids):
    inputs = ids[:, :-1]
    z = torch.randn(len(ids), TINY.z_dim)
    a, b = model.decode(inputs, z), model.decode(inputs, z + 1.0)
    assert (a - b).abs().max() > 1e-3
    # and the reconstruction term alone sends a gradient back through z to the encoder
    model.train()
    logits, mu, logvar = model(ids)  # noqa: RUF059
    sv.sentence_nll(logits, ids).sum().backward()
    assert model.encoder.out.weight.grad.abs().sum() > 0


def test_kl_is_nonnegative_zero_at_the_prior_and_matches_torch(ids):
    zeros = torch.zeros(4, 3)
    assert torch.equal(sv.kl_per_sentence(zeros, zeros), torch.zeros(4))
    mu, logvar = torch.randn(200, 5), 2 * torch.randn(200, 5)
    kl = sv.kl_per_sentence(mu, logvar)
    assert (kl >= 0).all()
    ref = kl_divergence(Normal(mu, torch.exp(0.5 * logvar)), Normal(0.0, 1.0)).sum(1)
    torch.testing.assert_close(kl, ref)


def test_loss_is_recon_plus_beta_kl_per_sentence(model, ids):
    logits, mu, logvar = model(ids)
    loss, recon, kl = sv.sentence_vae_loss(logits, ids, mu, logvar, beta=0.3)
    logp = torch.log_softmax(logits, -1).gather(2, ids[:, 1:, None]).squeeze(2)  # (N, T-1)
    by_hand = -(logp * (ids[:, 1:] != G.PAD_ID)).sum(1).mean()
    torch.testing.assert_close(recon, by_hand)
    assert kl >= 0
    torch.testing.assert_close(loss, recon + 0.3 * kl)


def test_word_dropout_blanks_words_only(ids):
    inputs = ids[:, :-1]
    assert torch.equal(sv.drop_words(inputs, 0.0), inputs)
    blanked = sv.drop_words(inputs, 1.0)
    words = inputs > G.EOS_ID
    assert (blanked[words] == sv.BLANK_ID).all() and torch.equal(blanked[~words], inputs[~words])
    assert (blanked[:, 0] == G.BOS_ID).all()
    many = G.sample_ids(2000, torch.Generator().manual_seed(0))[:, :-1]
    share = (sv.drop_words(many, 0.5, torch.Generator().manual_seed(1)) == sv.BLANK_ID)[many > G.EOS_ID]
    assert abs(share.float().mean().item() - 0.5) < 0.02


# ---------------------------------------------------------------- training and the cache


def test_training_is_deterministic_json_ready_and_leaves_the_callers_stream():
    cfg = replace(TINY, word_dropout=0.3)
    a, b = sv.make(cfg), sv.make(cfg)
    torch.manual_seed(5)
    expected = torch.rand(1)
    torch.manual_seed(5)
    info = sv.train(a, cfg)
    assert torch.equal(torch.rand(1), expected)
    info_b = sv.train(b, cfg)
    assert info["kl"] == info_b["kl"] and info["recon"] == info_b["recon"]
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(p, q), name
    assert len(info["kl"]) == len(info["recon"]) == cfg.steps
    assert all(k >= 0 for k in info["kl"])
    assert json.loads(json.dumps(info)) == info
    assert not a.training


def test_the_pages_runs_differ_in_one_setting_each():
    plain = sv.RUNS["plain"]
    assert (plain.beta, plain.word_dropout) == (1.0, 0.0)
    assert sv.RUNS["word dropout"] == replace(plain, word_dropout=0.75)
    assert sv.RUNS["low beta"] == replace(plain, beta=0.2)
    assert plain.decoder == lm.LMConfig().model  # the decoder is the language model's GPT, as large


# ---------------------------------------------------------------- measurements


def test_mutual_information_is_zero_for_one_posterior_and_log_n_for_separate_ones():
    N, Z = 50, 2
    mu, logvar = torch.zeros(N, Z), torch.zeros(N, Z)
    z = sv.sample_z(mu, logvar, torch.Generator().manual_seed(0))
    assert sv.mutual_information(mu, logvar, z) == pytest.approx(0.0, abs=1e-6)
    mu = 100 * torch.arange(N, dtype=torch.float32)[:, None].expand(N, Z)  # far apart
    logvar = torch.full((N, Z), -2.0)
    z = sv.sample_z(mu, logvar, torch.Generator().manual_seed(0))
    assert sv.mutual_information(mu, logvar, z) == pytest.approx(math.log(N), abs=1e-4)


def test_evaluate_finds_no_use_of_z_when_the_decoder_cannot_see_it(model, ids):
    with torch.no_grad():
        model.to_extra.weight.zero_()
        model.to_extra.bias.zero_()
    ev = sv.evaluate(model, ids, torch.Generator().manual_seed(0))
    assert ev["z_gap"] == pytest.approx(0.0, abs=1e-5)
    assert ev["own_z"] == pytest.approx(-ev["recon"])
    assert ev["kl"] >= 0 and len(ev["kl_per_dim"]) == TINY.z_dim
    assert sum(ev["kl_per_dim"]) == pytest.approx(ev["kl"], rel=1e-5)


def test_decoding_z_greedily_and_from_the_prior(model, ids):
    mu, _ = sv.posterior(model, ids)
    out = sv.reconstruct(model, ids)
    first = model.decode(torch.full((len(ids), 1), G.BOS_ID), mu)[:, -1].argmax(-1)  # (N,)
    assert (out[:, 0] == G.BOS_ID).all() and torch.equal(out[:, 1], first)
    a = sv.sample_prior(model, 6, torch.Generator().manual_seed(0))
    b = sv.sample_prior(model, 6, torch.Generator().manual_seed(0))
    assert torch.equal(a, b) and a.shape[0] == 6
    assert 0 <= sv.exact_share(model, ids) <= 1


def test_each_row_is_decoded_from_its_own_z_as_rows_end(model):
    z = torch.randn(8, model.cfg.z_dim, generator=torch.Generator().manual_seed(0))
    together = sv.decode_z(model, z, temperature=0)
    alone = [sv.decode_z(model, z[i : i + 1], temperature=0) for i in range(len(z))]
    assert lm.texts(together) == [lm.texts(row)[0] for row in alone]


def test_ends_in_place_and_the_probe(model):
    rows = [G.encode(s) for s in ["the horse fell", "a dog ran past the barn",
                                  "the horse raced past the barn fell"]]
    T = max(map(len, rows))
    ids = torch.tensor([r + [G.PAD_ID] * (T - len(r)) for r in rows])
    assert sv.ends_in_place(ids).tolist() == [0.0, 1.0, 0.0]
    train, test = (G.sample_ids(80, torch.Generator().manual_seed(s)) for s in (0, 1))
    result = sv.probe(model, train, test, torch.Generator().manual_seed(0))
    assert set(result) == {"chance", "sampled", "mean"}
    assert all(0 <= v <= 1 for v in result.values())


def test_true_nll_is_the_grammars_own():
    ids = torch.tensor([G.encode("the horse fell")])
    assert sv.true_nll(ids) == pytest.approx(-math.log(G.prob("the horse fell")))
    assert lm.texts(ids) == ["the horse fell"]


# ---------------------------------------------------------------- the page's finding, over seeds
