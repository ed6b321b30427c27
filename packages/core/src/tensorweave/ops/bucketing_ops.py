"""Counting values into buckets: ``tf.bincount``, ``tf.histogram_fixed_width`` (and ``_bins``) and
``tf.searchsorted`` (LowerBound/UpperBound). None is differentiable, as in TF."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import comparison_ops, math_ops, reduction_ops, segment_ops, shape_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["bincount", "histogram_fixed_width", "histogram_fixed_width_bins", "searchsorted"]

BINCOUNT = DEFS.define("Bincount", inputs=["arr: int32", "size: int32", "weights: T"], outputs=["bins: T"],
                       attrs=["T: {int32, int64, float32, float64}"], grad=NOT_DIFFERENTIABLE,
                       doc="How often each value of [0, size) occurs in arr (the sum of its weights when weights "
                           "is not empty); values outside are ignored.")
HISTOGRAM = DEFS.define("HistogramFixedWidth", inputs=["values: T", "value_range: T", "nbins: int32"],
                        outputs=["out: dtype"], attrs=["T: {int32, int64, float32, float64}",
                                                       "dtype: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                        doc="Counts of values in nbins equal-width bins over value_range; values below fall in the "
                            "first bin, values above in the last.")


def _vector_of_size(op, index):
    n = constant_value(op.inputs[index])
    return tensor_shape.TensorShape([None if n is None else int(n)])


BINCOUNT.set_shape_fn(lambda op: _vector_of_size(op, 1))
HISTOGRAM.set_shape_fn(lambda op: _vector_of_size(op, 2))


def _bound(op_type, doc):
    op_def = DEFS.define(op_type, inputs=["sorted_inputs: T", "values: T"], outputs=["output: out_type"],
                         attrs=["T: type", "out_type: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE, doc=doc)
    op_def.set_shape_fn(lambda op: op.inputs[1].shape)
    return op_def


_bound("LowerBound", "For each row, the first index of sorted_inputs' row whose entry is >= each value.")
_bound("UpperBound", "For each row, the first index of sorted_inputs' row whose entry is > each value.")


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32, name=None):
    """Counts of each value 0..max(arr) in ``arr`` (or sums of ``weights`` there), at least ``minlength`` and at
    most ``maxlength`` long, as TF 1.15 builds it (weights go through UnsortedSegmentSum)."""
    with graph_mod.name_scope(name, "bincount", [arr, weights, minlength, maxlength]):
        arr = convert_to_tensor(arr, name="arr", dtype=dtypes.int32)
        nonempty = comparison_ops.greater(reduction_ops.reduce_prod(shape_ops.shape(arr)), 0)
        output_size = unary_math_ops.cast(nonempty, dtypes.int32) * (reduction_ops.reduce_max(arr) + 1)
        if minlength is not None:
            output_size = math_ops.maximum(convert_to_tensor(minlength, dtypes.int32, name="minlength"), output_size)
        if maxlength is not None:
            output_size = math_ops.minimum(convert_to_tensor(maxlength, dtypes.int32, name="maxlength"), output_size)
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            return segment_ops.unsorted_segment_sum(weights, arr, output_size)
        empty = convert_to_tensor([], dtype=dtypes.as_dtype(dtype))
        return apply_op("Bincount", [arr, output_size, empty], name="Bincount")


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """Counts of ``values`` in ``nbins`` equal bins spanning ``value_range`` (outliers join the end bins)."""
    with graph_mod.name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, dtype=values.dtype, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        return apply_op("HistogramFixedWidth", [values, value_range, nbins], {"dtype": dtypes.as_dtype(dtype)},
                        name=scope)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The bin index of each of ``values`` among ``nbins`` equal bins over ``value_range`` (shape of values;
    outliers clipped to the end bins), as TF builds it from floor and clip."""
    with graph_mod.name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        shape = shape_ops.shape(values)
        values = shape_ops.reshape(values, [-1])
        value_range = convert_to_tensor(value_range, dtype=values.dtype, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        nbins_float = unary_math_ops.cast(nbins, values.dtype)
        scaled = math_ops.truediv(values - value_range[0], value_range[1] - value_range[0], name="scaled_values")
        indices = unary_math_ops.floor(nbins_float * scaled, name="indices")
        indices = unary_math_ops.cast(comparison_ops.clip_by_value(indices, 0, nbins_float - 1), dtypes.as_dtype(dtype))
        return shape_ops.reshape(indices, shape)


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """For each of ``values``, where it would go in the matching row of ``sorted_sequence`` (sorted along the
    last axis; leading axes are rows): 'left' before equal entries, 'right' after them."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    with graph_mod.name_scope(name, "searchsorted", [sorted_sequence, values]) as scope:
        sorted_sequence = convert_to_tensor(sorted_sequence, name="sorted_sequence")
        values = convert_to_tensor(values, dtype=sorted_sequence.dtype, name="values")
        seq_2d = shape_ops.reshape(sorted_sequence, [-1, shape_ops.shape(sorted_sequence)[-1]])
        values_2d = shape_ops.reshape(values, [-1, shape_ops.shape(values)[-1]])
        op_type = "LowerBound" if side == "left" else "UpperBound"
        out = apply_op(op_type, [seq_2d, values_2d], {"out_type": dtypes.as_dtype(out_type)}, name=op_type)
        out.set_shape(values_2d.shape)
        return shape_ops.reshape(out, shape_ops.shape(values), name=scope)
