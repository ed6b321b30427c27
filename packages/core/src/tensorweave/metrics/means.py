"""Running means: ``mean``, ``mean_tensor``, ``accuracy``, ``percentage_below``, ``mean_per_class_accuracy`` and
the regression errors and distances, as TF 1.15 computes them (a total and a count in local variables)."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.metric_variables import (
    add_to_collections, as_float, check_collections, metric_variable, squeeze_or_expand,
)
from tensorweave.ops import (
    comparison_ops, fill_ops, math_ops, reduction_ops, shape_ops, state_ops, unary_math_ops,
    variable_scope, weights_broadcast_ops,
)
from tensorweave.ops.confusion_matrix_ops import remove_squeezable_dimensions

__all__ = ["accuracy", "mean", "mean_absolute_error", "mean_cosine_distance", "mean_per_class_accuracy",
           "mean_relative_error", "mean_squared_error", "mean_tensor", "percentage_below", "root_mean_squared_error"]


def _ratio(total, count, name):
    return math_ops.div_no_nan(total, math_ops.maximum(count, 0), name=name)


def _finish(value, update, metrics_collections, updates_collections):
    add_to_collections(metrics_collections, value)
    add_to_collections(updates_collections, update)
    return value, update


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The weighted mean of every ``values`` seen: (value, update_op) over ``<scope>/total`` and ``/count``."""
    check_collections(metrics_collections, updates_collections)
    with variable_scope.variable_scope(name, "mean", (values, weights)):
        values = as_float(convert_to_tensor(values, name="values"))
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = as_float(shape_ops.size(values))
        else:
            values, _, weights = squeeze_or_expand(values, None, weights)
            weights = weights_broadcast_ops.broadcast_weights(as_float(weights), values)
            values = math_ops.multiply(values, weights)
            num_values = reduction_ops.reduce_sum(weights)
        update_total = state_ops.assign_add(total, reduction_ops.reduce_sum(values))
        with graph_mod.control_dependencies([values]):
            update_count = state_ops.assign_add(count, num_values)
        value = _ratio(total, count, "value")
        update = _ratio(update_total, update_count, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The element-wise weighted mean of every ``values`` seen (``<scope>/total_tensor``, ``/count_tensor``)."""
    check_collections(metrics_collections, updates_collections)
    with variable_scope.variable_scope(name, "mean", (values, weights)):
        values = as_float(convert_to_tensor(values, name="values"))
        total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        num_values = fill_ops.ones_like(values)
        if weights is not None:
            values, _, weights = squeeze_or_expand(values, None, weights)
            weights = weights_broadcast_ops.broadcast_weights(as_float(weights), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        update_total = state_ops.assign_add(total, values)
        with graph_mod.control_dependencies([values]):
            update_count = state_ops.assign_add(count, num_values)
        value = _ratio(total, count, "value")
        update = _ratio(update_total, update_count, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """How often ``predictions`` equal ``labels`` (the mean of the matches, under ``accuracy/``)."""
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = unary_math_ops.cast(predictions, labels.dtype)
    is_correct = as_float(comparison_ops.equal(predictions, labels))
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def percentage_below(values, threshold, weights=None, metrics_collections=None, updates_collections=None,
                     name=None):
    """The fraction of ``values`` below ``threshold`` (under ``percentage_below_threshold/``)."""
    is_below = as_float(comparison_ops.less(values, threshold))
    return mean(is_below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold")


def _errors(labels, predictions, weights, error):
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    return error(labels, predictions), weights


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    squared, weights = _errors(labels, predictions, weights, math_ops.squared_difference)
    return mean(squared, weights, metrics_collections, updates_collections, name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    absolute, weights = _errors(labels, predictions, weights, lambda l, p: unary_math_ops.abs(p - l))
    return mean(absolute, weights, metrics_collections, updates_collections, name or "mean_absolute_error")


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                            name=None):
    """sqrt of the running mean squared error (its variables under ``root_mean_squared_error/``)."""
    check_collections(metrics_collections, updates_collections)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None, name or "root_mean_squared_error")
    return _finish(unary_math_ops.sqrt(mse), unary_math_ops.sqrt(update_mse), metrics_collections,
                   updates_collections)


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The mean over classes of each class's accuracy; the update op returns the per-class accuracies."""
    check_collections(metrics_collections, updates_collections)
    with variable_scope.variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = unary_math_ops.cast(labels, dtypes.int64)
        predictions = convert_to_tensor(predictions, name="predictions")
        if labels.shape.ndims != 1:
            labels = shape_ops.reshape(labels, [-1])
        if predictions.shape.ndims != 1:
            predictions = shape_ops.reshape(predictions, [-1])
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(f"predictions of shape {predictions.shape} do not match labels of shape {labels.shape}")
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = fill_ops.ones_like(labels, dtype=dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = unary_math_ops.cast(predictions, labels.dtype)
        is_correct = as_float(comparison_ops.equal(predictions, labels))
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            if weights.shape.ndims != 1 and weights.shape.ndims != 0:
                weights = shape_ops.reshape(weights, [-1])
            weights = as_float(weights)
            is_correct = is_correct * weights
            ones = ones * weights
        update_total = state_ops.scatter_add(total, labels, ones)
        update_count = state_ops.scatter_add(count, labels, is_correct)
        value = reduction_ops.reduce_mean(_ratio(count, total, None), name="mean_accuracy")
        update = _ratio(update_count, update_total, "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def mean_relative_error(labels, predictions, normalizer, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The mean of |labels - predictions| / normalizer (0 where the normalizer is 0)."""
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    normalizer, predictions = remove_squeezable_dimensions(normalizer, predictions)
    if not predictions.shape.is_compatible_with(normalizer.shape):
        raise ValueError(f"predictions of shape {predictions.shape} do not match normalizer of shape "
                         f"{normalizer.shape}")
    relative = comparison_ops.where(comparison_ops.equal(normalizer, 0.0), fill_ops.zeros_like(labels),
                                    math_ops.divide(unary_math_ops.abs(labels - predictions), normalizer))
    return mean(relative, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None, updates_collections=None,
                         name=None):
    """1 - the mean of sum(labels * predictions) over ``dim`` (labels and predictions unit-normalized)."""
    check_collections(metrics_collections, updates_collections)
    predictions, labels, weights = squeeze_or_expand(predictions, labels, weights)
    radial = reduction_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    distance, update = mean(radial, weights, None, None, name or "mean_cosine_distance")
    return _finish(math_ops.subtract(1.0, distance), math_ops.subtract(1.0, update), metrics_collections,
                   updates_collections)
