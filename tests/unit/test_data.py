"""The data the pages train on: scikit-learn's bundled digits (split once) and its toy 2-D sets."""

import pytest
import torch

from rec11 import data


def test_digits_are_scaled_pixels_with_labels():
    X, y = data.digits()
    assert X.shape == (1797, 64) and X.dtype == torch.float32
    assert X.min() == 0 and X.max() == 1
    assert y.shape == (1797,) and set(y.tolist()) == set(range(10))


def test_digits_split_is_a_fixed_partition():
    Xtr, ytr, Xte, yte = data.digits_split()  # noqa: RUF059
    assert (len(Xtr), len(Xte)) == (1500, 297)
    again = data.digits_split()
    assert torch.equal(Xte, again[2]) and torch.equal(ytr, again[1])
    # together the two halves are the whole data set, each image once
    X, _ = data.digits()
    key = lambda A: sorted(map(tuple, A.tolist()))
    assert key(torch.cat([Xtr, Xte])) == key(X)


def test_toy_2d_is_standardised_reproducible_and_seeded():
    x = data.toy_2d("moons", 20_000, seed=0)
    assert x.shape == (20_000, 2) and x.dtype == torch.float32
    assert torch.allclose(x.mean(0), torch.zeros(2), atol=0.03)
    assert torch.allclose(x.std(0), torch.ones(2), atol=0.03)
    assert torch.equal(data.toy_2d("moons", 100, seed=3), data.toy_2d("moons", 100, seed=3))
    assert not torch.equal(data.toy_2d("moons", 100, seed=3), data.toy_2d("moons", 100, seed=4))
    assert data.toy_2d("swiss_roll", 10).shape == (10, 2)
    with pytest.raises(ValueError):
        data.toy_2d("spiral", 10)


def test_toy_2d_divides_out_the_reference_statistics():
    """The diffusion pages rescale the moons' jitter by reference_stats: it must be what toy_2d used."""
    mean, std = data.reference_stats("moons", 0.05)
    assert mean.shape == std.shape == (2,) and (std > 0).all()
    raw = data._raw_2d("moons", 500, 0.05, seed=7)
    assert torch.allclose(data.toy_2d("moons", 500, seed=7), torch.tensor((raw - mean) / std, dtype=torch.float32))
