"""CPU kernels of the sparse-tensor ops (numpy): a SparseTensor arrives as int64 ``indices`` [N, rank], ``values``
[N] and ``dense_shape`` [rank]. Entries are grouped and merged by sorting their index rows (np.lexsort,
np.unique over rows) rather than looping over them in Python."""

import numpy as np

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: these kernels use numpy's set and sorting routines."""


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _check_bounds(indices, shape, what="indices"):
    if indices.size == 0:
        return
    bad = np.nonzero(((indices < 0) | (indices >= np.asarray(shape)[None, :])).any(axis=1))[0]
    if bad.size:
        i = int(bad[0])
        raise _invalid(f"{what}[{i}] = {indices[i].tolist()} is out of bounds: need 0 <= index < {list(shape)}")


def _row_order(indices):
    """The permutation that puts index rows in row-major (lexicographic) order, stable."""
    if indices.shape[1] == 0:
        return np.arange(indices.shape[0])
    return np.lexsort(indices.T[::-1])


def _check_order(indices, shape):
    """TF's validate_indices: in bounds, in row-major order, no index twice."""
    _check_bounds(indices, shape)
    if indices.shape[0] < 2:
        return
    diff = indices[1:] - indices[:-1]
    first = np.argmax(diff != 0, axis=1)
    step = diff[np.arange(diff.shape[0]), first]
    bad = np.nonzero(step <= 0)[0]
    if bad.size:
        i = int(bad[0]) + 1
        how = "is repeated" if step[bad[0]] == 0 else "is out of order"
        raise _invalid(f"indices[{i}] = {indices[i].tolist()} {how}; many sparse ops require sorted indices. "
                       f"Use tf.sparse.reorder to create a correctly ordered copy.")


@KERNELS.register("SparseToDense")
def _sparse_to_dense(indices, output_shape, values, default, *, validate_indices):
    shape = [int(d) for d in np.asarray(output_shape).reshape(-1)]
    indices = np.asarray(indices, np.int64).reshape(-1, len(shape)) if np.ndim(indices) < 2 else indices
    if indices.shape[1] != len(shape):
        raise _invalid(f"sparse_indices has {indices.shape[1]} columns but output_shape has {len(shape)} dimensions")
    if np.ndim(values) == 1 and values.shape[0] != indices.shape[0]:
        raise _invalid(f"sparse_values has {values.shape[0]} entries but sparse_indices has {indices.shape[0]}")
    if validate_indices:
        _check_order(indices, shape)
    else:
        _check_bounds(indices, shape)
    out = np.full(shape, default, dtype=values.dtype)
    out[tuple(indices.T)] = values
    return out


@KERNELS.register("SparseTensorDenseMatMul")
def _matmul(indices, values, a_shape, b, *, adjoint_a, adjoint_b):
    rows, cols = indices[:, 0].astype(np.int64), indices[:, 1].astype(np.int64)
    out_rows, inner = int(a_shape[0]), int(a_shape[1])
    if adjoint_a:
        rows, cols, out_rows, inner = cols, rows, inner, out_rows
        values = np.conj(values)
    b = np.conj(b.T) if adjoint_b else b
    if b.shape[0] != inner:
        raise _invalid(f"cannot multiply A (inner dimension {inner}) and B (with {b.shape[0]} rows)")
    bad = np.nonzero((rows < 0) | (rows >= out_rows) | (cols < 0) | (cols >= inner))[0]
    if bad.size:
        i = int(bad[0])
        raise _invalid(f"A's index [{indices[i].tolist()}] (entry {i}) is out of bounds for its shape "
                       f"{[int(d) for d in a_shape]}")
    out = np.zeros((out_rows, b.shape[1]), dtype=np.result_type(values, b))
    np.add.at(out, rows, values[:, None] * b[cols])
    return out


@KERNELS.register("SparseTensorDenseAdd")
def _dense_add(indices, values, a_shape, b):
    if list(np.asarray(a_shape).reshape(-1)) != list(b.shape):
        raise _invalid(f"SparseTensor of shape {list(a_shape)} and dense tensor of shape {list(b.shape)} differ")
    _check_bounds(indices, b.shape)
    out = np.array(b, copy=True)
    if out.ndim == 0:  # every entry of a rank-0 SparseTensor is the one element
        return out + values.sum(dtype=out.dtype)
    np.add.at(out, tuple(indices.T), values)
    return out


