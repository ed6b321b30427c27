"""Which weights may scale a tensor of losses (TF's weights_broadcast_ops): a scalar, or a tensor of the
losses' rank whose every dimension is 1 or the losses' own. Weights never gain or lose dimensions, so a
[batch] weight cannot silently spread over a [batch, classes] loss along the wrong axis."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    comparison_ops, concat_split_ops, fill_ops, logging_ops, reduction_ops, shape_ops, slicing_ops,
)

__all__ = []

_RULE = ("weights must be a scalar or have the losses' rank with each dimension 1 or equal to the losses' (TF's "
         "rule: weights gain or lose no dimensions)")


def assert_broadcastable(weights, values):
    """None when the static shapes show that ``weights`` broadcast to ``values``; a ValueError when they show
    they do not; otherwise an Assert op that checks the shapes when it runs."""
    weights, values = convert_to_tensor(weights, name="weights"), convert_to_tensor(values, name="values")
    w, v = weights.shape, values.shape
    if w.ndims == 0:
        return None
    if w.ndims is not None and v.ndims is not None:
        if w.ndims != v.ndims:
            raise ValueError(f"weights of shape {w} cannot be broadcast to losses of shape {v}: {_RULE}. "
                             f"Reshape them (e.g. tf.squeeze(weights, -1) or tf.expand_dims(weights, -1))")
        undecided = False
        for axis, (a, b) in enumerate(zip(w.as_list(), v.as_list())):
            if a is None or (a != 1 and b is None):
                undecided = True
            elif a not in (1, b):
                raise ValueError(f"weights of shape {w} cannot be broadcast to losses of shape {v}: dimension "
                                 f"{axis} is {a}, but must be 1 or {b}; {_RULE}")
        if not undecided:
            return None
    weights_shape, values_shape = shape_ops.shape(weights), shape_ops.shape(values)
    weights_rank, values_rank = shape_ops.size(weights_shape), shape_ops.size(values_shape)
    padded = slicing_ops.slice(concat_split_ops.concat([weights_shape, fill_ops.ones_like(values_shape)], 0), [0],
                             shape_ops.reshape(values_rank, [1]))
    dims_fit = reduction_ops.reduce_all(comparison_ops.logical_or(comparison_ops.equal(padded, 1),
                                                       comparison_ops.equal(padded, values_shape)))
    valid = comparison_ops.logical_or(comparison_ops.equal(weights_rank, 0),
                                comparison_ops.logical_and(comparison_ops.equal(weights_rank, values_rank), dims_fit))
    return logging_ops.Assert(valid, [f"weights cannot be broadcast to losses: {_RULE}. weights.shape=",
                                      weights_shape, "losses.shape=", values_shape], summarize=10,
                              name="assert_broadcastable")


def broadcast_weights(weights, values):
    """``weights`` broadcast to the shape of ``values``, after checking that TF's rule allows it."""
    weights, values = convert_to_tensor(weights, name="weights"), convert_to_tensor(values, name="values")
    if weights.shape.is_fully_defined() and weights.shape.is_compatible_with(values.shape) \
            and values.shape.is_fully_defined():
        return weights
    check = assert_broadcastable(weights, values)
    with graph_mod.control_dependencies([check] if check is not None else []):
        return weights * fill_ops.ones_like(values, dtype=weights.dtype)
