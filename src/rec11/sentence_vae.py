"""A sentence VAE on the grammar, where posterior collapse happens (Bowman et al. 2016).

The encoder is a GRU that reads the whole sentence and outputs the mean and
log-variance of q(z|x). The decoder is the book's tiny GPT (``rec11.gpt``), which
gets z at every position through its ``extra`` input. That decoder is
autoregressive: it predicts each word from the words before it, and on its own it
can model the grammar almost perfectly (``rec11.lm``). So it has no need of z, and
with the plain ELBO (beta = 1) the KL term pushes q(z|x) onto the prior: posterior
collapse. Bowman et al.'s remedies weaken the decoder or cheapen the KL:

- word dropout: replace a share of the decoder's input words with a blank, so the
  words before a position no longer suffice and z becomes worth paying for;
- a smaller beta: each nat that z carries costs less.

Every number is per sentence, in nats: the reconstruction term is the decoder's
cross-entropy of the whole sentence (words and </s>) given z, under teacher forcing.

Shape letters: N batch, T sequence length, V vocabulary, Z latent dimensions,
d the GPT's width.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import torch
from torch import nn
from torch.nn import functional as F

from rec11 import cache, gpt, grammar, lm, vae
from rec11.seeds import shifted

# Bowman et al. (2016) replace dropped words with <unk>; the grammar has none, and
# <pad> is never a target and otherwise appears as an input only after </s>, so it
# serves as the blank that says "a word was here".
BLANK_ID = grammar.PAD_ID

@dataclass(frozen=True)
class SentenceVAEConfig:
    decoder: gpt.GPTConfig = field(default_factory=lambda: gpt.GPTConfig(vocab_size=len(grammar.VOCAB)))
    language: grammar.GrammarConfig = grammar.GrammarConfig()
    z_dim: int = 8  # Z
    emb: int = 32  # encoder word embedding width
    hidden: int = 64  # encoder GRU width
    beta: float = 1.0  # 1 is the ELBO itself; no annealing
    word_dropout: float = 0.0  # share of the decoder's input words replaced by the blank
    steps: int = 800
    batch_size: int = 64  # sentences per step, freshly drawn from the grammar
    lr: float = 3e-3
    cooldown: int = 100  # the last steps, over which the rate falls linearly to 0 (see train)
    seed: int = 0


class Encoder(nn.Module):
    """A GRU over the sentence; its state at </s> gives 2Z numbers: mu, then log-variance."""

    def __init__(self, cfg: SentenceVAEConfig):
        super().__init__()
        self.wte = nn.Embedding(cfg.decoder.vocab_size, cfg.emb, padding_idx=grammar.PAD_ID)
        self.gru = nn.GRU(cfg.emb, cfg.hidden, batch_first=True)
        self.out = nn.Linear(cfg.hidden, 2 * cfg.z_dim)

    def forward(self, ids):
        """ids: (N, T), <s> ... </s> then padding -> (N, 2Z)."""
        states, _ = self.gru(self.wte(ids))  # (N, T, hidden)
        # padding comes after </s>, so the state at </s> has read exactly the sentence
        last = (ids != grammar.PAD_ID).sum(1) - 1  # (N,) position of </s>
        return self.out(states[torch.arange(len(ids)), last])  # (N, 2Z)


def drop_words(inputs, p: float, generator=None):
    """Replace each word of the decoder's input (not <s>, not padding) by the blank with probability p."""
    if p == 0:
        return inputs
    words = inputs > grammar.EOS_ID  # (N, T): <pad>, <s>, </s> are ids 0, 1, 2
    drop = torch.rand(inputs.shape, generator=generator) < p  # (N, T)
    return inputs.masked_fill(words & drop, BLANK_ID)


