"""Generation, surprisal, sample statistics, and training through the model cache."""

import math

import pytest
import torch
from torch import nn

from rec11 import grammar as G
from rec11 import lm
from rec11.gpt import GPTConfig


class Bigram(nn.Module):
    """A stub language model: the next token's logits depend on the current token only."""

    def __init__(self, table):
        super().__init__()
        self.table = table  # (V, V)
        self.cfg = GPTConfig(vocab_size=table.size(0), block_size=64)

    def forward(self, idx):
        return self.table[idx]  # (N, T, V)


class Oracle(nn.Module):
    """A stub that knows the grammar: logits are the exact log P(next word | prefix)."""

    cfg = GPTConfig(vocab_size=len(G.VOCAB))

    def forward(self, idx):
        out = torch.full((*idx.shape, len(G.VOCAB)), -1e9)  # (N, T, V)
        for n, row in enumerate(idx.tolist()):
            for t in range(len(row)):
                prefix = [G.VOCAB[i] for i in row[: t + 1]]
                if G.EOS in prefix or G.PAD in prefix:
                    continue
                for w, p in G.next_word_probs(prefix).items():
                    out[n, t, G.STOI[w]] = math.log(p)
        return out


@pytest.fixture
def bigram():
    V = 6
    table = 3 * torch.randn(V, V, generator=torch.Generator().manual_seed(0))
    table[:, [G.PAD_ID, G.EOS_ID]] = -1e9  # never end, so every row runs the full length
    return Bigram(table)


def test_surprisal_of_a_known_distribution_in_bits():
    p = torch.tensor([0.5, 0.25, 0.125, 0.125])
    stub = Bigram((p.log() + 7.0).expand(4, 4))  # any offset: log_softmax normalises it
    idx = torch.tensor([[0, 0, 1, 2, 3]])
    torch.testing.assert_close(lm.surprisal(stub, idx), torch.tensor([[1.0, 2.0, 3.0, 3.0]]))


def test_oracle_surprisal_is_the_exact_surprisal():
    for sentence in G.TEST_SENTENCES.values():
        got = lm.word_surprisal(Oracle(), sentence)
        assert got == pytest.approx(G.surprisal(sentence, eos=True), abs=1e-5)


def test_greedy_is_argmax(bigram):
    start = torch.tensor([[1], [3], [4]])
    out = lm.generate(bigram, start, steps=5, temperature=0)
    expected = [start]
    for _ in range(5):
        expected.append(bigram.table[expected[-1][:, -1]].argmax(-1, keepdim=True))
    torch.testing.assert_close(out, torch.cat(expected, 1))


def test_sampling_as_temperature_goes_to_zero_is_greedy(bigram):
    start = torch.tensor([[1], [3], [4], [5]])
    greedy = lm.generate(bigram, start, steps=8, temperature=0)
    g = torch.Generator().manual_seed(0)
    torch.testing.assert_close(lm.generate(bigram, start, steps=8, temperature=1e-4, generator=g), greedy)
    torch.testing.assert_close(lm.generate(bigram, start, steps=8, top_k=1, generator=g), greedy)


