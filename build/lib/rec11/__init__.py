"""Shared code for the CPSY 1291 Recitation 11 book.

Importing the package is cheap on purpose: nothing trains, loads or plots at import
time. Each page imports the submodule it needs (``rec11.attention``, ``rec11.vae`` ...).

Every model module speaks the same vocabulary:

=====================  =============================================================
``XConfig``            a frozen dataclass: the model's size, training and seed
``make(cfg)``          a freshly initialised model, seeded from ``cfg.seed`` without
                       disturbing the caller's random state
``train(model, ...)``  trains in place, returns ``info``: plain data (curves, timings)
``load(cfg)``          ``(model, info)``: the trained model, from the model cache when
                       it is there (``rec11.cache``), else trained now and cached
=====================  =============================================================

The same quantity has the same field name everywhere: ``batch_size``, ``hidden`` (a
hidden layer's width), ``z_dim`` (latent dimensions, shape letter ``Z``), ``steps`` or
``epochs``, ``lr``, ``seed``. Models: ``recall`` (Exercise 1's key-value recall),
``lm`` (the tiny GPT of ``gpt`` trained on ``grammar``), ``vae`` (digits),
``sentence_vae`` (the grammar; posterior collapse), ``diffusion`` (2-D points).
"""

__all__ = ["__version__"]
__version__ = "0.1.0"
