"""CPU kernels that cut sparse tensors (numpy): SparseSlice and its gradient, SparseSplit. Entries keep their
order; a piece's indices are relative to its own corner."""

import numpy as np

from tensorweave.extension import KernelSet
from tensorweave_cpu.kernels.sparse import _check_bounds, _gather_rows, _invalid

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: these kernels use numpy's set routines."""


def _vector(value, rank, what):
    value = np.asarray(value, np.int64).reshape(-1)
    if len(value) != rank:
        raise _invalid(f"{what} {value.tolist()} has {len(value)} entries but the SparseTensor has rank {rank}")
    return value


@KERNELS.register("SparseSlice")
def _slice(indices, values, shape, start, size):
    """The entries in [start, start + size), shifted to start at 0; the shape is clipped at the input's edge."""
    shape = np.asarray(shape, np.int64)
    start, size = _vector(start, len(shape), "start"), _vector(size, len(shape), "size")
    _check_bounds(indices, shape)
    end = np.minimum(start + size, shape)
    keep = ((indices >= start) & (indices < end)).all(axis=1)
    return indices[keep] - start, values[keep], np.maximum(end - start, 0)


@KERNELS.register("SparseSliceGrad")
def _slice_grad(grad, input_indices, start, output_indices):
    """Each input entry takes the gradient of the output entry it became (0 if it fell outside the slice)."""
    return _gather_rows(grad, output_indices + np.asarray(start, np.int64)[None, :], input_indices)


@KERNELS.register("SparseSplit")
def _split(split_dim, indices, values, shape, *, num_split):
    """``num_split`` pieces along ``split_dim``; the first ``size % num_split`` are one longer, as TF's."""
    shape = np.asarray(shape, np.int64)
    rank = len(shape)
    axis = int(split_dim)
    if not -rank <= axis < rank:
        raise _invalid(f"split_dim {axis} is out of range for a SparseTensor of rank {rank}")
    axis %= rank
    size = int(shape[axis])
    if num_split > size:
        raise _invalid(f"cannot split dimension {axis} of size {size} into num_split={num_split} pieces")
    _check_bounds(indices, shape)
    base, extra = divmod(size, num_split)
    lengths = [base + (i < extra) for i in range(num_split)]
    starts = np.cumsum([0] + lengths)
    piece = np.searchsorted(starts, indices[:, axis], side="right") - 1
    out_indices, out_values, out_shapes = [], [], []
    for i in range(num_split):
        mine = piece == i
        part = indices[mine].copy()
        part[:, axis] -= starts[i]
        piece_shape = shape.copy()
        piece_shape[axis] = lengths[i]
        out_indices.append(part)
        out_values.append(values[mine])
        out_shapes.append(piece_shape)
    return out_indices + out_values + out_shapes