def test_generate_is_deterministic_under_a_seed(bigram):
    start = torch.full((50, 1), G.BOS_ID)
    a = lm.generate(bigram, start, steps=10, generator=torch.Generator().manual_seed(3))
    b = lm.generate(bigram, start, steps=10, generator=torch.Generator().manual_seed(3))
    c = lm.generate(bigram, start, steps=10, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_generate_stops_at_eos_and_pads_after():
    table = torch.full((6, 6), -1e9)
    table[G.BOS_ID, 3] = 0.0  # <s> -> 3 -> </s>, certainly
    table[3, G.EOS_ID] = 0.0
    out = lm.generate(Bigram(table), torch.tensor([[G.BOS_ID]]), steps=10)
    assert out.tolist() == [[G.BOS_ID, 3, G.EOS_ID]]


class Counting(Bigram):
    """A Bigram that records how many rows each call runs on."""

    def __init__(self, table):
        super().__init__(table)
        self.rows_run = []

    def forward(self, idx):
        self.rows_run.append(len(idx))
        return super().forward(idx)


def test_ended_rows_stop_running_the_model():
    table = torch.full((6, 6), -1e9)
    table[G.BOS_ID, 3] = table[3, 4] = table[4, G.EOS_ID] = table[5, G.EOS_ID] = 0.0
    model = Counting(table)
    start = torch.tensor([[G.BOS_ID], [4], [5]])  # rows that end after 3, 1 and 1 tokens
    out = lm.generate(model, start, steps=10, temperature=0)
    assert model.rows_run == [3, 1, 1]
    E, P = G.EOS_ID, G.PAD_ID
    assert out.tolist() == [[G.BOS_ID, 3, 4, E], [4, E, P, P], [5, E, P, P]]


def test_skipping_ended_rows_draws_exactly_what_the_slides_loop_draws():
    table = 2 * torch.randn(6, 6, generator=torch.Generator().manual_seed(0))
    table[:, [G.PAD_ID, G.BOS_ID]] = -1e9  # rows end at </s>, at different steps
    model, start = Counting(table), torch.full((200, 1), G.BOS_ID)
    out = lm.generate(model, start, steps=12, generator=torch.Generator().manual_seed(1))
    plain, generator = start, torch.Generator().manual_seed(1)
    for _ in range(12):  # every row, every step, as on the slide
        probs = torch.softmax(Bigram(table)(plain)[:, -1, :], dim=-1)
        plain = torch.cat([plain, torch.multinomial(probs, 1, generator=generator)], dim=1)
    assert lm.texts(out) == lm.texts(plain)
    assert model.rows_run[-1] < len(start)  # and rows did stop running


def test_top_k_never_samples_outside_the_top_k(bigram):
    start = torch.full((400, 1), 4)
    out = lm.generate(bigram, start, steps=1, top_k=2, generator=torch.Generator().manual_seed(0))
    allowed = set(torch.topk(bigram.table[4], 2).indices.tolist())
    assert set(out[:, 1].tolist()) == allowed


def test_sample_statistics():
    rows = [G.encode(s) for s in ["the horse fell", "the horse fell", "a dog slept", "horse the fell"]]
    unfinished = [G.BOS_ID, G.STOI["the"], G.STOI["horse"]]  # never reached EOS
    T = max(map(len, rows))
    idx = torch.tensor([r + [G.PAD_ID] * (T - len(r)) for r in rows] + [unfinished + [G.PAD_ID] * (T - 3)])
    assert lm.texts(idx) == ["the horse fell", "the horse fell", "a dog slept", "horse the fell", None]
    assert lm.fraction_grammatical(idx) == pytest.approx(3 / 5)
    assert lm.distinct_share(idx) == pytest.approx(4 / 5)
    assert lm.most_common(idx) == ("the horse fell", pytest.approx(2 / 5))


def test_exact_cross_entropy_is_the_entropy_for_the_truth_and_above_it_otherwise():
    torch.manual_seed(0)
    tiny = lm.make(lm.LMConfig(model=GPTConfig(vocab_size=len(G.VOCAB), n_layer=1, n_head=2, d=8)))
    assert lm.exact_nats_per_token(tiny.eval()) > G.entropy().nats_per_token + 0.5
    # on a sample, the oracle's loss per token is the sample's own -log P per token
    ids = G.sample_ids(20, torch.Generator().manual_seed(0))
    texts = lm.texts(ids)
    tokens = sum(len(t.split()) + 1 for t in texts)
    expected = -sum(math.log(G.prob(t)) for t in texts) / tokens
    assert lm.heldout_nats_per_token(Oracle(), ids) == pytest.approx(expected, rel=1e-5)


TINY = lm.LMConfig(
    model=GPTConfig(vocab_size=len(G.VOCAB), n_layer=1, n_head=2, d=16),
    steps=30,
    batch_size=32,
    lr=1e-2,
    warmup=5,
    n_heldout=100,
)


def test_training_is_deterministic_and_learns():
    a, b = lm.make(TINY), lm.make(TINY)
    info = lm.train(a, TINY)
    lm.train(b, TINY)
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(p, q), name
    assert info["train_loss"][-1] < info["train_loss"][0] - 1.0
    assert info["exact_ce_nats_per_token"] > info["entropy_nats_per_token"]


# Findings the attention-maps and surprisal pages state in general. The pages read one
# model, trained from seed 0; a finding stated in general must hold for the same model
# trained from other seeds too. Cost: on a cold model cache each extra seed trains the
# tiny GPT once (about 50-85 s each on one thread on a busy 2-core machine); the cache
# keeps them, and later runs take about 3 s.
SEEDS = (0, 1, 2)