class SentenceVAE(nn.Module):
    def __init__(self, cfg: SentenceVAEConfig):
        super().__init__()
        self.cfg = cfg
        self.encoder = Encoder(cfg)
        self.to_extra = nn.Linear(cfg.z_dim, cfg.decoder.d)  # z -> a vector added to every input
        self.decoder = gpt.GPT(cfg.decoder)

    def decode(self, inputs, z):
        """inputs: (N, T) decoder input ids, z: (N, Z) -> next-token logits (N, T, V)."""
        return self.decoder(inputs, extra=self.to_extra(z))

    def forward(self, ids, word_dropout: float = 0.0):
        """ids: (N, T). Returns logits (N, T-1, V) for ids[:, 1:], mu (N, Z), logvar (N, Z)."""
        encoder, x = self.encoder, ids
        mu, logvar = encoder(x).chunk(2, dim=1)  # (N, Z), (N, Z)
        z = vae.reparameterize(mu, logvar)  # (N, Z)
        inputs = drop_words(ids[:, :-1], word_dropout)  # (N, T-1)
        return self.decode(inputs, z), mu, logvar


def sentence_nll(logits, ids):
    """(N,) -log p(sentence | z) in nats: the cross-entropy summed over its tokens (padding excluded)."""
    return F.cross_entropy(
        logits.transpose(1, 2), ids[:, 1:], ignore_index=grammar.PAD_ID, reduction="none"
    ).sum(1)


def kl_per_sentence(mu, logvar):
    """(N,) KL( q(z|x) || N(0, I) ) of each sentence, in nats."""
    return vae.kl_terms(mu, logvar).sum(1)


def sentence_vae_loss(logits, ids, mu, logvar, beta: float = 1.0):
    """(loss, recon, kl), each a mean over the sentences of the batch, in nats per sentence."""
    recon = sentence_nll(logits, ids).mean()
    kl = kl_per_sentence(mu, logvar).mean()
    loss = recon + beta * kl
    return loss, recon, kl


# ---------------------------------------------------------------- training


def make(cfg: SentenceVAEConfig) -> SentenceVAE:
    """A freshly initialised model, seeded without disturbing the caller's random state."""
    with torch.random.fork_rng():
        torch.manual_seed(shifted(cfg.seed))
        return SentenceVAE(cfg)


def train(model: SentenceVAE, cfg: SentenceVAEConfig) -> dict:
    """Adam on fresh grammar sentences every step; returns per-step curves (JSON-ready).

    ``kl`` and ``recon`` are each step's batch means, in nats per sentence; ``recon``
    is measured with the word dropout the model trains with.
    """
    torch.use_deterministic_algorithms(True)
    with torch.random.fork_rng():  # eps and word dropout draw from here, not the caller's stream
        torch.manual_seed(shifted(cfg.seed))
        data = torch.Generator().manual_seed(shifted(cfg.seed))
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        # Constant, then a linear fall to 0: at a constant rate a late spike in the loss
        # can be where training stops, and the KL's rise needs the full rate until then.
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda step: min(1.0, (cfg.steps - step) / cfg.cooldown))
        curves = {"loss": [], "recon": [], "kl": []}
        start, cpu = time.perf_counter(), time.process_time()
        model.train()
        for _ in range(cfg.steps):
            ids = grammar.sample_ids(cfg.batch_size, data, cfg.language)  # (N, T)
            logits, mu, logvar = model(ids, cfg.word_dropout)
            loss, recon, kl = sentence_vae_loss(logits, ids, mu, logvar, cfg.beta)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            for key, value in zip(curves, (loss, recon, kl)):
                curves[key].append(value.item())
        curves["seconds"] = time.perf_counter() - start  # wall clock: grows when the machine is busy
        curves["cpu_seconds"] = time.process_time() - cpu  # what it costs on a free machine
        curves["threads"] = torch.get_num_threads()
    model.eval()
    return curves


def load(cfg: SentenceVAEConfig = SentenceVAEConfig(), name: str = "sentence-vae"):
    """(model, info): trained now, or loaded from the model cache."""
    return cache.load_or_train(name, cfg, make=lambda: make(cfg), train=lambda model: train(model, cfg))


