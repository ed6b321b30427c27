"""CPU kernels for gathering and scattering (GatherV2, Gather, GatherNd, ScatterNd), one-hot encoding, Where,
Unique and UniqueWithCounts. Every index is checked first: numpy would wrap negative indices silently."""

import numpy as np

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Gather", "GatherNd", "GatherV2", "OneHot", "Where"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too.
Unique and UniqueWithCounts are not: they call numpy's unique; nor is ScatterNd, whose add.at CuPy runs with
CUDA atomics that some dtypes lack."""


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def check_range(indices, limit, what):
    """Refuses entries outside [0, limit) with TF's message: which entry, its value, the valid range."""
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= limit):
        position = np.unravel_index(int(((indices < 0) | (indices >= limit)).argmax()), indices.shape)
        where = ",".join(str(int(p)) for p in position)
        raise _invalid(f"{what}: indices[{where}] = {int(indices[position])} is not in [0, {limit})")


def gather(xp, params, indices, axis, batch_dims):
    """params gathered along ``axis`` at ``indices`` (checked), the first ``batch_dims`` dims taken in step."""
    if params.ndim == 0:
        raise _invalid("gather: params must be at least 1-D")
    if batch_dims < 0:
        batch_dims += indices.ndim
    if not -params.ndim <= axis < params.ndim:
        raise _invalid(f"gather: axis {axis} is out of range for params of shape {list(params.shape)}")
    axis %= params.ndim
    if not 0 <= batch_dims <= min(axis, indices.ndim):
        raise _invalid(f"gather: batch_dims {batch_dims} must be in [0, min(axis={axis}, rank(indices)="
                       f"{indices.ndim})]")
    check_range(indices, params.shape[axis], f"gather from params of shape {list(params.shape)} along axis {axis}")
    if batch_dims == 0:
        return xp.take(params, indices, axis=axis)
    batch = params.shape[:batch_dims]
    if indices.shape[:batch_dims] != batch:
        raise _invalid(f"gather: the first {batch_dims} dims of params {list(params.shape)} and indices "
                       f"{list(indices.shape)} must match (batch_dims)")
    return _batch_gather(xp, params, indices, axis, batch_dims)


def _batch_gather(xp, params, indices, axis, b):
    """[B, O, A, I] gathered at [B, J] -> [B, O, J, I]: move A beside B, index both, move J after O."""
    size = int(np.prod(params.shape[:b], dtype=np.int64))
    flat_params = xp.moveaxis(params.reshape((size,) + params.shape[b:]), axis - b + 1, 1)
    flat_indices = indices.reshape((size,) + indices.shape[b:])
    rows = xp.arange(size).reshape((size,) + (1,) * (flat_indices.ndim - 1))
    picked = flat_params[rows, flat_indices]  # [size, J..., O..., I...]
    j, o = flat_indices.ndim - 1, axis - b
    order = [0] + list(range(1 + j, 1 + j + o)) + list(range(1, 1 + j)) + list(range(1 + j + o, picked.ndim))
    result = picked.transpose(order)
    return xp.ascontiguousarray(result.reshape(params.shape[:b] + result.shape[1:]))


@KERNELS.register("GatherV2")
def _gather_v2(params, indices, axis, *, batch_dims, xp):
    return gather(xp, params, indices, int(axis), batch_dims)


@KERNELS.register("Gather")
def _gather(params, indices, *, xp):
    return gather(xp, params, indices, 0, 0)


def index_tuple(params, indices, what):
    """The columns of ``indices`` (index vectors into params), each checked against its dimension."""
    if indices.ndim == 0:
        raise _invalid(f"{what}: indices must be at least 1-D (a vector of index vectors), got a scalar")
    depth = indices.shape[-1]
    if depth > params.ndim:
        raise _invalid(f"{what}: index vectors of length {depth} cannot index a tensor of shape {list(params.shape)}")
    columns = tuple(indices[..., i] for i in range(depth))
    for i, column in enumerate(columns):
        bad = (column < 0) | (column >= params.shape[i])
        if bad.any():
            position = np.unravel_index(int(bad.argmax()), column.shape)
            where = ",".join(str(int(p)) for p in position)
            raise _invalid(f"{what}: indices[{where}] = {indices[position].tolist()} does not index into shape "
                           f"{list(params.shape)} (entry {i} must be in [0, {params.shape[i]}))")
    return columns


@KERNELS.register("GatherNd")
def _gather_nd(params, indices, *, xp):
    columns = index_tuple(params, indices, "gather_nd")
    if not columns:
        return xp.ascontiguousarray(xp.broadcast_to(params, indices.shape[:-1] + params.shape))
    return params[columns]


