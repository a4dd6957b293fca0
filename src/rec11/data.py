"""The book's two data sets, both shipped with scikit-learn so that nothing is downloaded.

- ``digits``: the 1,797 8×8 handwritten digits, flattened to 64 pixels in [0, 1].
- ``toy_2d``: a 2-D point cloud (two moons, a swiss roll, circles), standardised.

Loaders return float32 tensors, the dtype every model in the package expects.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import torch

from rec11.seeds import shifted

PIXEL_MAX = 16.0  # load_digits stores ink as integers 0..16


def digits() -> tuple[torch.Tensor, torch.Tensor]:
    """All 1,797 digits: X (N, 64) float32 in [0, 1], y (N,) int64 labels 0..9."""
    from sklearn.datasets import load_digits

    d = load_digits()
    X = torch.tensor(d.data / PIXEL_MAX, dtype=torch.float32)  # (N, 64)
    y = torch.tensor(d.target, dtype=torch.int64)  # (N,)
    return X, y


def digits_split(n_test: int = 297, seed: int = 0):
    """A fixed train/test split of ``digits()``: (X_train, y_train, X_test, y_test).

    The default keeps 1,500 images for training and holds 297 out, so that numbers
    quoted about a trained model (reconstruction error, KL) are on unseen images.
    """
    X, y = digits()
    perm = torch.randperm(len(X), generator=torch.Generator().manual_seed(shifted(seed)))
    test, train = perm[:n_test], perm[n_test:]
    return X[train], y[train], X[test], y[test]


POOL = 100_000  # points generated per draw; a draw of n keeps the first n


def _raw_2d(name: str, n: int, noise: float, seed: int) -> np.ndarray:
    from sklearn import datasets

    if n > POOL:
        raise ValueError(f"n={n} is more than the pool of {POOL} points")
    # make_moons and make_circles place their points on an evenly spaced grid along
    # each curve and only then add noise, so two draws of the same size sit on the
    # same grid and look more alike than independent samples would. Drawing a large
    # shuffled pool and keeping n of its points gives (very nearly) i.i.d. samples.
    if name == "moons":
        x, _ = datasets.make_moons(POOL, noise=noise, random_state=seed)
    elif name == "swiss_roll":
        x3, _ = datasets.make_swiss_roll(POOL, noise=noise, random_state=seed)
        x = x3[:, [0, 2]]  # the roll's spiral lies in the (x, z) plane; y is its length
    elif name == "circles":
        x, _ = datasets.make_circles(POOL, noise=noise, factor=0.5, random_state=seed)
    else:
        raise ValueError(f"unknown 2-D data set {name!r}")
    return x[:n]  # the generators shuffle, so the first points are a random subset


@cache
def reference_stats(name: str, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """(mean, std), each (2,): the raw data set's statistics, which ``toy_2d`` divides out.

    Every draw is standardised with the statistics of one large fixed draw, not its
    own: then two draws with different seeds are on the same scale, and comparing them
    measures the sampling noise only (the "data against itself" floor).
    """
    x = _raw_2d(name, POOL, noise, seed=12345)
    return x.mean(0), x.std(0)


def toy_2d(name: str = "moons", n: int = 2000, noise: float = 0.05, seed: int = 0) -> torch.Tensor:
    """n points of a 2-D toy set, (n, 2) float32, about zero mean and unit variance per axis.

    Different seeds give independent draws from the same distribution, on the same scale
    (``$REC11_SEED`` shifts the seed; the scale, from one fixed large draw, stays).
    """
    mean, std = reference_stats(name, noise)
    x = (_raw_2d(name, n, noise, shifted(seed)) - mean) / std
    return torch.tensor(x, dtype=torch.float32)  # (n, 2)
