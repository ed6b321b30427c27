"""Gathering and scattering: gather (GatherV2, and the old Gather), gather_nd, scatter_nd.

A gather along axis 0 gets an IndexedSlices gradient (only the rows read are touched, which optimizers and
embedding lookups rely on); other axes and batch dims get a dense gradient summed with UnsortedSegmentSum.
Indices outside the valid range fail at run time with InvalidArgumentError (never numpy's wrap-around).
The one-hot, mask and unique ops live in ``mask_ops``.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import name_scope
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import (
    constant_value, constant_value_as_shape,
)
from tensorweave.ops import (
    concat_split_ops, math_ops, range_ops, reduction_ops, segment_ops, shape_ops, transpose_ops, unary_math_ops,
)

DEFS = OpDefList()

__all__ = ["gather", "gather_nd", "scatter_nd", "unravel_index"]

_INDICES = "Tindices: {int32, int64}"

GATHER_V2 = DEFS.define(
    "GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"], outputs=["output: Tparams"],
    attrs=["batch_dims: int = 0", "Tparams: any", _INDICES, "Taxis: {int32, int64}"],
    doc="Slices of params along axis at indices: params.shape[:axis] + indices.shape[batch_dims:] + "
        "params.shape[axis + 1:].")
GATHER = DEFS.define(
    "Gather", inputs=["params: Tparams", "indices: Tindices"], outputs=["output: Tparams"],
    attrs=["validate_indices: bool = True", "Tparams: any", _INDICES],
    doc="Rows of params at indices (TF's first Gather, kept for imported graphs).")
GATHER_ND = DEFS.define(
    "GatherNd", inputs=["params: Tparams", "indices: Tindices"], outputs=["output: Tparams"],
    attrs=["Tparams: any", _INDICES],
    doc="params[indices[..., 0], …, indices[..., k-1]]: each innermost index vector picks an element or slice.")
SCATTER_ND = DEFS.define(
    "ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"], outputs=["output: T"],
    attrs=["T: {numeric, bool}", _INDICES],
    doc="Zeros of ``shape`` with updates added at the index vectors (duplicates sum): GatherNd's adjoint.")


# ---- shapes -----------------------------------------------------------------------------------------------------------
def gather_shape(params, indices, axis, batch_dims):
    """The static output shape of a gather (``axis`` an int, or None when known only at run time)."""
    if batch_dims < 0:
        if indices.ndims is None:
            return tensor_shape.TensorShape(None)
        batch_dims += indices.ndims
        if batch_dims < 0:
            raise ValueError(f"batch_dims {batch_dims - indices.ndims} is out of range for indices of rank "
                             f"{indices.ndims}")
    if params.ndims is not None and params.ndims < 1:
        raise ValueError(f"params must be at least 1-D to gather from, got shape {params}")
    if params.ndims is None or axis is None:
        if params.ndims is None or indices.ndims is None:
            return tensor_shape.TensorShape(None)
        return tensor_shape.unknown_shape(params.ndims - 1 + indices.ndims - batch_dims)
    rank = params.ndims
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for params of rank {rank} (expected [-{rank}, {rank}))")
    axis %= rank
    if batch_dims > axis:
        raise ValueError(f"batch_dims ({batch_dims}) must be less than or equal to axis ({axis})")
    if indices.ndims is not None:
        if batch_dims > indices.ndims:
            raise ValueError(f"batch_dims ({batch_dims}) must be at most the rank of indices ({indices.ndims})")
        if not params[:batch_dims].is_compatible_with(indices[:batch_dims]):
            raise ValueError(f"the first batch_dims={batch_dims} dimensions of params {params} and indices "
                             f"{indices} must match")
        batch = params[:batch_dims].merge_with(indices[:batch_dims])
        return batch.concatenate(params[batch_dims:axis]).concatenate(indices[batch_dims:]).concatenate(
            params[axis + 1:])
    return tensor_shape.TensorShape(None)


@GATHER_V2.set_shape_fn
def _gather_v2_shape(op):
    params, indices, axis = op.inputs
    axis.shape.with_rank(0)
    value = constant_value(axis)
    return gather_shape(params.shape, indices.shape, None if value is None else int(value), op.get_attr("batch_dims"))


@GATHER.set_shape_fn
def _gather_shape(op):
    return gather_shape(op.inputs[0].shape, op.inputs[1].shape, 0, 0)


@GATHER_ND.set_shape_fn
def _gather_nd_shape(op):
    params, indices = (t.shape for t in op.inputs)
    indices.with_rank_at_least(1)
    depth = indices[-1].value if indices.ndims is not None else None
    if depth is None or params.ndims is None:
        return tensor_shape.TensorShape(None) if indices.ndims is None else \
            indices[:-1].concatenate(tensor_shape.TensorShape(None))
    if depth > params.ndims:
        raise ValueError(f"index vectors of length {depth} (indices {indices}) cannot index params of rank "
                         f"{params.ndims} ({params})")
    return indices[:-1].concatenate(params[depth:])


@SCATTER_ND.set_shape_fn
def _scatter_nd_shape(op):
    indices, updates, shape = op.inputs
    shape.shape.with_rank(1)
    indices.shape.with_rank_at_least(1)
    out = constant_value_as_shape(shape)
    depth = indices.shape[-1].value if indices.shape.ndims is not None else None
    if depth is not None and out.ndims is not None:
        if depth > out.ndims:
            raise ValueError(f"index vectors of length {depth} cannot index an output of rank {out.ndims} ({out})")
        expected = indices.shape[:-1].concatenate(out[depth:])
        if not expected.is_compatible_with(updates.shape):
            raise ValueError(f"updates must have shape indices.shape[:-1] + shape[{depth}:] = {expected}, got "
                             f"{updates.shape}")
        if updates.shape.ndims is not None:
            out = out[:depth].concatenate(out[depth:].merge_with(updates.shape[indices.shape.ndims - 1:]))
    return out


# ---- constant folding (shape arithmetic) -----------------------------------------------------------------------------
def _fold(op, axis, batch_dims):
    params, indices = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    if params is None or indices is None or batch_dims or params.ndim == 0:
        return None
    if indices.size and (indices.min() < 0 or indices.max() >= params.shape[axis]):
        return None
    return np.take(params, indices, axis=axis)


@GATHER_V2.set_constant_fn
def _gather_v2_value(op, index):
    axis = constant_value(op.inputs[2])
    return None if axis is None else _fold(op, int(axis), op.get_attr("batch_dims"))


GATHER.set_constant_fn(lambda op, index: _fold(op, 0, 0))


# ---- gradients ----------------------------------------------------------------------------------------------------------
def _shape_vector(t, dtype=dtypes.int32):
    """t's shape as a 1-D tensor: a constant when known while building."""
    if t.shape.is_fully_defined():
        return convert_to_tensor(np.asarray(t.shape.as_list(), dtype.as_numpy_dtype))
    return shape_ops.shape(t, out_type=dtype)


