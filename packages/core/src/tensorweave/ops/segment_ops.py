"""Segment reductions: the rows of data grouped by segment ids and summed, averaged, multiplied or reduced to their
maximum or minimum, with sorted ids (Segment*: a non-decreasing vector) or unsorted ones (UnsortedSegment*: any
shape prefixing data's, into ``num_segments`` rows; how IndexedSlices become dense). unsorted_segment_mean and
unsorted_segment_sqrt_n are built from sums, as in TF."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    comparison_ops, concat_split_ops, fill_ops, gather_ops, math_ops, shape_ops, unary_math_ops,
)

DEFS = OpDefList()

__all__ = ["unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
           "unsorted_segment_mean", "unsorted_segment_sqrt_n", "segment_sum", "segment_mean", "segment_max",
           "segment_min", "segment_prod"]

UNSORTED_SEGMENT_SUM = DEFS.define(
    "UnsortedSegmentSum", inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
    outputs=["output: T"], attrs=["T: numeric", "Tindices: {int32, int64}", "Tnumsegments: {int32, int64} = int32"],
    doc="output[i] = sum of data[j...] over j with segment_ids[j...] == i; negative ids are dropped.")
SEGMENT_SUM = DEFS.define(
    "SegmentSum", inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
    attrs=["T: numeric", "Tindices: {int32, int64}"],
    doc="Sums rows of data by sorted segment ids (a 1-D, non-decreasing, non-negative vector).")


def _sorted_op(op_type, doc):
    return DEFS.define(op_type, inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
                       attrs=[f"T: {'real' if op_type in ('SegmentMax', 'SegmentMin') else 'numeric'}",
                              "Tindices: {int32, int64}"], doc=doc)


def _unsorted_op(op_type, doc):
    return DEFS.define(op_type, inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
                       outputs=["output: T"], attrs=[f"T: {'numeric' if op_type.endswith('Prod') else 'real'}",
                                                     "Tindices: {int32, int64}", "Tnumsegments: {int32, int64} = int32"],
                       doc=doc)


SEGMENT_MEAN = _sorted_op("SegmentMean", "The mean of each segment's rows (sorted ids; 0 for an empty segment).")
SEGMENT_MAX = _sorted_op("SegmentMax", "The largest of each segment's rows (sorted ids; 0 for an empty segment).")
SEGMENT_MIN = _sorted_op("SegmentMin", "The smallest of each segment's rows (sorted ids; 0 for an empty segment).")
SEGMENT_PROD = _sorted_op("SegmentProd", "The product of each segment's rows (sorted ids; 1 for an empty segment).")
UNSORTED_SEGMENT_MAX = _unsorted_op("UnsortedSegmentMax", "The largest of each segment's rows (the lowest value of "
                                                          "the type for an empty segment).")
UNSORTED_SEGMENT_MIN = _unsorted_op("UnsortedSegmentMin", "The smallest of each segment's rows (the highest value "
                                                          "of the type for an empty segment).")
UNSORTED_SEGMENT_PROD = _unsorted_op("UnsortedSegmentProd", "The product of each segment's rows (1 when empty).")


@UNSORTED_SEGMENT_SUM.set_shape_fn
@UNSORTED_SEGMENT_MAX.set_shape_fn
@UNSORTED_SEGMENT_MIN.set_shape_fn
@UNSORTED_SEGMENT_PROD.set_shape_fn
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
@SEGMENT_MEAN.set_shape_fn
@SEGMENT_MAX.set_shape_fn
@SEGMENT_MIN.set_shape_fn
@SEGMENT_PROD.set_shape_fn
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


def _per_row(values, data, ids):
    """``values`` (one per id, or per segment) with a 1 appended for each dimension data has beyond ids', so it
    broadcasts against data's rows (or the segments' results)."""
    if data.shape.ndims is not None and ids.shape.ndims is not None:
        for _ in range(data.shape.ndims - ids.shape.ndims):
            values = shape_ops.expand_dims(values, -1)
        return values
    ones = fill_ops.ones(shape_ops.expand_dims(shape_ops.rank(data) - shape_ops.rank(ids), 0), dtype=dtypes.int32)
    return shape_ops.reshape(values, concat_split_ops.concat([shape_ops.shape(values), ones], 0))


@SEGMENT_MEAN.set_gradient
def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    counts = segment_sum(fill_ops.ones_like(ids, dtype=grad.dtype), ids)
    return [gather_ops.gather(grad, ids) / _per_row(gather_ops.gather(counts, ids), data, ids), None]


def _extreme_grad(sorted_ids):
    """The gradient goes to the rows equal to their segment's result, split evenly among ties (as TF)."""
    def grad_fn(op, grad):
        data, ids = op.inputs[:2]
        gather = gather_ops.gather if sorted_ids else _gather_drop_negatives
        selected = comparison_ops.equal(data, gather(op.outputs[0], ids))
        hits = unary_math_ops.cast(selected, grad.dtype)
        counts = segment_sum(hits, ids) if sorted_ids else unsorted_segment_sum(hits, ids, op.inputs[2])
        shares = gather(math_ops.div_no_nan(grad, counts), ids)
        return [comparison_ops.where_v2(selected, shares, 0)] + [None] * (len(op.inputs) - 1)
    return grad_fn


for _op_def, _sorted in ((SEGMENT_MAX, True), (SEGMENT_MIN, True), (UNSORTED_SEGMENT_MAX, False),
                         (UNSORTED_SEGMENT_MIN, False)):
    _op_def.set_gradient(_extreme_grad(_sorted))


