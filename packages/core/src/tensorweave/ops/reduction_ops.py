"""Reductions (reduce_sum/mean/max/min/prod/all/any, reduce_logsumexp, count_nonzero) and argmax/argmin.

The reduction ops take their axes as a tensor input (``reduction_indices``), as in TF, so axes may be
computed at run time; shapes are inferred whenever the axes are constant. Gradients reshape the output
gradient to keep the reduced axes and spread it over the input: with Python-computed shapes when the
input shape and axes are known while building, with Shape/DynamicStitch otherwise.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import common_shapes, graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_ops, comparison_ops, concat_split_ops, cumulative_ops, dynamic_partition_ops, fill_ops, gather_ops, math_ops,
    pad_tile_ops, range_ops, segment_ops, shape_ops, transpose_ops, unary_math_ops,
)

DEFS = OpDefList()

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all", "reduce_any",
           "reduce_logsumexp", "reduce_variance", "reduce_std", "count_nonzero", "argmax", "argmin",
           "arg_max", "arg_min"]


def _static_axes(op):
    """The reduction axes as non-negative Python ints if known while building (validated), else None."""
    x, axes = op.inputs
    value = constant_value(axes)
    if value is None:
        return None
    rank = x.shape.ndims
    axes = [int(a) for a in np.asarray(value).reshape(-1)]
    if rank is None:
        return None if any(a < 0 for a in axes) else axes
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions")
    return sorted({a % rank for a in axes}) if rank else []


def reduction_shape(op):
    """The output shape of a reduction op (input, axes; keep_dims attr): also ReduceJoin's."""
    x, axes = op.inputs
    keep = op.get_attr("keep_dims")
    if axes.shape.ndims is not None and axes.shape.ndims > 1:
        raise ValueError(f"reduction axes must be a scalar or a vector, got shape {axes.shape}")
    static = _static_axes(op)
    if static is None or x.shape.ndims is None:
        if keep and x.shape.ndims is not None:
            return tensor_shape.unknown_shape(x.shape.ndims)
        return tensor_shape.TensorShape(None)
    return common_shapes.reduced_shape(x.shape, static, keep)


def _reduction(op_type, type_attr, doc, grad=None):
    return DEFS.define(op_type, inputs=["input: T", "reduction_indices: Tidx"], outputs=["output: T"],
                       attrs=[type_attr, "Tidx: {int32, int64} = int32", "keep_dims: bool = False"],
                       shape_fn=reduction_shape, grad=grad, doc=doc)


SUM = _reduction("Sum", "T: numeric", "The sum over the given axes (float16 accumulates in float32).")
MEAN = _reduction("Mean", "T: numeric", "The mean over the given axes (integer means truncate toward zero).")
MAX = _reduction("Max", "T: real", "The largest entry over the given axes (the lowest value for an empty axis).")
MIN = _reduction("Min", "T: real", "The smallest entry over the given axes (the highest value for an empty axis).")
PROD = _reduction("Prod", "T: numeric", "The product over the given axes.")
ALL = _reduction("All", "T: {bool}", "Logical AND over the given axes.", grad=NOT_DIFFERENTIABLE)
ANY = _reduction("Any", "T: {bool}", "Logical OR over the given axes.", grad=NOT_DIFFERENTIABLE)
EUCLIDEAN_NORM = _reduction("EuclideanNorm", "T: numeric", "sqrt(sum(|x| ** 2)) over the given axes.")


# ---- gradients ------------------------------------------------------------------------------------------------------
def _layout(op):
    """(kept, multiples, count) of reduction ``op``: the output shape with reduced axes as 1, how often each
    output entry repeats along each input axis, and the entries per output entry; Python values where the
    shapes known while building decide them, tensors otherwise."""
    x = op.inputs[0]
    static = _static_axes(op)
    if static is None or x.shape.ndims is None:
        return _dynamic_layout(op)
    dims = x.shape.as_list()
    reduced = [i in static for i in range(len(dims))]
    kept = [1 if r else d for r, d in zip(reduced, dims)]
    multiples = [d if r else 1 for r, d in zip(reduced, dims)]
    if None in kept or None in multiples:
        input_shape, mask = shape_ops.shape(x), np.array(reduced, np.int32)
        if kept.count(None) == 1:
            kept = [-1 if d is None else d for d in kept]
        elif None in kept:
            kept = input_shape * (1 - mask) + mask
        if None in multiples:
            multiples = input_shape if all(reduced) else input_shape * mask + (1 - mask)
    count = int(np.prod(multiples, dtype=np.int64)) if isinstance(multiples, list) else reduce_prod(multiples)
    return kept, multiples, count