def _rows_gradient(params, indices, grad):
    """IndexedSlices for a gather of rows: values = the output gradient with the index dims flattened."""
    params_shape = _shape_vector(params)
    grad = convert_to_tensor(grad)
    if indices.shape.ndims != 1:
        count = shape_ops.expand_dims(shape_ops.size(indices), 0)
        grad = shape_ops.reshape(grad, concat_split_ops.concat([count, params_shape[1:]], 0))
        indices = shape_ops.reshape(indices, [-1])
    return IndexedSlices(grad, indices, params_shape)


def _dense_gather_gradient(params, indices, grad, axis, batch_dims):
    """d(params) of a gather along ``axis`` with ``batch_dims``, summed into the positions read.

    The output [B, O, J, I] (batch, outer, index and inner dims) is reshaped to [B, O, Jflat, I] and
    transposed to [B*Jflat, O, I]; the batch offsets make the indices positions in [B*A) so one
    UnsortedSegmentSum sums every batch; the result [B, A, O, I] is transposed back to [B, O, A, I].
    ``axis`` and the rank may be Python ints or int32 tensors.
    """
    params_shape = _shape_vector(params)
    rank = params.shape.ndims if params.shape.ndims is not None else shape_ops.rank(params)
    b = batch_dims
    batch, outer = params_shape[:b], params_shape[b:axis]
    gathered, inner = params_shape[axis], params_shape[axis + 1:]
    values = shape_ops.reshape(convert_to_tensor(grad), concat_split_ops.concat([batch, outer, [-1], inner], 0))
    moves = not (isinstance(axis, int) and axis == b)
    if moves:
        to_front = concat_split_ops.concat([range_ops.range(b), _vec(axis), range_ops.range(b, axis),
                                     range_ops.range(axis + 1, rank)], 0)
        values = transpose_ops.transpose(values, to_front)
    values = shape_ops.reshape(values, concat_split_ops.concat([[-1], outer, inner], 0))
    ids = unary_math_ops.cast(indices, dtypes.int32)
    segments = gathered
    if b:
        batch_size = reduction_ops.reduce_prod(batch)
        offsets = shape_ops.reshape(range_ops.range(batch_size) * gathered, [-1, 1])
        ids = shape_ops.reshape(ids, concat_split_ops.stack([batch_size, -1])) + offsets
        segments = batch_size * gathered
    summed = segment_ops.unsorted_segment_sum(values, shape_ops.reshape(ids, [-1]), segments)
    summed = shape_ops.reshape(summed, concat_split_ops.concat([batch, _vec(gathered), outer, inner], 0))
    if moves:
        back = concat_split_ops.concat([range_ops.range(b), range_ops.range(b + 1, axis + 1), [b],
                                 range_ops.range(axis + 1, rank)], 0)
        summed = transpose_ops.transpose(summed, back)
    return summed