@KERNELS.register("SparseAdd")
def _add(a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh):
    if list(a_shape) != list(b_shape):
        raise _invalid(f"Operands do not have the same ranks or shapes: a is {list(a_shape)}, b is {list(b_shape)}")
    indices = np.concatenate([a_indices, b_indices])
    values = np.concatenate([a_values, b_values])
    order = _row_order(indices)
    indices, values = indices[order], values[order]
    starts = np.ones(len(indices), bool)
    if len(indices) > 1:
        starts[1:] = (indices[1:] != indices[:-1]).any(axis=1)
    group = np.cumsum(starts) - 1
    sums = np.zeros(int(starts.sum()), values.dtype)
    np.add.at(sums, group, values)
    counts = np.bincount(group, minlength=len(sums))
    keep = (counts == 1) | (np.abs(sums) >= thresh)  # only entries both have are thresholded, as TF
    return indices[starts][keep], sums[keep], np.asarray(a_shape, np.int64)


@KERNELS.register("SparseAddGrad")
def _add_grad(grad, a_indices, b_indices, sum_indices):
    return _gather_rows(grad, sum_indices, a_indices), _gather_rows(grad, sum_indices, b_indices)


def _gather_rows(grad, sum_indices, indices):
    """grad at the row of ``sum_indices`` equal to each row of ``indices`` (0 where none is): both sorted together,
    a sum row just before an equal row of ``indices``."""
    out = np.zeros(len(indices), grad.dtype)
    if not len(indices) or not len(sum_indices):
        return out
    rows = np.concatenate([sum_indices, indices])
    tags = np.concatenate([np.zeros(len(sum_indices), np.int64), np.ones(len(indices), np.int64)])
    order = np.lexsort((tags,) + tuple(rows[:, d] for d in reversed(range(rows.shape[1]))))
    rows, tags, order = rows[order], tags[order], order
    matched = np.zeros(len(order), bool)
    matched[1:] = (tags[1:] == 1) & (tags[:-1] == 0) & (rows[1:] == rows[:-1]).all(axis=1)
    at = np.nonzero(matched)[0]
    out[order[at] - len(sum_indices)] = grad[order[at - 1]]
    return out


def _reduction_axes(axes, rank):
    axes = np.asarray(axes).reshape(-1)
    if ((axes < -rank) | (axes >= rank)).any():
        raise _invalid(f"reduction axes {axes.tolist()} out of range for a SparseTensor of rank {rank}")
    return sorted({int(a) % rank for a in axes})


@KERNELS.register("SparseReduceSum")
def _reduce_sum(indices, values, shape, axes, *, keep_dims):
    """Adds each entry into its cell of the result directly (never the whole dense tensor)."""
    _check_bounds(indices, shape)
    reduced = _reduction_axes(axes, len(shape))
    kept = [i for i in range(len(shape)) if i not in reduced]
    if kept:
        out = np.zeros([int(shape[i]) for i in kept], values.dtype)
        np.add.at(out, tuple(indices[:, kept].T), values)
    else:
        out = np.asarray(values.sum(), values.dtype)
    return out.reshape([1 if i in reduced else int(shape[i]) for i in range(len(shape))]) if keep_dims else out


def _reduction_groups(indices, shape, axes, keep_dims):
    """(each entry's key in the result, the result's shape) of a reduction over ``axes``: the entry's index
    without the reduced axes (or with them set to 0 under ``keep_dims``)."""
    _check_bounds(indices, shape)
    reduced = _reduction_axes(axes, len(shape))
    kept = [i for i in range(len(shape)) if i not in reduced]
    out_shape = np.array([1 if i in reduced else shape[i] for i in range(len(shape))] if keep_dims
                         else [shape[i] for i in kept], np.int64)
    keys = indices.copy() if keep_dims else indices[:, kept]
    if keep_dims:
        keys[:, reduced] = 0
    return keys, out_shape


def _grouped(keys, values, ufunc):
    """(the distinct keys in row-major order, ``ufunc`` reduced over each key's values)."""
    if keys.shape[1] == 0:
        return np.zeros((1, 0), np.int64), np.array([ufunc.reduce(values)] if len(values) else [0], values.dtype)
    unique, group = np.unique(keys, axis=0, return_inverse=True)
    out = np.zeros(len(unique), values.dtype) if ufunc is np.add else np.full(len(unique), values.min(initial=0),
                                                                                 values.dtype)
    ufunc.at(out, group.reshape(-1), values)
    return unique.astype(np.int64), out


@KERNELS.register("SparseReduceSumSparse")
def _reduce_sum_sparse(indices, values, shape, axes, *, keep_dims):
    keys, out_shape = _reduction_groups(indices, shape, axes, keep_dims)
    return (*_grouped(keys, values, np.add), out_shape)


@KERNELS.register("SparseReduceMax")
def _reduce_max(indices, values, shape, axes, *, keep_dims):
    """The largest entry of each group; 0 where a group has no entry (as TF, never the type's lowest value)."""
    keys, out_shape = _reduction_groups(indices, shape, axes, keep_dims)
    out = np.zeros([int(d) for d in out_shape], values.dtype)
    if len(values):
        unique, peaks = _grouped(keys, values, np.maximum)
        out[tuple(unique.T)] = peaks if out.ndim else peaks[0]
    return out


