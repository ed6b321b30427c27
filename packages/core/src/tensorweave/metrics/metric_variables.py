"""What every ``tf.metrics`` function shares: its local count variables, the shapes it accepts, its collections."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import comparison_ops, cond as cond_ops, fill_ops, shape_ops, unary_math_ops, variables
from tensorweave.ops.confusion_matrix_ops import remove_squeezable_dimensions

__all__ = ["metric_variable"]


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zero-initialized, untrainable variable in ``LOCAL_VARIABLES`` and ``METRIC_VARIABLES``, named in the
    current name scope (as TF's, so ``tf.local_variables_initializer()`` resets every metric)."""
    return variables.Variable(lambda: fill_ops.zeros(shape, dtype), trainable=False,
                              collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                              validate_shape=validate_shape, name=name)


def check_collections(metrics_collections, updates_collections):
    for label, value in (("metrics_collections", metrics_collections), ("updates_collections", updates_collections)):
        if value is not None and not isinstance(value, (list, tuple)):
            raise ValueError(f"{label} must be a list or tuple of collection names, got {value!r}")


def add_to_collections(collections, value):
    if collections:
        graph_mod.add_to_collections(collections, value)


def squeeze_or_expand(predictions, labels, weights):
    """(predictions, labels, weights) with labels' and weights' extra or missing last dimension of size 1
    removed or added to fit ``predictions`` (TF's metrics_impl._remove_squeezable_dimensions)."""
    predictions = convert_to_tensor(predictions, name="predictions")
    if labels is not None:
        labels, predictions = remove_squeezable_dimensions(labels, predictions)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"predictions of shape {predictions.shape} do not match labels of shape {labels.shape}")
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights, name="weights")
    w_rank, p_rank = weights.shape.ndims, predictions.shape.ndims
    if w_rank == 0:
        return predictions, labels, weights
    if w_rank is not None and p_rank is not None:
        if w_rank - p_rank == 1:
            weights = shape_ops.squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = shape_ops.expand_dims(weights, -1)
        return predictions, labels, weights
    rank_diff = shape_ops.rank(weights) - shape_ops.rank(predictions)
    can_squeeze = w_rank is None or weights.shape[-1].is_compatible_with(1)

    def adjust():
        expand = lambda: cond_ops.cond(comparison_ops.equal(rank_diff, -1),  # noqa: E731
                                       lambda: shape_ops.expand_dims(weights, -1), lambda: weights)
        squeeze = (lambda: shape_ops.squeeze(weights, [-1])) if can_squeeze else (lambda: weights)
        return cond_ops.cond(comparison_ops.equal(rank_diff, 1), squeeze, expand)
    weights = cond_ops.cond(comparison_ops.equal(shape_ops.rank(weights), 0), lambda: weights, adjust)
    return predictions, labels, weights


def as_float(x, dtype=dtypes.float32):
    return unary_math_ops.cast(x, dtype)