def _vec(value):
    """[value] for an int, a 1-vector for a scalar tensor."""
    if isinstance(value, int):
        return [value]
    return shape_ops.reshape(value, [1])


def _normalized_axis(op, params):
    """(axis, batch_dims) of a GatherV2 as non-negative values: ints where known, an int32 tensor otherwise."""
    batch_dims = op.get_attr("batch_dims")
    if batch_dims < 0:
        batch_dims += op.inputs[1].shape.ndims
    value = constant_value(op.inputs[2])
    rank = params.shape.ndims
    if value is not None and rank is not None:
        return int(value) % rank, batch_dims
    axis = unary_math_ops.cast(op.inputs[2], dtypes.int32)
    rank = rank if rank is not None else shape_ops.rank(params)
    return math_ops.floormod(axis, rank), batch_dims


@GATHER_V2.set_gradient
def _gather_v2_grad(op, grad):
    params, indices, _ = op.inputs
    axis, batch_dims = _normalized_axis(op, params)
    if isinstance(axis, int) and axis == 0 and batch_dims == 0:
        return [_rows_gradient(params, indices, grad), None, None]
    return [_dense_gather_gradient(params, indices, grad, axis, batch_dims), None, None]


@GATHER.set_gradient
def _gather_grad(op, grad):
    return [_rows_gradient(op.inputs[0], op.inputs[1], grad), None]


@GATHER_ND.set_gradient
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    return [scatter_nd(indices, convert_to_tensor(grad), _shape_vector(params, indices.dtype)), None]


@SCATTER_ND.set_gradient
def _scatter_nd_grad(op, grad):
    indices = op.inputs[0]
    return [None, gather_nd(convert_to_tensor(grad), indices), None]


# ---- wrappers ----------------------------------------------------------------------------------------------------------
def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """Slices of ``params`` along ``axis`` (default: the first non-batch axis, i.e. ``batch_dims``) at
    ``indices``: the result has shape params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:].
    With ``batch_dims`` b, the first b dims of params and indices are batch dims gathered from in step.
    A resource variable reads only the rows asked for. ``validate_indices`` is accepted and ignored (indices
    are always checked: an out-of-range index fails with InvalidArgumentError)."""
    if batch_dims < 0:
        indices = convert_to_tensor(indices, name="indices")
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError(f"gather: a negative batch_dims ({batch_dims}) needs indices of known rank")
        batch_dims += rank
    if axis is None:
        axis = batch_dims
    if hasattr(params, "sparse_read") and isinstance(axis, int) and axis == 0 and batch_dims == 0:
        return params.sparse_read(indices, name=name)
    return apply_op("GatherV2", [params, indices, axis], {"batch_dims": batch_dims}, name=name or "GatherV2")