@KERNELS.register("SparseReduceMaxSparse")
def _reduce_max_sparse(indices, values, shape, axes, *, keep_dims):
    keys, out_shape = _reduction_groups(indices, shape, axes, keep_dims)
    if not len(values):
        return np.zeros((0, len(out_shape)), np.int64), values[:0].copy(), out_shape
    return (*_grouped(keys, values, np.maximum), out_shape)


@KERNELS.register("SparseSoftmax")
def _softmax(indices, values, shape):
    if indices.shape[1] < 2:
        raise _invalid(f"SparseSoftmax needs a SparseTensor of rank 2 or more, got rank {indices.shape[1]}")
    if len(values) == 0:
        return values.copy()
    _, group = np.unique(indices[:, :-1], axis=0, return_inverse=True)
    group = group.reshape(-1)
    peak = np.full(group.max() + 1, -np.inf, values.dtype)
    np.maximum.at(peak, group, values)
    e = np.exp(values - peak[group])
    total = np.zeros_like(peak)
    np.add.at(total, group, e)
    return (e / total[group]).astype(values.dtype)


@KERNELS.register("SparseConcat")
def _concat(*parts, concat_dim):
    n = len(parts) // 3
    indices, values, shapes = parts[:n], parts[n:2 * n], parts[2 * n:]
    rank = len(shapes[0])
    axis = concat_dim % rank if -rank <= concat_dim < rank else None
    if axis is None:
        raise _invalid(f"concat_dim {concat_dim} is out of range for SparseTensors of rank {rank}")
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != rank or any(s[d] != shapes[0][d] for d in range(rank) if d != axis):
            raise _invalid(f"SparseTensor {i} has shape {list(s)}, which differs from the first one's "
                           f"{list(shapes[0])} outside concat_dim {axis}; pass expand_nonconcat_dim=True to grow them")
    offsets = np.cumsum([0] + [int(s[axis]) for s in shapes[:-1]])
    parts = []
    for ind, off in zip(indices, offsets):
        ind = ind.copy()
        ind[:, axis] += off
        parts.append(ind)
    out_indices = np.concatenate(parts) if parts else np.zeros((0, rank), np.int64)
    out_values = np.concatenate(values)
    order = _row_order(out_indices)
    out_shape = np.array(shapes[0], np.int64)
    out_shape[axis] = sum(int(s[axis]) for s in shapes)
    return out_indices[order], out_values[order], out_shape


@KERNELS.register("SparseReshape")
def _reshape(indices, shape, new_shape):
    size = int(np.prod(shape))
    target = [int(d) for d in new_shape]
    if target.count(-1) > 1:
        raise _invalid(f"only one dimension of the new shape {target} may be -1")
    if -1 in target:
        known = int(np.prod([d for d in target if d != -1]))
        if known == 0 or size % known:
            raise _invalid(f"cannot reshape a SparseTensor of shape {list(shape)} ({size} entries) to {target}")
        target[target.index(-1)] = size // known
    if int(np.prod(target)) != size:
        raise _invalid(f"cannot reshape a SparseTensor of shape {list(shape)} ({size} entries) to {target}, "
                       f"which holds {int(np.prod(target))}")
    _check_bounds(indices, shape)
    if len(indices) == 0:
        return np.zeros((0, len(target)), np.int64), np.array(target, np.int64)
    flat = np.ravel_multi_index(tuple(indices.T), [int(d) for d in shape])
    return np.stack(np.unravel_index(flat, target), axis=1).astype(np.int64), np.array(target, np.int64)


@KERNELS.register("SparseReorder")
def _reorder(indices, values, shape):
    order = _row_order(indices)
    return indices[order], values[order]


@KERNELS.register("SparseFillEmptyRows")
def _fill_empty_rows(indices, values, shape, default):
    rows = int(shape[0])
    _check_bounds(indices, shape)
    empty = np.bincount(indices[:, 0], minlength=rows)[:rows] == 0 if len(indices) else np.ones(rows, bool)
    added = np.zeros((int(empty.sum()), len(shape)), np.int64)
    added[:, 0] = np.nonzero(empty)[0]
    all_indices = np.concatenate([indices, added])
    all_values = np.concatenate([values, np.full(len(added), default, values.dtype)])
    order = np.argsort(all_indices[:, 0], kind="stable")
    reverse = np.empty(len(order), np.int64)
    reverse[order] = np.arange(len(order))
    return all_indices[order], all_values[order], empty, reverse[:len(indices)]


@KERNELS.register("SparseFillEmptyRowsGrad")
def _fill_empty_rows_grad(reverse_index_map, grad_values):
    d_values = grad_values[reverse_index_map]
    return d_values, np.asarray(grad_values.sum() - d_values.sum(), grad_values.dtype)
