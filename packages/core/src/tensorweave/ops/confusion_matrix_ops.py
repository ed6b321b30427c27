"""``tf.confusion_matrix``: counts of (label, prediction) pairs as a [num_classes, num_classes] matrix, and the
squeezing of a last dimension of size 1 that lets [batch, 1] predictions meet [batch] labels (TF's
confusion_matrix module, which tf.metrics and tf.losses use)."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    check_ops, comparison_ops, concat_split_ops, cond as cond_ops, fill_ops, gather_ops, reduction_ops, shape_ops,
    unary_math_ops,
)

__all__ = ["confusion_matrix"]


def _squeeze_last_if(tensor, condition):
    return cond_ops.cond(condition, lambda: shape_ops.squeeze(tensor, [-1]), lambda: tensor)


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0):
    """Drops a last dimension of size 1 from whichever of ``labels``/``predictions`` has one dimension too many
    (TF's confusion_matrix.remove_squeezable_dimensions; ranks known only at run time are decided then)."""
    labels, predictions = convert_to_tensor(labels, name="labels"), convert_to_tensor(predictions, name="predictions")
    l_shape, p_shape = labels.shape, predictions.shape
    if l_shape.ndims is not None and p_shape.ndims is not None:
        diff = p_shape.ndims - l_shape.ndims
        if diff == expected_rank_diff + 1 and p_shape[-1].is_compatible_with(1):
            predictions = shape_ops.squeeze(predictions, [-1])
        elif diff == expected_rank_diff - 1 and l_shape[-1].is_compatible_with(1):
            labels = shape_ops.squeeze(labels, [-1])
        return labels, predictions
    diff = shape_ops.rank(predictions) - shape_ops.rank(labels)
    if p_shape.ndims is None or p_shape[-1].is_compatible_with(1):
        predictions = _squeeze_last_if(predictions, comparison_ops.equal(expected_rank_diff + 1, diff))
    if l_shape.ndims is None or l_shape[-1].is_compatible_with(1):
        labels = _squeeze_last_if(labels, comparison_ops.equal(expected_rank_diff - 1, diff))
    return labels, predictions




def confusion_matrix(labels, predictions, num_classes=None, dtype=dtypes.int32, name=None, weights=None):
    """matrix[i, j] = the (weighted) number of entries with label i and prediction j. Without ``num_classes``
    it is one more than the largest label or prediction; ids must be in [0, num_classes)."""
    with graph_mod.name_scope(name, "confusion_matrix", (predictions, labels, num_classes, weights)):
        labels, predictions = remove_squeezable_dimensions(
            unary_math_ops.cast(labels, dtypes.int64), unary_math_ops.cast(predictions, dtypes.int64))
        checks = [check_ops.assert_non_negative(labels, message="`labels` contains negative values"),
                  check_ops.assert_non_negative(predictions, message="`predictions` contains negative values")]
        if num_classes is None:
            num_classes = unary_math_ops.cast(reduction_ops.reduce_max(concat_split_ops.concat(
                [shape_ops.reshape(labels, [-1]), shape_ops.reshape(predictions, [-1])], 0)) + 1, dtypes.int64)
        else:
            num_classes = unary_math_ops.cast(num_classes, dtypes.int64)
            checks += [check_ops.assert_less(labels, num_classes, message="`labels` out of bound"),
                       check_ops.assert_less(predictions, num_classes, message="`predictions` out of bound")]
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            if not predictions.shape.is_compatible_with(weights.shape):
                raise ValueError(f"weights of shape {weights.shape} do not match predictions of shape "
                                 f"{predictions.shape}")
            weights = unary_math_ops.cast(weights, dtype)
        with graph_mod.control_dependencies([c for c in checks if c is not None]):
            pairs = concat_split_ops.stack([shape_ops.reshape(labels, [-1]), shape_ops.reshape(predictions, [-1])], 1)
        values = fill_ops.ones_like(shape_ops.reshape(predictions, [-1]), dtype=dtype) if weights is None \
            else shape_ops.reshape(weights, [-1])
        shape = concat_split_ops.stack([num_classes, num_classes])
        return gather_ops.scatter_nd(pairs, values, shape)
