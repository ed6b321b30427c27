"""Segment sums: UnsortedSegmentSum (rows added into ``num_segments`` buckets; how IndexedSlices become dense)
and SegmentSum (sorted segment ids)."""

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import register_tensor_conversion_function
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import comparison_ops, concat_split_ops, fill_ops, gather_ops, math_ops, shape_ops

DEFS = OpDefList()

__all__ = ["unsorted_segment_sum", "segment_sum"]

UNSORTED_SEGMENT_SUM = DEFS.define(
    "UnsortedSegmentSum", inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
    outputs=["output: T"], attrs=["T: numeric", "Tindices: {int32, int64}", "Tnumsegments: {int32, int64} = int32"],
    doc="output[i] = sum of data[j...] over j with segment_ids[j...] == i; negative ids are dropped.")
SEGMENT_SUM = DEFS.define(
    "SegmentSum", inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
    attrs=["T: numeric", "Tindices: {int32, int64}"],
    doc="Sums rows of data by sorted segment ids (a 1-D, non-decreasing, non-negative vector).")


@UNSORTED_SEGMENT_SUM.set_shape_fn
def _unsorted_segment_sum_shape(op):
    data, ids, num_segments = op.inputs
    num_segments.shape.with_rank(0)
    count = constant_value(num_segments)
    if data.shape.ndims is None or ids.shape.ndims is None:
        return tensor_shape.TensorShape(None)
    prefix = data.shape[:ids.shape.ndims]
    if not prefix.is_compatible_with(ids.shape):
        raise ValueError(f"segment_ids of shape {ids.shape} must be a prefix of data's shape {data.shape}")
    return tensor_shape.TensorShape([None if count is None else int(count)]).concatenate(data.shape[ids.shape.ndims:])


@SEGMENT_SUM.set_shape_fn
def _segment_sum_shape(op):
    data, ids = op.inputs
    ids.shape.with_rank(1)
    data = data.shape.with_rank_at_least(1)
    if not data[:1].is_compatible_with(ids.shape):
        raise ValueError(f"segment_ids of shape {ids.shape} must have one entry per row of data {data}")
    return tensor_shape.TensorShape([None]).concatenate(data[1:])


@UNSORTED_SEGMENT_SUM.set_gradient
def _unsorted_segment_sum_grad(op, grad):
    return [_gather_drop_negatives(grad, op.inputs[1]), None, None]


@SEGMENT_SUM.set_gradient
def _segment_sum_grad(op, grad):
    return [gather_ops.gather(grad, op.inputs[1]), None]


def _gather_drop_negatives(params, ids):
    """params[ids] with zero rows where an id is negative (those rows were dropped going forward)."""
    gathered = gather_ops.gather(params, math_ops.maximum(ids, 0))
    kept = comparison_ops.greater_equal(ids, 0)
    extra = None if gathered.shape.ndims is None or ids.shape.ndims is None else \
        gathered.shape.ndims - ids.shape.ndims
    if extra is not None:
        for _ in range(extra):
            kept = shape_ops.expand_dims(kept, -1)
    else:
        kept_shape = shape_ops.shape(kept)
        ones = fill_ops.ones(shape_ops.expand_dims(shape_ops.rank(gathered) - shape_ops.rank(kept), 0),
                              dtype=kept_shape.dtype)
        kept = shape_ops.reshape(kept, concat_split_ops.concat([kept_shape, ones], 0))
    return comparison_ops.where_v2(kept, gathered, 0)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the slices of ``data`` into ``num_segments`` rows by ``segment_ids`` (of shape data.shape[:k]).

    An id outside [0, num_segments) raises InvalidArgumentError when run, except negative ids, which are
    dropped (as in TF).
    """
    return apply_op("UnsortedSegmentSum", [data, segment_ids, num_segments], name=name or "UnsortedSegmentSum")


def segment_sum(data, segment_ids, name=None):
    """Sums rows of ``data`` by sorted ``segment_ids``; the output has max(segment_ids) + 1 rows."""
    return apply_op("SegmentSum", [data, segment_ids], name=name or "SegmentSum")


def _indexed_slices_to_dense(value, dtype=None, name=None, as_ref=False):
    """An IndexedSlices wherever a tensor is expected: its slices summed into the rows of a dense tensor."""
    if dtype is not None and dtype != value.dtype:
        raise ValueError(f"cannot convert IndexedSlices of dtype {value.dtype.name} to {dtype}")
    if value.dense_shape is None:
        raise ValueError(f"cannot convert {value!r} to a dense tensor: its dense_shape is unknown")
    return unsorted_segment_sum(value.values, value.indices, gather_ops.gather(value.dense_shape, 0), name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_dense)
