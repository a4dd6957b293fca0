"""A small probabilistic grammar of English with a garden path in it, and its exact numbers.

The language is finite (about thirty thousand sentences), so every probability the
book quotes is computed exactly, by listing every sentence once: the probability of a
sentence, of a prefix, of the next word, the surprisal of each word in context, and
the entropy of the whole language. A language model trained on samples from this
grammar can then be checked against the truth, word by word.

The garden path is the classic one. After "the horse raced past the barn" the grammar
nearly always ends the sentence ("raced" read as the main verb), so "fell" is a
surprise: only the rarer reading, "raced" as a reduced relative clause ("the horse
[that was] raced past the barn"), lets the sentence go on.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

PAD, BOS, EOS = "<pad>", "<s>", "</s>"


@dataclass(frozen=True)
class GrammarConfig:
    p_reduced: float = 0.04  # subject has a reduced relative: "the horse raced past the barn"
    p_full: float = 0.08  # subject has a full relative: "the horse that was raced past the barn"
    p_move: float = 0.5  # the verb phrase is "raced past the barn" rather than "fell"
    zipf: float = 1.0  # word weights within a class fall off as 1 / rank**zipf


def zipf(words: str, s: float) -> list[tuple[str, float]]:
    """Words in order of frequency, weighted 1/rank**s: uneven, so no two words tie."""
    weights = [1 / r**s for r in range(1, len(words.split()) + 1)]
    return [(w, x / sum(weights)) for w, x in zip(words.split(), weights)]


def rules(cfg: GrammarConfig = GrammarConfig()) -> dict[str, list[tuple[str, float]]]:
    """Each symbol's expansions with their probabilities; a symbol not listed is a word."""
    p_plain = 1 - cfg.p_reduced - cfg.p_full
    return {
        "S": [("NP VP", 1.0)],
        "NP": [("Det N", p_plain), ("Det N RelR", cfg.p_reduced), ("Det N RelF", cfg.p_full)],
        "RelR": [("Vpart PP", 1.0)],  # reduced relative: "raced past the barn"
        "RelF": [("that was Vpart PP", 1.0)],  # full relative: "that was raced past the barn"
        "VP": [("Vi", 1 - cfg.p_move), ("Vmove PP", cfg.p_move)],
        "PP": [("P the Place", 1.0)],
        "Det": zipf("the a", cfg.zipf),
        "N": zipf("horse dog girl man boy", cfg.zipf),
        # "raced" and "walked" are both past tense (Vmove) and participle (Vpart): the
        # ambiguity. "driven" and "ridden" can only be participles: the controls.
        "Vpart": zipf("raced walked driven ridden", cfg.zipf),
        "Vmove": zipf("raced walked ran hurried", cfg.zipf),
        "Vi": zipf("fell stopped slept stumbled waited jumped rested stayed", cfg.zipf),
        "P": zipf("past near behind", cfg.zipf),
        "Place": zipf("barn fence river", cfg.zipf),
    }


# The vocabulary does not depend on the probabilities, so it is fixed at import time.
WORDS = sorted({w for rhs in rules().values() for r, _ in rhs for w in r.split()} - set(rules()))
VOCAB = [PAD, BOS, EOS, *WORDS]  # PAD is id 0: it fills rows after EOS and is never a target
STOI = {w: i for i, w in enumerate(VOCAB)}
PAD_ID, BOS_ID, EOS_ID = STOI[PAD], STOI[BOS], STOI[EOS]

# The sentences the surprisal page reads, word by word.
GARDEN_PATH = "the horse raced past the barn fell"
TEST_SENTENCES = {
    "garden path": GARDEN_PATH,
    "full relative": "the horse that was raced past the barn fell",
    "unambiguous participle (ridden)": "the horse ridden past the barn fell",
    "unambiguous participle (driven)": "the horse driven past the barn fell",
    "main verb": "the horse raced past the barn",
}


def words_of(sentence: str | Sequence[str]) -> tuple[str, ...]:
    """A sentence as a tuple of words, without <s>, </s> or padding."""
    ws = sentence.split() if isinstance(sentence, str) else sentence
    return tuple(w for w in ws if w not in (PAD, BOS, EOS))


def encode(sentence: str | Sequence[str]) -> list[int]:
    """'the horse fell' -> ids of <s> the horse fell </s>."""
    return [BOS_ID, *(STOI[w] for w in words_of(sentence)), EOS_ID]


def decode(ids: Sequence[int] | torch.Tensor) -> str:
    """Ids back to text, special tokens shown, padding dropped."""
    ids = ids.tolist() if isinstance(ids, torch.Tensor) else ids
    return " ".join(VOCAB[i] for i in ids if i != PAD_ID)


@functools.cache
def _expand(symbol: str, cfg: GrammarConfig) -> tuple[tuple[tuple[str, ...], float], ...]:
    """Every word string ``symbol`` can produce, with its probability (one entry per derivation)."""
    table = rules(cfg)
    if symbol not in table:
        return (((symbol,), 1.0),)
    out = []
    for rhs, p in table[symbol]:
        # a right-hand side yields the product of its symbols' yields
        for parts in itertools.product(*(_expand(s, cfg) for s in rhs.split())):
            out.append((sum((ws for ws, _ in parts), ()), p * math.prod(q for _, q in parts)))
    return tuple(out)


