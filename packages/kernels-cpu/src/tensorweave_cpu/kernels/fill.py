"""CPU kernels for fills. Each returns a fresh writable array (never a broadcast view), so a fetched
result or a variable assigned from it can be written without surprising anyone."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Fill", "OnesLike", "ZerosLike"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


@KERNELS.register("Fill")
def _fill(dims, value, *, T, xp):
    if dims.ndim != 1:
        raise ValueError(f"fill dims must be a vector, got a tensor of shape {list(dims.shape)}")
    if value.ndim != 0:
        raise ValueError(f"the value of fill must be a scalar, got a tensor of shape {list(value.shape)}")
    shape = tuple(int(d) for d in dims.tolist())
    if any(d < 0 for d in shape):
        raise ValueError(f"fill dims must be non-negative, got {list(shape)}")
    return xp.full(shape, value, dtype=T.as_numpy_dtype)


@KERNELS.register("ZerosLike")
def _zeros_like(x, *, T, xp):
    if x.dtype == object:
        return np.full(x.shape, b"", dtype=object)
    return xp.zeros(x.shape, dtype=T.as_numpy_dtype)


@KERNELS.register("OnesLike")
def _ones_like(x, *, T, xp):
    return xp.ones(x.shape, dtype=T.as_numpy_dtype)