def gather_nd(params, indices, name=None, batch_dims=0):
    """params[tuple(indices[..., i])]: each innermost vector of ``indices`` (length k) picks an element
    (k = rank) or a slice (k < rank); the result has shape indices.shape[:-1] + params.shape[k:]. With
    ``batch_dims`` b, params and indices share their first b dims and each batch indexes its own params."""
    if not batch_dims:
        return apply_op("GatherNd", [params, indices], name=name or "GatherNd")
    return _batch_gather_nd(convert_to_tensor(params, name="params"), convert_to_tensor(indices, name="indices"),
                            batch_dims, name)


def _batch_gather_nd(params, indices, batch_dims, name):
    """gather_nd with batch dims: each index vector is prefixed with its flat batch number."""
    if batch_dims < 0 or (indices.shape.ndims is not None and batch_dims >= indices.shape.ndims):
        raise ValueError(f"gather_nd: batch_dims must be in [0, rank(indices) - 1), got {batch_dims} for indices "
                         f"of shape {indices.shape}")
    static = _batch_gather_nd_shape(params.shape, indices.shape, batch_dims)
    with name_scope(name or "GatherNd"):
        params_shape, indices_shape = _shape_vector(params, indices.dtype), _shape_vector(indices, indices.dtype)
        flat_params = shape_ops.reshape(params, concat_split_ops.concat([[-1], params_shape[batch_dims:]], 0))
        batch_size = reduction_ops.reduce_prod(indices_shape[:batch_dims])
        flat_indices = shape_ops.reshape(indices, concat_split_ops.stack([batch_size, -1, indices_shape[-1]]))
        batch_number = shape_ops.reshape(range_ops.range(batch_size), [-1, 1, 1])
        prefixed = concat_split_ops.concat([flat_indices[:, :, :1] * 0 + batch_number, flat_indices], 2)
        result = apply_op("GatherNd", [flat_params, prefixed])
        depth = indices_shape[-1]
        out_shape = concat_split_ops.concat([indices_shape[:-1], params_shape[batch_dims:][depth:]], 0)
        result = shape_ops.reshape(result, out_shape)
    result.set_shape(static)
    return result


def _batch_gather_nd_shape(params, indices, batch_dims):
    if params.ndims is None or indices.ndims is None or indices[-1].value is None:
        return tensor_shape.TensorShape(None)
    depth = indices[-1].value
    if batch_dims + depth > params.ndims:
        raise ValueError(f"gather_nd: index vectors of length {depth} after {batch_dims} batch dims cannot index "
                         f"params of shape {params}")
    if not params[:batch_dims].is_compatible_with(indices[:batch_dims]):
        raise ValueError(f"gather_nd: the first batch_dims={batch_dims} dims of params {params} and indices "
                         f"{indices} must match")
    return params[:batch_dims].merge_with(indices[:batch_dims]).concatenate(indices[batch_dims:-1]).concatenate(
        params[batch_dims + depth:])


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (index vectors of length k; updates has shape
    indices.shape[:-1] + shape[k:]); duplicate indices sum."""
    indices = convert_to_tensor(indices, name="indices")
    shape = convert_to_tensor(shape, dtype=None if hasattr(shape, "dtype") else indices.dtype, name="shape")
    return apply_op("ScatterNd", [indices, updates, shape], name=name or "ScatterNd")


# ---- UnravelIndex --------------------------------------------------------------------------------------------------
UNRAVEL_INDEX = DEFS.define("UnravelIndex", inputs=["indices: Tidx", "dims: Tidx"], outputs=["output: Tidx"],
                            attrs=["Tidx: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                            doc="The coordinates of flat indices in an array of shape dims: [len(dims)] for a "
                                "scalar index, [len(dims), n] for a vector of n.")


@UNRAVEL_INDEX.set_shape_fn
def _unravel_index_shape(op):
    indices, dims = (t.shape for t in op.inputs)
    dims.with_rank(1)
    if indices.ndims is None:
        return tensor_shape.TensorShape(None)
    if indices.ndims == 0:
        return dims
    return tensor_shape.TensorShape([dims.dims[0].value, indices.dims[0].value])


def unravel_index(indices, dims, name=None):
    """The coordinates of the flat ``indices`` in an array of shape ``dims`` (one column per index)."""
    return apply_op("UnravelIndex", [indices, dims], name=name or "UnravelIndex")
