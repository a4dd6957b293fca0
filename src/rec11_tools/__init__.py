"""Tools that measure, check and operate the book. No build runs them, and the course
package (``rec11``) imports none of them; they may import the build (``rec11_book``).

``claims``, ``robustness``: every page's claims, recorded, and under retraining.
``run_pages``, ``pretrain``: a page's cells outside Sphinx; the model cache filled.
``bench`` (``pagespeed``, ``previewtime``), ``figtext``: speed, weight, figure text.
``sizing``, ``hubsize``: a class's kernels measured, and a hub sized from them.
"""