def _run_time_axes(op):
    """(input shape, rank, reduced axes made non-negative) as tensors, for axes or a rank known only at run
    time. The modulus is max(rank, 1): a scalar (rank 0) has no axes to reduce, and must not divide by 0."""
    x, axes = op.inputs
    input_shape = shape_ops.shape(x)
    rank = shape_ops.size(input_shape)
    axes = unary_math_ops.cast(shape_ops.reshape(axes, [-1]), dtypes.int32)
    return input_shape, rank, math_ops.floormod(axes + rank, math_ops.maximum(rank, 1))


def _dynamic_layout(op):
    """_layout for axes or a rank known only at run time (TF's DynamicStitch construction)."""
    input_shape, rank, axes = _run_time_axes(op)
    kept = dynamic_partition_ops.dynamic_stitch([range_ops.range(rank), axes],
                                                [input_shape, fill_ops.fill(shape_ops.shape(axes), 1)])
    multiples = math_ops.floordiv(input_shape, math_ops.maximum(kept, 1))
    return kept, multiples, reduce_prod(multiples)


def _with_kept_dims(op, value, kept):
    """An output-shaped ``value`` reshaped so the reduced axes are there with size 1."""
    if op.get_attr("keep_dims") or (isinstance(kept, list) and value.shape.ndims is not None and
                                    value.shape.as_list() == kept):
        return value
    return shape_ops.reshape(value, kept)


def _spread(op, grad, layout):
    """The output gradient repeated over every input entry it summarizes (reshape, then tile)."""
    kept, multiples, _ = layout
    grad = _with_kept_dims(op, grad, kept)
    if isinstance(multiples, list) and all(m == 1 for m in multiples):
        return grad
    return pad_tile_ops.tile(grad, multiples)


SUM.set_gradient(lambda op, grad: [_spread(op, grad, _layout(op)), None])


@MEAN.set_gradient
def _mean_grad(op, grad):
    layout = _layout(op)
    count = layout[2]
    count = max(count, 1) if isinstance(count, int) else unary_math_ops.cast(math_ops.maximum(count, 1), grad.dtype)
    return [math_ops.truediv(_spread(op, grad, layout), count), None]


def _min_max_grad(op, grad):
    """Split equally among the entries that attain the extreme (TF's rule for ties)."""
    x, axes = op.inputs
    kept = _layout(op)[0]
    extreme = _with_kept_dims(op, op.outputs[0], kept)
    indicators = unary_math_ops.cast(comparison_ops.equal(extreme, x), grad.dtype)
    count = reduce_sum(indicators, axes, keepdims=True)
    return [math_ops.realdiv(indicators, count) * _with_kept_dims(op, grad, kept), None]


@EUCLIDEAN_NORM.set_gradient
def _euclidean_norm_grad(op, grad):
    """x / norm, times the output gradient (TF's rule: nan where the norm is 0)."""
    kept = _layout(op)[0]
    norm, grad = _with_kept_dims(op, op.outputs[0], kept), _with_kept_dims(op, grad, kept)
    return [math_ops.truediv(op.inputs[0], norm / grad), None]


MAX.set_gradient(_min_max_grad)
MIN.set_gradient(_min_max_grad)


@PROD.set_gradient
def _prod_grad(op, grad):
    """Products of all other entries of each reduced group, via exclusive cumprods from both ends (so zeros
    in the input are exact): the reduced axes are moved to the front and flattened into one. Both sizes of
    the flattened matrix are given, so a zero-size input reshapes too (its gradient is empty)."""
    x = op.inputs[0]
    spread = _spread(op, grad, _layout(op))
    perm, inverse, reduced_size, other_size = _reduced_axes_first(op)
    permuted = transpose_ops.transpose(x, perm)
    sizes = [reduced_size, other_size]
    flat = shape_ops.reshape(
        permuted, sizes if all(isinstance(n, int) for n in sizes) else concat_split_ops.stack(sizes))
    left = cumulative_ops.cumprod(flat, axis=0, exclusive=True)
    right = cumulative_ops.cumprod(flat, axis=0, exclusive=True, reverse=True)
    others = shape_ops.reshape(unary_math_ops.conj(left) * unary_math_ops.conj(right), shape_ops.shape(permuted))
    return [spread * transpose_ops.transpose(others, inverse), None]


