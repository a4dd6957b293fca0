# One torch thread, deterministic kernels, seed 0 for every test here (tests/torch_support.py).
from torch_support import small_and_deterministic  # noqa: F401
