"""Cases added to the batteries because mutation testing (make mutants) found a mutant of a
worked answer that the check let through; each test here fails if its case is taken out.

A mutant whose default temperature was 2.0 got "Right": every case passed temperature and
top_k by keyword, so a default was never used. A case at the defaults now leaves them out.
"""

from __future__ import annotations

import torch

from rec11 import check


def _loop(temperature_default, top_k_default):
    def generate(model, idx, steps, temperature=temperature_default, top_k=top_k_default):
        model.eval()
        with torch.no_grad():
            for _ in range(steps):
                logits = model(idx[:, -model.cfg.block_size:])[:, -1, :] / temperature
                if top_k:
                    logits[logits < torch.topk(logits, top_k).values[:, [-1]]] = float("-inf")
                nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
                idx = torch.cat([idx, nxt], dim=1)
        return idx
    return generate


def test_generate_refuses_a_wrong_default_temperature_and_says_so():
    verdict = check.generate(_loop(2.0, None))
    assert not verdict.ok
    assert "generate(model, idx, steps)" in repr(verdict) and "defaults" in repr(verdict)


def test_generate_refuses_a_wrong_default_top_k():
    assert not check.generate(_loop(1.0, 2)).ok


def test_generate_accepts_defaults_written_another_way():
    """temperature=1 is 1.0, and top_k=0 keeps every token as None does."""
    assert check.generate(_loop(1, 0)).ok
