"""Findings of the generation pages that must hold beyond the one trained model."""

from rec11 import grammar


def greedy_on_the_grammar():
    """Greedy decoding with the grammar's exact next-word distribution: no model at all."""
    words = []
    while True:
        probs = grammar.next_word_probs(words)
        best = max(probs, key=probs.get)
        if best == grammar.EOS:
            return " ".join(words)
        words.append(best)


def test_greedy_is_not_the_likeliest_sentence():
    # generation.md: "Greedy is not the likeliest sentence." A model that has learned the
    # grammar decodes greedily to the sentence the exact distribution gives, whatever its seed.
    sentences = grammar.sentences()  # most probable first
    greedy = greedy_on_the_grammar()
    likeliest = " ".join(next(iter(sentences)))
    assert greedy == "the horse raced past the barn"
    assert likeliest == "the horse fell"
    assert grammar.prob(greedy) < 0.5 * grammar.prob(likeliest)
    # why: after "the horse" the likeliest next word is "raced", not "fell"
    after = grammar.next_word_probs("the horse")
    assert max(after, key=after.get) == "raced" and after["raced"] > after["fell"]
    # ... and "fell" ends the sentence, while "raced" has many continuations
    assert list(grammar.next_word_probs("the horse fell")) == [grammar.EOS]
    assert sum(s[:3] == ("the", "horse", "raced") for s in sentences) > 10

