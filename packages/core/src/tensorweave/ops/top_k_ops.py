"""top_k and in_top_k: the ranking ops TF1 evaluation code uses (TopKV2, InTopKV2)."""

import collections

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import concat_split_ops, range_ops, reduction_ops, segment_ops, shape_ops

DEFS = OpDefList()

__all__ = ["top_k", "in_top_k"]

TOP_K = DEFS.define("TopKV2", inputs=["input: T", "k: int32"], outputs=["values: T", "indices: int32"],
                    attrs=["T: {float16, float32, float64, int8, int16, int32, int64, uint8}", "sorted: bool = True"],
                    doc="The k largest entries of each last-axis row, largest first; ties keep the lower index first.")
IN_TOP_K = DEFS.define("InTopKV2", inputs=["predictions: float32", "targets: T", "k: T"], outputs=["precision: bool"],
                       attrs=["T: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                       doc="Whether each target's prediction is among the k largest of its row.")


@TOP_K.set_shape_fn
def _top_k_shape(op):
    shape = op.inputs[0].shape.with_rank_at_least(1)
    k = constant_value(op.inputs[1])
    if k is not None:
        k = int(k)
        if k < 0:
            raise ValueError(f"k must be non-negative, got {k}")
        last = shape[-1].value if shape.ndims else None
        if last is not None and last < k:
            raise ValueError(f"input must have at least k={k} columns, has {last}")
    if shape.ndims is None:
        return [shape, shape]
    out = tensor_shape.TensorShape(shape.as_list()[:-1] + [k])
    return [out, out]


@TOP_K.set_gradient
def _top_k_grad(op, grad_values, grad_indices):
    """Scatters each row's value gradients back to the positions ``indices`` picked."""
    x, indices = op.inputs[0], op.outputs[1]
    in_shape = shape_ops.shape(x)
    flat_indices = shape_ops.reshape(indices, concat_split_ops.stack([-1, shape_ops.shape(indices)[-1]]))
    rows = shape_ops.shape(flat_indices)[0]
    offsets = shape_ops.expand_dims(range_ops.range(rows) * in_shape[-1], -1)
    positions = shape_ops.reshape(flat_indices + offsets, [-1])
    scattered = segment_ops.unsorted_segment_sum(shape_ops.reshape(grad_values, [-1]), positions,
                                              reduction_ops.reduce_prod(in_shape))
    return [shape_ops.reshape(scattered, in_shape), None]


@IN_TOP_K.set_shape_fn
def _in_top_k_shape(op):
    predictions = op.inputs[0].shape.with_rank(2)
    targets = op.inputs[1].shape.with_rank(1)
    op.inputs[2].shape.with_rank(0)
    if not predictions[0].is_compatible_with(targets[0]):
        raise ValueError(f"predictions {predictions} and targets {targets} must have the same first dimension")
    return tensor_shape.TensorShape([predictions[0].merge_with(targets[0])])


TopKV2Output = collections.namedtuple("TopKV2", ["values", "indices"])


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TF's names
    """``TopKV2(values, indices)`` (a namedtuple, as TF's) of the ``k`` largest entries along the last axis."""
    return TopKV2Output(*apply_op("TopKV2", [input, k], {"sorted": bool(sorted)}, name=name or "TopKV2"))


def in_top_k(predictions, targets, k, name=None):
    """For each row, whether ``predictions[row, targets[row]]`` is among the row's ``k`` largest.

    Ties count in the target's favour (as TF); a target out of range or a non-finite prediction gives False.
    """
    targets = convert_to_tensor(targets, name="targets")
    if targets.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"in_top_k: targets must be int32 or int64, got {targets.dtype.name}")
    k = convert_to_tensor(k, dtype=targets.dtype, name="k") if not hasattr(k, "dtype") else k
    return apply_op("InTopKV2", [predictions, targets, k], name=name or "in_top_k")