# The page's three runs: the plain ELBO, and the two remedies, one change each.
COLLAPSE = SentenceVAEConfig()
# At 0.5 the KL rose late or not at all in some retrainings (ROBUSTNESS.md); at 0.75
# it rises by about step 350 in every one.
WORD_DROPOUT = replace(COLLAPSE, word_dropout=0.75)
LOW_BETA = replace(COLLAPSE, beta=0.2)
RUNS = {"plain": COLLAPSE, "word dropout": WORD_DROPOUT, "low beta": LOW_BETA}


def load_all(runs: dict[str, SentenceVAEConfig] = RUNS) -> dict:
    """{name: (model, info)} for each run."""
    return {name: load(cfg) for name, cfg in runs.items()}


# ---------------------------------------------------------------- measuring a trained model


def heldout(n: int = 2000, seed: int = 1, cfg: grammar.GrammarConfig = grammar.GrammarConfig()):
    """n sentences drawn from the grammar with their own seed, (n, T): the test sentences."""
    return grammar.sample_ids(n, torch.Generator().manual_seed(shifted(seed)), cfg)


@torch.no_grad()
def posterior(model: SentenceVAE, ids):
    """(mu, logvar), each (N, Z): q(z|x) for each sentence, no sampling."""
    return model.encoder(ids).chunk(2, dim=1)


def sample_z(mu, logvar, generator=None):
    """(N, Z) one draw from each posterior, reproducible with a generator."""
    return vae.reparameterize(mu, logvar, torch.randn(mu.shape, generator=generator))


@torch.no_grad()
def log_likelihood(model: SentenceVAE, ids, z):
    """(N,) log p(x | z) in nats, teacher-forced, with no word dropout."""
    return -sentence_nll(model.decode(ids[:, :-1], z), ids)


def true_nll(ids, cfg: grammar.GrammarConfig = grammar.GrammarConfig()) -> float:
    """Mean -log P(x) in nats under the grammar itself: the floor for any model of these sentences."""
    return -sum(math.log(grammar.prob(t, cfg)) for t in lm.texts(ids)) / len(ids)


@torch.no_grad()
def mutual_information(mu, logvar, z):
    """An estimate of I(x; z) under q, in nats (Hoffman & Johnson 2016; He et al. 2019).

    I = E_x E_q(z|x) [log q(z|x) - log q(z)], with the aggregate posterior q(z) taken
    as the average of the N posteriors in the batch; z (N, Z) holds one draw from each.
    The estimate cannot exceed log N.
    """
    N = len(mu)
    var = logvar.exp()
    # log q(z_i | x_j) for every pair: (N, N), summed over the Z dimensions
    diff = z[:, None, :] - mu[None, :, :]  # (N, N, Z)
    log_q = -0.5 * (diff.pow(2) / var[None] + logvar[None] + math.log(2 * math.pi)).sum(-1)
    own = log_q.diagonal()  # (N,)
    aggregate = torch.logsumexp(log_q, dim=1) - math.log(N)  # (N,)
    return (own - aggregate).mean().item()


@torch.no_grad()
def evaluate(model: SentenceVAE, ids, generator=None) -> dict:
    """How much the model uses z, on the sentences in ids (N, T). Nats per sentence.

    - recon, kl: the two terms of the loss (one z drawn per sentence, no word dropout);
    - own_z, other_z: log p(x|z) with z drawn from the sentence's own posterior, and
      from another sentence's; z_gap = own_z - other_z is how much the decoder's
      prediction of the sentence depends on getting the right z;
    - mi: the information about the sentence that z carries, estimated;
    - mu_sq, var: E[mu²] and E[sigma²], both over sentences and dimensions (the prior has 0, 1);
    - kl_per_dim, active_units: where the KL sits, and how many dimensions are used.
    """
    mu, logvar = posterior(model, ids)
    z = sample_z(mu, logvar, generator)  # (N, Z)
    other = torch.roll(z, 1, dims=0)  # each sentence gets its neighbour's draw
    own_ll, other_ll = log_likelihood(model, ids, z), log_likelihood(model, ids, other)
    kl_dims = vae.kl_per_dim(mu, logvar)  # (Z,)
    return {
        "recon": -own_ll.mean().item(),
        "kl": kl_dims.sum().item(),
        "own_z": own_ll.mean().item(),
        "other_z": other_ll.mean().item(),
        "z_gap": (own_ll - other_ll).mean().item(),
        "mi": mutual_information(mu, logvar, z),
        "mu_sq": mu.pow(2).mean().item(),
        "var": logvar.exp().mean().item(),
        "kl_per_dim": kl_dims.tolist(),
        "active_units": vae.active_units(mu),
    }