def _reduced_axes_first(op):
    """(perm, inverse perm, number of reduced entries, number of other entries) moving the reduced axes to
    the front; Python values where the static shape decides them, tensors otherwise."""
    x = op.inputs[0]
    static = _static_axes(op)
    if static is not None and x.shape.ndims is not None:
        other = [i for i in range(x.shape.ndims) if i not in static]
        perm = static + other
        return perm, [int(i) for i in np.argsort(perm)], _size_of(x, static), _size_of(x, other)
    input_shape, rank, reduced = _run_time_axes(op)
    hit = segment_ops.unsorted_segment_sum(fill_ops.ones_like(reduced), reduced, rank)
    other = shape_ops.reshape(
        unary_math_ops.cast(comparison_ops.where(comparison_ops.equal(hit, 0)), dtypes.int32), [-1])
    reduced = shape_ops.reshape(
        unary_math_ops.cast(comparison_ops.where(comparison_ops.greater(hit, 0)), dtypes.int32), [-1])
    perm = concat_split_ops.concat([reduced, other], 0)
    inverse = segment_ops.unsorted_segment_sum(range_ops.range(rank), perm, rank)
    return (perm, inverse, reduce_prod(gather_ops.gather(input_shape, reduced)),
            reduce_prod(gather_ops.gather(input_shape, other)))


def _size_of(x, axes):
    """The number of entries of ``x`` along ``axes`` (static indices): an int if known, else a tensor."""
    dims = [x.shape.as_list()[a] for a in axes]
    if None not in dims:
        return int(np.prod(dims, dtype=np.int64))
    return reduce_prod(gather_ops.gather(shape_ops.shape(x), axes))


# ---- wrappers -------------------------------------------------------------------------------------------------------
def _resolve(new, old, new_name, old_name, default):
    """TF1's deprecated-argument rule: either spelling, not both."""
    if new is not None and old is not None:
        raise ValueError(f"cannot specify both '{new_name}' and '{old_name}' (the old name of the same argument)")
    return new if new is not None else old if old is not None else default


def _all_axes(x):
    if x.shape.ndims is not None:
        return list(range(x.shape.ndims))
    return range_ops.range(0, shape_ops.rank(x))


def _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    axis = _resolve(axis, reduction_indices, "axis", "reduction_indices", None)
    keepdims = bool(_resolve(keepdims, keep_dims, "keepdims", "keep_dims", False))
    x = convert_to_tensor(input_tensor, name="input_tensor")
    if axis is None:
        axis = _all_axes(x)
    return apply_op(op_type, [x, axis], {"keep_dims": keepdims}, name=name or op_type)


def _reducer(op_type, py_name, doc):
    def reducer(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        return _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)

    reducer.__name__ = reducer.__qualname__ = py_name
    reducer.__doc__ = (f"{doc} over ``axis`` (None: all axes; negative counts from the end; a tensor is "
                       f"allowed). ``keepdims`` keeps reduced axes as 1. TF1's ``reduction_indices`` and "
                       f"``keep_dims`` are accepted.")
    return reducer


