"""The tests mutmut runs on each mutant of answers.py (``make mutants``): one per check.

A mutant is killed when its check refuses it (``.ok`` is False) or it raises. The
imports are package-qualified (tests.mutation.answers) because that is the module name
mutmut gives the file; run with --noconftest, since the book's conftest is not needed.
"""

import pytest

from rec11 import check
from tests.mutation import answers

NAMES = ["attention", "split_heads", "merge_heads", "padding_mask", "generate",
         "surprisal", "reparameterize", "vae_loss", "diffusion_loss"]


@pytest.mark.parametrize("name", NAMES)
def test_check_accepts_the_answer(name):
    verdict = getattr(check, name)(getattr(answers, name))
    assert verdict.ok, verdict
