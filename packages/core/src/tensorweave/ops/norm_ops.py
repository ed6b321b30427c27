"""``norm``: vector norms (over all entries or one axis) and matrix norms (over two axes), as TF 1.15 builds them
from reductions (and the largest singular value for the matrix 2-norm), so they differentiate as those ops do."""

import math
import numbers

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import reduction_ops, shape_ops, unary_math_ops
from tensorweave.ops.linalg_ops import svd
from tensorweave.ops.transpose_ops import transpose

__all__ = ["norm"]

_MATRIX_ORDS = ("euclidean", "fro", 1, 2, math.inf)


def _axes(axis, tensor):
    if axis is None:
        return None
    axes = [axis] if isinstance(axis, numbers.Integral) else list(axis)
    if not axes or len(axes) > 2 or not all(isinstance(a, numbers.Integral) for a in axes):
        raise ValueError(f"norm: axis must be None, an int or a pair of ints, got {axis!r}")
    if len(axes) == 2:
        rank = tensor.shape.ndims
        if rank is not None and axes[0] % rank == axes[1] % rank:
            raise ValueError(f"norm: the two axes of a matrix norm must differ, got {axis!r}")
        if rank is None and (axes[0] < 0) != (axes[1] < 0):
            raise ValueError(f"norm: axes {axis!r} mix signs, so a tensor of unknown rank cannot be normed over them")
    return axes


def _check_ord(ord, matrix):
    if matrix:
        if ord not in _MATRIX_ORDS:
            raise ValueError(f"norm: ord={ord!r} is not a supported matrix norm: use one of 'fro', 'euclidean', 1, "
                             f"2, np.inf")
    elif not (ord == "euclidean" or (isinstance(ord, numbers.Real) and not isinstance(ord, bool) and ord > 0)):
        raise ValueError(f"norm: ord={ord!r} is not a supported vector norm: use 'euclidean' or a number > 0 "
                         f"(1, 2, np.inf, ...)")


def _matrix_two_norm(tensor, axes, keepdims):
    """The largest singular value: the two axes moved last, then Svd without u and v."""
    rank = tensor.shape.ndims
    if rank is None:
        raise ValueError("norm: the matrix 2-norm needs a tensor of known rank")
    rows, columns = (a % rank for a in axes)
    others = [i for i in range(rank) if i not in (rows, columns)]
    largest = svd(transpose(tensor, others + [rows, columns]), compute_uv=False)[..., 0]
    if keepdims:
        for a in sorted((rows, columns)):
            largest = shape_ops.expand_dims(largest, a)
    return largest


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """The ``ord``-norm of ``tensor``: of all its entries (axis None), along one axis, or of matrices over two axes.

    Vector norms: 'euclidean' (2), 1, np.inf and any p > 0; matrix norms: 'fro'/'euclidean', 1 (largest column
    sum), np.inf (largest row sum) and 2 (largest singular value)."""
    if keepdims is not None and keep_dims is not None and keepdims != keep_dims:
        raise ValueError("norm: keepdims and its old name keep_dims disagree")
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    with graph_mod.name_scope(name, "norm", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        axes = _axes(axis, tensor)
        matrix = axes is not None and len(axes) == 2
        _check_ord(ord, matrix)
        magnitude = unary_math_ops.abs(tensor)
        if ord in ("euclidean", "fro") or (ord == 2 and not matrix):
            squares = reduction_ops.reduce_sum(unary_math_ops.square(magnitude), axes, keepdims=keepdims)
            return unary_math_ops.sqrt(squares)
        if matrix and ord == 2:
            return _matrix_two_norm(tensor, axes, keepdims)
        if matrix:
            summed, maxed = (axes[0], axes[1]) if ord == 1 else (axes[1], axes[0])
            sums = reduction_ops.reduce_sum(magnitude, summed, keepdims=True)
            return reduction_ops.reduce_max(sums, maxed, keepdims=True) if keepdims else \
                shape_ops.squeeze(reduction_ops.reduce_max(sums, maxed, keepdims=True), axes)
        if ord == 1:
            return reduction_ops.reduce_sum(magnitude, axes, keepdims=keepdims)
        if ord == math.inf:
            return reduction_ops.reduce_max(magnitude, axes, keepdims=keepdims)
        powered = reduction_ops.reduce_sum(magnitude ** ord, axes, keepdims=keepdims)
        return powered ** (1.0 / ord)
