"""Tools that measure and check the book; no build runs them.

``robustness``: every page's claims under retraining (seeds, threads, CPU kernels).
"""