class Conditioned(nn.Module):
    """The decoder with z fixed, shaped like a language model, so ``lm.generate`` can drive it."""

    def __init__(self, model: SentenceVAE, z):
        super().__init__()
        self.model, self.z, self.cfg = model, z, model.decoder.cfg

    def forward(self, idx):
        return self.model.decode(idx, self.z)

    def rows(self, index):
        """The same decoder for some rows only: ``lm.generate`` stops running rows that ended."""
        return Conditioned(self.model, self.z[index])


def decode_z(model: SentenceVAE, z, temperature: float = 1.0, generator=None):
    """(N, T') one sentence per z (N, Z), from <s> until </s>: sampled, or greedy at temperature 0."""
    start = torch.full((len(z), 1), grammar.BOS_ID)
    steps = model.cfg.decoder.block_size - 1
    return lm.generate(Conditioned(model, z), start, steps, temperature=temperature, generator=generator)


@torch.no_grad()
def sample_prior(model: SentenceVAE, n: int, generator=None):
    """(n, T') sentences decoded from z ~ N(0, I), each sampled word by word."""
    z = torch.randn(n, model.cfg.z_dim, generator=generator)
    return decode_z(model, z, temperature=1.0, generator=generator)


@torch.no_grad()
def reconstruct(model: SentenceVAE, ids):
    """(N, T') the greedy decoding of each sentence's posterior mean: the model's best guess."""
    mu, _ = posterior(model, ids)
    return decode_z(model, mu, temperature=0)


def exact_share(model: SentenceVAE, ids) -> float:
    """Share of sentences whose reconstruction is word for word the sentence."""
    return sum(a == b for a, b in zip(lm.texts(reconstruct(model, ids)), lm.texts(ids))) / len(ids)


# ---------------------------------------------------------------- a probe


PLACES = {w for w, _ in grammar.rules()["Place"]}


def ends_in_place(ids) -> torch.Tensor:
    """(N,) 1 if the sentence's main verb phrase is "Vmove P the Place" (it ends in a place), else 0.

    The grammar picks the two kinds of verb phrase with probability p_move = 0.5 each,
    so a probe that guesses does no better than 50%. A row that never ended gets nan.
    """
    return torch.tensor([math.nan if t is None else float(t.split()[-1] in PLACES) for t in lm.texts(ids)])


@torch.no_grad()
def probe(model: SentenceVAE, train_ids, test_ids, generator=None) -> dict:
    """Held-out accuracy of a logistic regression predicting ``ends_in_place`` from z.

    Two probes: on a z *sampled* from q(z|x), which is what the decoder receives, and
    on the posterior mean mu, which it never receives. Features are standardised, so a
    mean that has shrunk towards 0 is still read at full scale.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    y_train, y_test = ends_in_place(train_ids).numpy(), ends_in_place(test_ids).numpy()
    out = {"chance": float(max(y_test.mean(), 1 - y_test.mean()))}
    mu_tr, lv_tr = posterior(model, train_ids)
    mu_te, lv_te = posterior(model, test_ids)
    features = {
        "sampled": (sample_z(mu_tr, lv_tr, generator), sample_z(mu_te, lv_te, generator)),
        "mean": (mu_tr, mu_te),
    }
    for name, (a, b) in features.items():
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        clf.fit(a.double().numpy(), y_train)
        out[name] = float(clf.score(b.double().numpy(), y_test))
    return out
