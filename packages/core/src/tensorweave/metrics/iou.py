"""``tf.metrics.mean_iou``: the mean intersection-over-union of classes, from a running confusion matrix."""

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.metric_variables import add_to_collections, as_float, check_collections, metric_variable
from tensorweave.ops import (
    comparison_ops, confusion_matrix_ops, fill_ops, gather_ops, math_ops, range_ops, reduction_ops, shape_ops,
    state_ops, unary_math_ops, variable_scope,
)

__all__ = ["mean_iou"]


def _flat(tensor):
    return shape_ops.reshape(tensor, [-1]) if tensor.shape.ndims is None or tensor.shape.ndims > 1 else tensor


def streaming_confusion_matrix(labels, predictions, num_classes, weights=None):
    """(``total_confusion_matrix`` variable [num_classes, num_classes] float64, the op adding this batch's)."""
    total = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
    predictions = _flat(unary_math_ops.cast(predictions, dtypes.int64))
    labels = _flat(unary_math_ops.cast(labels, dtypes.int64))
    if weights is not None:
        weights = convert_to_tensor(weights, name="weights")
        if weights.shape.ndims is not None and weights.shape.ndims > 1:
            weights = shape_ops.reshape(weights, [-1])
    current = confusion_matrix_ops.confusion_matrix(labels, predictions, num_classes, weights=weights,
                                                    dtype=dtypes.float64)
    return total, state_ops.assign_add(total, current)


def _mean_iou(matrix, num_classes):
    row_sums = as_float(reduction_ops.reduce_sum(matrix, 0))
    column_sums = as_float(reduction_ops.reduce_sum(matrix, 1))
    diagonal = as_float(gather_ops.gather(shape_ops.reshape(matrix, [-1]),
                                          range_ops.range(0, num_classes * num_classes, num_classes + 1)))
    denominator = row_sums + column_sums - diagonal
    valid = reduction_ops.reduce_sum(as_float(comparison_ops.not_equal(denominator, 0)))
    denominator = comparison_ops.where(comparison_ops.greater(denominator, 0), denominator,
                                       fill_ops.ones_like(denominator))
    iou = math_ops.div(diagonal, denominator)
    return comparison_ops.where(comparison_ops.greater(valid, 0),
                                reduction_ops.reduce_sum(iou, name="mean_iou") / valid, 0.0)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None, updates_collections=None,
             name=None):
    """Mean over the classes that occur of TP / (TP + FP + FN); the update op returns the confusion matrix
    (``mean_iou/total_confusion_matrix``, float64), as TF's."""
    check_collections(metrics_collections, updates_collections)
    with variable_scope.variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions = convert_to_tensor(predictions, name="predictions")
        labels = convert_to_tensor(labels, name="labels")
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"predictions of shape {predictions.shape} do not match labels of shape {labels.shape}")
        total, update = streaming_confusion_matrix(labels, predictions, num_classes, weights)
        value = _mean_iou(total, num_classes)
        add_to_collections(metrics_collections, value)
        add_to_collections(updates_collections, update)
        return value, update
