"""CPU kernels of elementwise ops on sparse tensors (numpy): a SparseTensor's entries times or over a dense
tensor broadcast to its shape (read only at the entries, never broadcast whole), and the maximum or minimum of
two SparseTensors over the union of their entries."""

import numpy as np

from tensorweave.extension import KernelSet
from tensorweave_cpu.kernels.sparse import _check_bounds, _invalid

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: these kernels use numpy's set routines."""


def _dense_at_entries(indices, shape, dense, op_type):
    """``dense`` broadcast to ``shape`` (only the dense side broadcasts, as TF's), read at ``indices``."""
    shape = [int(d) for d in shape]
    offset = len(shape) - dense.ndim
    if offset < 0 or any(d not in (1, shape[offset + i]) for i, d in enumerate(dense.shape)):
        raise _invalid(f"{op_type} broadcasts the dense operand to the SparseTensor's shape only; got incompatible "
                       f"shapes: {list(dense.shape)} vs. {shape}")
    _check_bounds(indices, shape)
    at = tuple(indices[:, offset + i] if d > 1 else np.zeros(len(indices), np.int64)
               for i, d in enumerate(dense.shape))
    return dense[at] if at else np.broadcast_to(dense, (len(indices),))


@KERNELS.register("SparseDenseCwiseMul")
def _mul(indices, values, shape, dense):
    return values * _dense_at_entries(indices, shape, dense, "SparseDenseCwiseMul")


@KERNELS.register("SparseDenseCwiseDiv")
def _div(indices, values, shape, dense):
    divisor = _dense_at_entries(indices, shape, dense, "SparseDenseCwiseDiv")
    if values.dtype.kind in "iu":
        if (divisor == 0).any():
            raise _invalid("SparseDenseCwiseDiv: integer division by zero")
        return (np.sign(values) * np.sign(divisor) * (np.abs(values) // np.abs(divisor))).astype(values.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return values / divisor


def _union(a_indices, a_values, a_shape, b_indices, b_values, b_shape, ufunc):
    """``ufunc`` of a and b at every index either has (the other's missing entry counts as 0), row-major."""
    if list(a_shape) != list(b_shape):
        raise _invalid(f"Operands do not have the same ranks or shapes: a is {list(a_shape)}, b is {list(b_shape)}")
    _check_bounds(a_indices, a_shape, "a_indices")
    _check_bounds(b_indices, b_shape, "b_indices")
    both = np.concatenate([a_indices, b_indices])
    if len(both) == 0:
        return both.reshape(0, len(a_shape)), a_values[:0].copy()
    unique, where = np.unique(both, axis=0, return_inverse=True)
    where = where.reshape(-1)
    a_full = np.zeros(len(unique), a_values.dtype)
    b_full = np.zeros(len(unique), a_values.dtype)
    a_full[where[:len(a_indices)]] = a_values
    b_full[where[len(a_indices):]] = b_values
    return unique.astype(np.int64), ufunc(a_full, b_full)


@KERNELS.register("SparseSparseMaximum")
def _maximum(*parts):
    return _union(*parts, np.maximum)


@KERNELS.register("SparseSparseMinimum")
def _minimum(*parts):
    return _union(*parts, np.minimum)