@KERNELS.register("ScatterNd")
def _scatter_nd(indices, updates, shape, *, xp):
    shape = tuple(int(d) for d in shape.tolist())
    out = xp.zeros(shape, dtype=updates.dtype)
    columns = index_tuple(out, indices, "scatter_nd")
    expected = indices.shape[:-1] + shape[len(columns):]
    if updates.shape != expected:
        raise _invalid(f"scatter_nd: updates must have shape indices.shape[:-1] + shape[{len(columns)}:] = "
                       f"{list(expected)}, got {list(updates.shape)}")
    if columns:
        xp.add.at(out, columns, updates)
    elif updates.size:
        out += updates.reshape((-1,) + shape).sum(axis=0, dtype=out.dtype)
    return out


@KERNELS.register("OneHot")
def _one_hot(indices, depth, on_value, off_value, *, axis, xp):
    depth = int(depth)
    if depth < 0:
        raise _invalid(f"one_hot: depth must be non-negative, got {depth}")
    if on_value.ndim or off_value.ndim:
        raise _invalid("one_hot: on_value and off_value must be scalars")
    hot = indices[..., None] == xp.arange(depth, dtype=indices.dtype)
    out = xp.where(hot, on_value, off_value)
    if axis != -1 and axis != indices.ndim:
        out = xp.ascontiguousarray(xp.moveaxis(out, -1, axis))
    return out


@KERNELS.register("Where")
def _where(x, *, xp):
    return xp.argwhere(x).astype(np.int64, copy=False)


def _unique(x, out_idx):
    """(values in order of first appearance, idx, counts) of a vector."""
    if x.ndim != 1:
        raise _invalid(f"unique takes a 1-D tensor, got shape {list(x.shape)}")
    _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    dtype = out_idx.as_numpy_dtype
    return x[first[order]], position[inverse.reshape(-1)].astype(dtype), counts[order].astype(dtype)


@KERNELS.register("Unique")
def _unique_kernel(x, *, out_idx):
    return list(_unique(x, out_idx)[:2])


@KERNELS.register("ListDiff")
def _list_diff(x, y, *, out_idx):
    if x.ndim != 1 or y.ndim != 1:
        raise _invalid(f"ListDiff takes vectors, got shapes {list(x.shape)} and {list(y.shape)}")
    if x.dtype == object:  # strings: numpy's isin would compare them as objects one pair at a time
        dropped = set(y.tolist())
        kept = np.array([i for i, v in enumerate(x.tolist()) if v not in dropped], np.int64)
    else:
        kept = np.nonzero(~np.isin(x, y))[0]
    return x[kept], kept.astype(out_idx.as_numpy_dtype)


@KERNELS.register("UniqueWithCounts")
def _unique_with_counts(x, *, out_idx):
    return list(_unique(x, out_idx))


@KERNELS.register("UnravelIndex")
def _unravel_index(indices, dims):
    if indices.ndim > 1 or dims.ndim != 1:
        raise _invalid(f"UnravelIndex: indices must be a scalar or a vector and dims a vector, got shapes "
                       f"{list(indices.shape)} and {list(dims.shape)}")
    if (dims <= 0).any():
        raise _invalid(f"UnravelIndex: dims must be positive, got {dims.tolist()}")
    check_range(indices.reshape(-1), int(np.prod(dims, dtype=np.int64)), "UnravelIndex: indices")
    return np.stack(np.unravel_index(indices, tuple(dims.tolist()))).astype(indices.dtype)


def _tensor_scatter(op_type, apply):
    @KERNELS.register(op_type)
    def compute(tensor, indices, updates, *, xp):
        out = tensor.copy()
        columns = index_tuple(out, indices, op_type)
        expected = indices.shape[:-1] + tensor.shape[len(columns):]
        if updates.shape != expected:
            raise _invalid(f"{op_type}: updates must have shape indices.shape[:-1] + tensor.shape[{len(columns)}:] "
                           f"= {list(expected)}, got {list(updates.shape)}")
        apply(xp, out, columns, updates)
        return out


def _assign(xp, out, columns, updates):
    if columns:
        out[columns] = updates
    elif updates.size:
        out[...] = updates.reshape((-1,) + out.shape)[-1]


def _add(sign):
    def apply(xp, out, columns, updates):
        if columns:
            xp.add.at(out, columns, updates if sign > 0 else -updates)
        elif updates.size:
            out += sign * updates.reshape((-1,) + out.shape).sum(axis=0, dtype=out.dtype)
    return apply


_tensor_scatter("TensorScatterUpdate", _assign)
_tensor_scatter("TensorScatterAdd", _add(1))
_tensor_scatter("TensorScatterSub", _add(-1))
