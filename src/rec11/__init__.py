"""Shared code for the CPSY 1291 Recitation 11 book.

Importing the package is cheap on purpose: nothing trains, loads or plots at import
time. Each page imports the submodule it needs (``rec11.attention``, ``rec11.cache`` ...).
"""

__all__ = ["__version__"]
__version__ = "0.1.0"