reduce_sum = _reducer("Sum", "reduce_sum", "The sum")
reduce_mean = _reducer("Mean", "reduce_mean", "The mean")
reduce_max = _reducer("Max", "reduce_max", "The maximum")
reduce_min = _reducer("Min", "reduce_min", "The minimum")
reduce_prod = _reducer("Prod", "reduce_prod", "The product")
reduce_all = _reducer("All", "reduce_all", "Logical AND")
reduce_any = _reducer("Any", "reduce_any", "Logical OR")
reduce_euclidean_norm = _reducer("EuclideanNorm", "reduce_euclidean_norm", "The Euclidean norm")


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    """log(sum(exp(x))) over ``axis``, computed stably: the (finite) maximum is subtracted first."""
    axis = _resolve(axis, reduction_indices, "axis", "reduction_indices", None)
    keepdims = bool(_resolve(keepdims, keep_dims, "keepdims", "keep_dims", False))
    x = convert_to_tensor(input_tensor, name="input_tensor")
    raw_max = reduce_max(x, axis, keepdims=True)
    shift = array_ops.stop_gradient(comparison_ops.where_v2(unary_math_ops.is_finite(raw_max), raw_max, 0))
    result = unary_math_ops.log(reduce_sum(unary_math_ops.exp(x - shift), axis, keepdims=keepdims))
    if not keepdims:
        shape = result.shape.as_list() if result.shape.is_fully_defined() else shape_ops.shape(result)
        shift = shape_ops.reshape(shift, shape)
    return math_ops.add(result, shift, name=name or "ReduceLogSumExp")


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The mean squared deviation from the mean over ``axis`` (TF 1.15's tf.math.reduce_variance)."""
    with graph_mod.name_scope(name or "reduce_variance"):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        deviations = x - reduce_mean(x, axis, keepdims=True)
        squared = unary_math_ops.square(unary_math_ops.abs(deviations) if x.dtype.is_complex else deviations)
        return reduce_mean(squared, axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation over ``axis``: sqrt(reduce_variance), so its gradient is NaN where it is 0."""
    with graph_mod.name_scope(name or "reduce_std"):
        return unary_math_ops.sqrt(reduce_variance(input_tensor, axis, keepdims))


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=dtypes.int64, name=None, reduction_indices=None,
                  keep_dims=None):
    """The number of nonzero (True, non-empty) entries over ``axis``, as ``dtype``."""
    x = convert_to_tensor(input_tensor, name="input_tensor")
    zero = False if x.dtype.is_bool else b"" if x.dtype == dtypes.string else 0
    nonzero = unary_math_ops.cast(comparison_ops.not_equal(x, zero), dtypes.int64)
    count = reduce_sum(nonzero, axis, keepdims, reduction_indices=reduction_indices, keep_dims=keep_dims)
    return unary_math_ops.cast(count, dtype, name=name)


# ---- ArgMax / ArgMin ------------------------------------------------------------------------------------------------
def _arg_reduction(op_type, doc):
    return DEFS.define(op_type, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                       attrs=["T: real", "Tidx: {int32, int64} = int32", "output_type: {int32, int64} = int64"],
                       grad=NOT_DIFFERENTIABLE, doc=doc)


ARG_MAX = _arg_reduction("ArgMax", "The index of the largest entry along an axis (the first, on ties).")
ARG_MIN = _arg_reduction("ArgMin", "The index of the smallest entry along an axis (the first, on ties).")


def _arg_reduction_shape(op):
    x = op.inputs[0]
    if x.shape.ndims is None:
        return tensor_shape.TensorShape(None)
    axis = constant_value(op.inputs[1])
    rank = x.shape.ndims
    if axis is None:
        return tensor_shape.unknown_shape(max(rank - 1, 0))
    axis = int(np.asarray(axis).reshape(-1)[0])
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank} (expected [-{rank}, {rank}))")
    dims = x.shape.as_list()
    del dims[axis % rank]
    return tensor_shape.TensorShape(dims)


ARG_MAX.set_shape_fn(_arg_reduction_shape)
ARG_MIN.set_shape_fn(_arg_reduction_shape)


def _arg(op_type, input, axis, name, dimension, output_type):  # noqa: A002 - TF's argument name
    axis = _resolve(axis, dimension, "axis", "dimension", 0)
    return apply_op(op_type, [input, axis], {"output_type": dtypes.as_dtype(output_type)}, name=name or op_type)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    """The index of the largest value along ``axis`` (default 0; TF1's ``dimension`` is accepted)."""
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    """The index of the smallest value along ``axis`` (default 0; TF1's ``dimension`` is accepted)."""
    return _arg("ArgMin", input, axis, name, dimension, output_type)


def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF 1.x's deprecated name for ArgMax, with the raw op's signature: ``dimension`` is required."""
    return _arg("ArgMax", input, dimension, name, None, output_type)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002
    """TF 1.x's deprecated name for ArgMin, with the raw op's signature: ``dimension`` is required."""
    return _arg("ArgMin", input, dimension, name, None, output_type)
