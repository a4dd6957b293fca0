"""The grammar's exact numbers: checked against closed forms and against each other."""

import math

import pytest
import torch

from rec11 import grammar as G

CFG = G.GrammarConfig()


def H(dist):
    """Entropy in nats of a rule's list of (expansion, probability)."""
    return -sum(p * math.log(p) for _, p in dist)


def test_rule_probabilities_sum_to_one():
    for symbol, expansions in G.rules(CFG).items():
        assert sum(p for _, p in expansions) == pytest.approx(1.0), symbol


def test_words_in_a_class_never_tie():
    for symbol, expansions in G.rules(CFG).items():
        if all(len(rhs.split()) == 1 and rhs in G.WORDS for rhs, _ in expansions):  # a word class
            ps = [p for _, p in expansions]
            assert len(set(ps)) == len(ps), symbol


def test_greedy_path_has_a_unique_best_word_at_every_step():
    # so that T -> 0 picks one sentence, and sampling loses all its diversity
    prefix = ()
    while True:
        ranked = [*sorted(G.next_word_probs(prefix).values(), reverse=True), 0.0]
        assert ranked[0] > 1.1 * ranked[1], prefix
        best = max(G.next_word_probs(prefix).items(), key=lambda kv: kv[1])[0]
        if best == G.EOS:
            break
        prefix = (*prefix, best)
    assert G.is_grammatical(prefix)


def test_sentence_probabilities_sum_to_one():
    assert sum(G.sentences(CFG).values()) == pytest.approx(1.0, abs=1e-12)
    assert len(G.sentences(CFG)) < 50_000  # small enough to list, and to sample from by index


def test_enumeration_is_cached():
    assert G.sentences(CFG) is G.sentences(CFG)


def test_the_garden_path_and_its_controls_are_sentences():
    for sentence in G.TEST_SENTENCES.values():
        assert G.is_grammatical(sentence)
        assert G.prob(sentence) > 0
    assert G.is_grammatical(["<s>", *G.GARDEN_PATH.split(), "</s>"])  # markers are ignored


@pytest.mark.parametrize(
    "sentence",
    [
        "the horse ridden past the barn",  # an unambiguous participle needs a main verb
        "the horse raced past the barn fell fell",
        "horse the fell",
        "the horse that raced past the barn fell",  # the full relative is "that was"
        "",
    ],
)
def test_ungrammatical(sentence):
    assert not G.is_grammatical(sentence)
    assert G.prob(sentence) == 0


@pytest.mark.parametrize(
    "prefix", ["", "the", "the horse", "the horse raced", "the horse raced past the barn", "a dog that was"]
)
def test_prefix_probability_is_consistent(prefix):
    ws = G.words_of(prefix)
    p = G.prefix_prob(ws)
    # one step: every way to go on, plus stopping here
    assert p == pytest.approx(sum(G.prefix_prob((*ws, w)) for w in G.WORDS) + G.prob(ws), rel=1e-12)
    # and the definition: the sentences that start this way
    assert p == pytest.approx(sum(q for s, q in G.sentences().items() if s[: len(ws)] == ws), rel=1e-12)
    assert sum(G.next_word_probs(ws).values()) == pytest.approx(1.0)


def test_prefix_of_nothing_is_one_and_nonsense_is_zero():
    assert G.prefix_prob("") == pytest.approx(1.0)
    assert G.prefix_prob("fell the") == 0
    with pytest.raises(ValueError):
        G.next_word_probs("fell the")


def test_garden_path_surprisal_matches_closed_form():
    # After "the horse raced past the barn", Det, N and the PP cancel. What is left:
    # reduced relative (p_reduced · P(raced | Vpart)) against main verb
    # (p_plain · p_move · P(raced | Vmove)); then the VP must start with "fell".
    c = CFG
    h4 = sum(1 / r for r in range(1, 5))  # Vpart and Vmove: 4 words each, "raced" first
    h8 = sum(1 / r for r in range(1, 9))  # Vi: 8 words, "fell" first
    relative = c.p_reduced / h4
    main = (1 - c.p_reduced - c.p_full) * c.p_move / h4
    p_fell = relative / (relative + main) * (1 - c.p_move) / h8
    bits = G.surprisal(G.GARDEN_PATH)
    assert bits[-1] == pytest.approx(-math.log2(p_fell), rel=1e-12)
    assert bits[0] == pytest.approx(-math.log2(2 / 3))  # "the": Det weights 1 : 1/2
    # the controls make "fell" much less surprising: that is the garden path
    assert G.surprisal(G.TEST_SENTENCES["full relative"])[-1] < bits[-1] - 3


def test_surprisal_is_zero_where_the_grammar_leaves_no_choice():
    bits = G.surprisal("the horse that was raced past the barn fell", eos=True)
    words = G.words_of("the horse that was raced past the barn fell")
    assert bits[words.index("was")] == 0.0
    assert bits[-1] == 0.0  # nothing can follow "fell"
    assert len(bits) == len(words) + 1


def test_sentence_probability_is_the_product_of_conditionals():
    s = "a girl driven near the river stumbled"
    assert 2 ** -sum(G.surprisal(s, eos=True)) == pytest.approx(G.prob(s), rel=1e-9)


def test_entropy_matches_the_chain_rule():
    # The grammar is unambiguous, so H(sentence) is the entropy of the rule choices,
    # each weighted by how often it is made.
    c, r = CFG, G.rules(CFG)
    h_pp = H(r["P"]) + H(r["Place"])
    h_np = H(r["Det"]) + H(r["N"]) + H(r["NP"]) + (c.p_reduced + c.p_full) * (H(r["Vpart"]) + h_pp)
    h_vp = H(r["VP"]) + (1 - c.p_move) * H(r["Vi"]) + c.p_move * (H(r["Vmove"]) + h_pp)
    tokens = 2 + 4 * c.p_reduced + 6 * c.p_full + 1 + 3 * c.p_move + 1  # NP + VP + EOS
    e = G.entropy(CFG)
    assert e.nats_per_sentence == pytest.approx(h_np + h_vp, rel=1e-9)
    assert e.tokens_per_sentence == pytest.approx(tokens, rel=1e-12)
    assert e.nats_per_token == pytest.approx((h_np + h_vp) / tokens, rel=1e-9)
    assert e.bits_per_token == pytest.approx(e.nats_per_token / math.log(2))


def test_encode_decode_round_trip():
    ids = G.encode(G.GARDEN_PATH)
    assert ids[0] == G.BOS_ID and ids[-1] == G.EOS_ID
    assert G.decode(ids) == f"<s> {G.GARDEN_PATH} </s>"
    assert G.decode(torch.tensor(ids + [G.PAD_ID] * 3)) == f"<s> {G.GARDEN_PATH} </s>"


def test_sampling_is_seeded_and_follows_the_distribution():
    a = G.sample_ids(20_000, torch.Generator().manual_seed(0))
    b = G.sample_ids(20_000, torch.Generator().manual_seed(0))
    assert torch.equal(a, b)
    assert not torch.equal(a, G.sample_ids(20_000, torch.Generator().manual_seed(1)))
    top, p = next(iter(G.sentences().items()))
    hits = (a[:, : len(top) + 2] == torch.tensor(G.encode(top))).all(1).float().mean().item()
    assert hits == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / len(a)))
    texts = G.sample(200, torch.Generator().manual_seed(2))
    assert all(G.is_grammatical(t) for t in texts)
