"""Row scatters as the GPU runs them (atomics for some dtypes, rounds for the rest) against numpy's ufunc.at,
with an array module that is numpy under another name so the non-numpy paths run here."""

import numpy as np
import pytest

from tensorweave_cuda.scatter_rows import ATOMIC, scatter_rows


class _OtherModule:
    """numpy's functions, but not numpy: scatter_rows takes the path it takes for cupy."""

    def __getattr__(self, name):
        return getattr(np, name)


XP = _OtherModule()
ROWS = np.array([3, 0, 3, 1, 3, 0])


@pytest.mark.parametrize("ufunc", ["add", "subtract", "multiply", "true_divide", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "uint8"])
def test_repeated_rows_apply_once_per_occurrence_like_numpy_at(ufunc, dtype):
    if ufunc == "true_divide" and np.dtype(dtype).kind != "f":
        pytest.skip("integer true division has no same-dtype result")
    rng = np.random.default_rng(1)
    target = rng.integers(1, 4, (4, 3)).astype(dtype)
    updates = rng.integers(1, 4, (ROWS.size, 3)).astype(dtype)
    want = target.copy()
    getattr(np, ufunc).at(want, ROWS, updates)
    got = target.copy()
    scatter_rows(XP, ufunc, got, ROWS, updates)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3)


def test_a_scalar_update_broadcasts_over_the_rows():
    got = np.zeros((3, 2), np.int64)  # int64: rounds, not atomics
    scatter_rows(XP, "add", got, np.array([2, 2, 0]), np.int64(5))
    assert got.tolist() == [[5, 5], [0, 0], [10, 10]]


def test_atomics_are_used_only_for_dtypes_cuda_has_them_for():
    assert "int64" not in ATOMIC["add"] and "float16" not in ATOMIC["add"] and "float32" in ATOMIC["add"]
    assert "multiply" not in ATOMIC