@functools.cache
def sentences(cfg: GrammarConfig = GrammarConfig()) -> dict[tuple[str, ...], float]:
    """Every sentence of the language with its probability, most probable first.

    A sentence with two parses gets the sum of both, so this is the distribution over
    word strings that a language model sees.
    """
    probs: dict[tuple[str, ...], float] = {}
    for ws, p in _expand("S", cfg):
        probs[ws] = probs.get(ws, 0.0) + p
    return dict(sorted(probs.items(), key=lambda item: (-item[1], item[0])))


@functools.cache
def _prefixes(cfg: GrammarConfig) -> dict[tuple[str, ...], float]:
    """P(a sentence starts with w1..wk), for every prefix of every sentence (k = 0 included)."""
    table: dict[tuple[str, ...], float] = {}
    for ws, p in sentences(cfg).items():
        for k in range(len(ws) + 1):
            table[ws[:k]] = table.get(ws[:k], 0.0) + p
    return table


def prob(sentence, cfg: GrammarConfig = GrammarConfig()) -> float:
    """P(sentence), summed over its parses; 0 if ungrammatical."""
    return sentences(cfg).get(words_of(sentence), 0.0)


def prefix_prob(prefix, cfg: GrammarConfig = GrammarConfig()) -> float:
    """P(the sentence begins with these words): the sum of P(s) over sentences s that do."""
    return _prefixes(cfg).get(words_of(prefix), 0.0)


def next_word_probs(prefix, cfg: GrammarConfig = GrammarConfig()) -> dict[str, float]:
    """Exact P(next word | prefix), with EOS for "the sentence ends here"; sums to 1."""
    ws = words_of(prefix)
    total = prefix_prob(ws, cfg)
    if total == 0:
        raise ValueError(f"no sentence starts with {' '.join(ws)!r}")
    out = {w: prefix_prob((*ws, w), cfg) / total for w in WORDS}
    out[EOS] = prob(ws, cfg) / total
    return {w: p for w, p in out.items() if p > 0}


def surprisal(sentence, cfg: GrammarConfig = GrammarConfig(), eos: bool = False) -> list[float]:
    """Exact surprisal in bits of each word given the words before it: -log2 P(w_k | w_<k).

    P(w_k | w_<k) = prefix_prob(w_1..w_k) / prefix_prob(w_1..w_k-1). With ``eos`` the
    last entry is the surprisal of the sentence ending there.
    """
    ws = words_of(sentence)
    p = [prefix_prob(ws[:k], cfg) for k in range(len(ws) + 1)]
    if eos:
        p.append(prob(ws, cfg))
    return [math.log2(a / b) if b > 0 else math.inf for a, b in itertools.pairwise(p)]


@dataclass(frozen=True)
class Entropy:
    nats_per_sentence: float
    tokens_per_sentence: float  # mean words + 1 for EOS: the tokens a model must predict
    nats_per_token: float
    bits_per_token: float


@functools.cache
def entropy(cfg: GrammarConfig = GrammarConfig()) -> Entropy:
    """The exact entropy of the language, per sentence and per predicted token.

    Per token is H(sentence) / E[tokens]: the lowest cross-entropy per token that any
    model can reach on long samples, in the units a training loss reports.
    """
    ps = sentences(cfg)
    h = -sum(p * math.log(p) for p in ps.values())
    tokens = sum(p * (len(ws) + 1) for ws, p in ps.items())
    return Entropy(h, tokens, h / tokens, h / tokens / math.log(2))


def is_grammatical(sentence, cfg: GrammarConfig = GrammarConfig()) -> bool:
    """True if the words (<s>, </s> ignored) are one complete sentence of the language."""
    return words_of(sentence) in sentences(cfg)


@functools.cache
def _table(cfg: GrammarConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """Every sentence as a padded id row (S, T_max), and their probabilities (S,)."""
    rows = [encode(ws) for ws in sentences(cfg)]
    T = max(map(len, rows))
    ids = torch.full((len(rows), T), PAD_ID, dtype=torch.long)  # (S, T)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
    return ids, torch.tensor(list(sentences(cfg).values()), dtype=torch.float64)


def table(cfg: GrammarConfig = GrammarConfig()) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, probs): all sentences encoded and padded (S, T_max), with their probabilities (S,)."""
    ids, p = _table(cfg)
    return ids.clone(), p.clone()  # copies, so a caller cannot corrupt the cache


def sample_ids(n: int, generator=None, cfg: GrammarConfig = GrammarConfig()) -> torch.Tensor:
    """n sentences drawn from the grammar, encoded and padded: (n, T_max).

    Drawing a whole sentence with its exact probability is the same distribution as
    expanding the rules top-down, and takes one call instead of one per word.
    """
    ids, p = _table(cfg)
    pick = torch.multinomial(p, n, replacement=True, generator=generator)  # (n,)
    return ids[pick]


def sample(n: int, generator=None, cfg: GrammarConfig = GrammarConfig()) -> list[str]:
    """n sentences drawn from the grammar, as text without <s> and </s>."""
    return [" ".join(words_of(decode(r))) for r in sample_ids(n, generator, cfg)]
