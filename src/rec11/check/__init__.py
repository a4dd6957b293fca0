"""Checks for the Exercises page: each runs a student's function against the reference.

    from rec11 import check
    check.attention(my_attention)

Each check runs the student's function and the right answer side by side on a battery of
inputs the student did not pick (``rec11.check.core`` says how) and returns a
``Verdict``, which prints as a few lines: "Right", a mistake named with its fix when the
outputs match that mistake exactly, or the smallest input on which they differ and the
first entry that differs. Nothing here trains; the models are small stand-ins with the
pages' signatures.

``core`` holds what every check shares (the battery, a guarded run, the verdict); one
module per exercise holds its check: ``ex2_attention``, ``ex3_shapes``, ``ex4_generation``,
``ex5_surprisal`` and ``ex7_objective``.
"""

from rec11.check.core import Verdict, inputs
from rec11.check.ex2_attention import attention, attention_inputs
from rec11.check.ex3_shapes import merge_heads, padding_mask, split_heads
from rec11.check.ex4_generation import generate
from rec11.check.ex5_surprisal import surprisal
from rec11.check.ex7_objective import diffusion_loss, reparameterize, vae_loss

__all__ = ["Verdict", "attention", "attention_inputs", "diffusion_loss", "generate",
           "inputs", "merge_heads", "padding_mask", "reparameterize", "split_heads",
           "surprisal", "vae_loss"]