def _prod_grad(sorted_ids):
    """d prod / d x_i: the product of the others (the product without zeros where x_i is the only zero; 0 where
    the segment holds more than one zero)."""
    def grad_fn(op, grad):
        data, ids = op.inputs[:2]
        if sorted_ids:
            gather, reduce_sum, reduce_prod = gather_ops.gather, segment_sum, segment_prod
        else:
            count = op.inputs[2]
            gather = _gather_drop_negatives
            reduce_sum = lambda x, i: unsorted_segment_sum(x, i, count)  # noqa: E731
            reduce_prod = lambda x, i: unsorted_segment_prod(x, i, count)  # noqa: E731
        is_zero = comparison_ops.equal(data, 0)
        zeros = reduce_sum(unary_math_ops.cast(is_zero, dtypes.int32), ids)
        grad = comparison_ops.where_v2(comparison_ops.greater(zeros, 1), fill_ops.zeros_like(grad), grad)
        nonzero_product = reduce_prod(comparison_ops.where_v2(is_zero, fill_ops.ones_like(data), data), ids)
        others = comparison_ops.where_v2(is_zero, gather(nonzero_product, ids),
                                         math_ops.div_no_nan(gather(op.outputs[0], ids), data))
        return [gather(grad, ids) * others] + [None] * (len(op.inputs) - 1)
    return grad_fn


SEGMENT_PROD.set_gradient(_prod_grad(True))
UNSORTED_SEGMENT_PROD.set_gradient(_prod_grad(False))


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums the slices of ``data`` into ``num_segments`` rows by ``segment_ids`` (of shape data.shape[:k]).

    An id outside [0, num_segments) raises InvalidArgumentError when run, except negative ids, which are
    dropped (as in TF).
    """
    return apply_op("UnsortedSegmentSum", [data, segment_ids, num_segments], name=name or "UnsortedSegmentSum")


def segment_sum(data, segment_ids, name=None):
    """Sums rows of ``data`` by sorted ``segment_ids``; the output has max(segment_ids) + 1 rows."""
    return apply_op("SegmentSum", [data, segment_ids], name=name or "SegmentSum")


def segment_mean(data, segment_ids, name=None):
    """The mean of the rows of ``data`` in each segment of sorted ``segment_ids``."""
    return apply_op("SegmentMean", [data, segment_ids], name=name or "SegmentMean")


def segment_max(data, segment_ids, name=None):
    """The largest of the rows of ``data`` in each segment of sorted ``segment_ids``."""
    return apply_op("SegmentMax", [data, segment_ids], name=name or "SegmentMax")


def segment_min(data, segment_ids, name=None):
    """The smallest of the rows of ``data`` in each segment of sorted ``segment_ids``."""
    return apply_op("SegmentMin", [data, segment_ids], name=name or "SegmentMin")


def segment_prod(data, segment_ids, name=None):
    """The product of the rows of ``data`` in each segment of sorted ``segment_ids``."""
    return apply_op("SegmentProd", [data, segment_ids], name=name or "SegmentProd")


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """The largest of the slices of ``data`` in each of ``num_segments`` segments (negative ids dropped)."""
    return apply_op("UnsortedSegmentMax", [data, segment_ids, num_segments], name=name or "UnsortedSegmentMax")


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """The smallest of the slices of ``data`` in each of ``num_segments`` segments (negative ids dropped)."""
    return apply_op("UnsortedSegmentMin", [data, segment_ids, num_segments], name=name or "UnsortedSegmentMin")


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """The product of the slices of ``data`` in each of ``num_segments`` segments (negative ids dropped)."""
    return apply_op("UnsortedSegmentProd", [data, segment_ids, num_segments], name=name or "UnsortedSegmentProd")


def _segment_sizes(data, segment_ids, num_segments):
    """How many slices each segment has (at least 1), shaped to broadcast against the segment sums."""
    sizes = unsorted_segment_sum(fill_ops.ones_like(segment_ids, dtype=data.dtype), segment_ids, num_segments)
    return _per_row(math_ops.maximum(sizes, 1), data, segment_ids)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of the slices of ``data`` in each of ``num_segments`` segments (0 for an empty one)."""
    with graph_mod.name_scope(name, "UnsortedSegmentMean", [data, segment_ids, num_segments]):
        data = convert_to_tensor(data, name="data")
        segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
        summed = unsorted_segment_sum(data, segment_ids, num_segments)
        return summed / _segment_sizes(data, segment_ids, num_segments)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum of each segment's slices divided by the square root of their number."""
    with graph_mod.name_scope(name, "UnsortedSegmentSqrtN", [data, segment_ids, num_segments]):
        data = convert_to_tensor(data, name="data")
        segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
        summed = unsorted_segment_sum(data, segment_ids, num_segments)
        return summed / unary_math_ops.sqrt(_segment_sizes(data, segment_ids, num_segments))


def _indexed_slices_to_dense(value, dtype=None, name=None, as_ref=False):
    """An IndexedSlices wherever a tensor is expected: its slices summed into the rows of a dense tensor."""
    if dtype is not None and dtype != value.dtype:
        raise ValueError(f"cannot convert IndexedSlices of dtype {value.dtype.name} to {dtype}")
    if value.dense_shape is None:
        raise ValueError(f"cannot convert {value!r} to a dense tensor: its dense_shape is unknown")
    return unsorted_segment_sum(value.values, value.indices, gather_ops.gather(value.dense_shape, 0), name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_dense)
