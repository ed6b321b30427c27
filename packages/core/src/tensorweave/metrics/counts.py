"""Counts of true/false positives/negatives (at 0.5 for booleans, or at each of several thresholds), and the
precision and recall built on them, as TF 1.15's ``tf.metrics``."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.metric_variables import (
    add_to_collections, as_float, check_collections, metric_variable, squeeze_or_expand,
)
from tensorweave.ops import (
    array_ops, check_ops, comparison_ops, math_ops, pad_tile_ops, reduction_ops, shape_ops, state_ops, unary_math_ops,
    variable_scope, weights_broadcast_ops,
)

__all__ = ["false_negatives", "false_negatives_at_thresholds", "false_positives", "false_positives_at_thresholds",
           "precision", "precision_at_thresholds", "recall", "recall_at_thresholds", "true_negatives",
           "true_negatives_at_thresholds", "true_positives", "true_positives_at_thresholds"]

# condition -> (scope and variable name, whether the label is positive, whether the prediction is)
_CONDITIONS = {"tp": ("true_positives", True, True), "fn": ("false_negatives", True, False),
               "tn": ("true_negatives", False, False), "fp": ("false_positives", False, True)}


def _count_condition(values, weights, metrics_collections, updates_collections):
    """Sums the (weighted) true entries of the boolean ``values`` into ``count``."""
    count = metric_variable([], dtypes.float32, name="count")
    values = as_float(values)
    if weights is not None:
        weights = as_float(convert_to_tensor(weights, name="weights"))
        if weights.shape.ndims not in (None, 0) and values.shape.ndims is not None \
                and weights.shape.ndims != values.shape.ndims:
            raise ValueError(f"weights of shape {weights.shape} for values of shape {values.shape}: weights must be "
                             f"a scalar or have the values' rank")
        values = math_ops.multiply(values, weights)
    value = array_ops.identity(count)
    update = state_ops.assign_add(count, reduction_ops.reduce_sum(values))
    add_to_collections(metrics_collections, value)
    add_to_collections(updates_collections, update)
    return value, update


def _condition_metric(condition):
    scope, label_positive, prediction_positive = _CONDITIONS[condition]

    def metric(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
        check_collections(metrics_collections, updates_collections)
        with variable_scope.variable_scope(name, scope, (predictions, labels, weights)):
            predictions, labels, weights = squeeze_or_expand(
                unary_math_ops.cast(predictions, dtypes.bool), unary_math_ops.cast(labels, dtypes.bool), weights)
            matches = comparison_ops.logical_and(comparison_ops.equal(labels, label_positive),
                                                 comparison_ops.equal(predictions, prediction_positive))
            return _count_condition(matches, weights, metrics_collections, updates_collections)
    metric.__name__ = scope
    metric.__doc__ = (f"The (weighted) number of {scope.replace('_', ' ')} among boolean ``predictions`` and "
                      f"``labels``: (value, update_op) over ``{scope}/count``.")
    return metric


true_positives = _condition_metric("tp")
false_negatives = _condition_metric("fn")
true_negatives = _condition_metric("tn")
false_positives = _condition_metric("fp")


def _ratio_metric(kind, other):
    """precision (tp / (tp + fp)) or recall (tp / (tp + fn)), 0 while nothing was counted."""
    other_fn = {"fp": false_positives, "fn": false_negatives}[other]

    def metric(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
        check_collections(metrics_collections, updates_collections)
        with variable_scope.variable_scope(name, kind, (predictions, labels, weights)):
            predictions, labels, weights = squeeze_or_expand(
                unary_math_ops.cast(predictions, dtypes.bool), unary_math_ops.cast(labels, dtypes.bool), weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            rest, rest_update = other_fn(labels, predictions, weights)

            def ratio(tp, rest, name):
                return comparison_ops.where(comparison_ops.greater(tp + rest, 0), math_ops.div(tp, tp + rest), 0.0,
                                            name=name)
            value, update = ratio(tp, rest, "value"), ratio(tp_update, rest_update, "update_op")
            add_to_collections(metrics_collections, value)
            add_to_collections(updates_collections, update)
            return value, update
    metric.__name__ = kind
    metric.__doc__ = f"The running {kind} of boolean ``predictions`` (variables ``{kind}/true_positives/count``, ...)."
    return metric


precision = _ratio_metric("precision", "fp")
recall = _ratio_metric("recall", "fn")


def confusion_at_thresholds(labels, predictions, thresholds, weights=None, includes=("tp", "fn", "tn", "fp")):
    """({condition: variable}, {condition: update}) counting, per threshold, the predictions above it; each count
    is a [len(thresholds)] variable named after the condition (``true_positives``, ...)."""
    predictions = convert_to_tensor(predictions, name="predictions")
    in_range = [check_ops.assert_greater_equal(predictions, unary_math_ops.cast(0.0, predictions.dtype),
                                               message="predictions must be in [0, 1]"),
                check_ops.assert_less_equal(predictions, unary_math_ops.cast(1.0, predictions.dtype),
                                            message="predictions must be in [0, 1]")]
    with graph_mod.control_dependencies([c for c in in_range if c is not None]):
        predictions, labels, weights = squeeze_or_expand(
            as_float(predictions), unary_math_ops.cast(labels, dtypes.bool), weights)
    count = len(thresholds)
    predictions_row = shape_ops.reshape(predictions, [1, -1])
    labels_row = shape_ops.reshape(labels, [1, -1])
    thresholds_column = shape_ops.reshape(convert_to_tensor(list(map(float, thresholds)), dtypes.float32), [-1, 1])
    pred_is_pos = comparison_ops.greater(pad_tile_ops.tile(predictions_row, [count, 1]), thresholds_column)
    label_is_pos = pad_tile_ops.tile(labels_row, [count, 1])
    weights_tiled = None
    if weights is not None:
        weights = weights_broadcast_ops.broadcast_weights(as_float(weights), predictions)
        weights_tiled = pad_tile_ops.tile(shape_ops.reshape(weights, [1, -1]), [count, 1])
    values, updates = {}, {}
    for condition in ("tp", "fn", "tn", "fp"):
        if condition not in includes:
            continue
        name, label_positive, prediction_positive = _CONDITIONS[condition]
        variable = metric_variable([count], dtypes.float32, name=name)
        matches = as_float(comparison_ops.logical_and(
            label_is_pos if label_positive else comparison_ops.logical_not(label_is_pos),
            pred_is_pos if prediction_positive else comparison_ops.logical_not(pred_is_pos)))
        if weights_tiled is not None:
            matches = matches * weights_tiled
        updates[condition] = state_ops.assign_add(variable, reduction_ops.reduce_sum(matches, 1))
        values[condition] = variable
    return values, updates


def _thresholds_metric(condition):
    scope = _CONDITIONS[condition][0]

    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None, updates_collections=None,
               name=None):
        check_collections(metrics_collections, updates_collections)
        with variable_scope.variable_scope(name, scope, (predictions, labels, weights)):
            values, updates = confusion_at_thresholds(labels, predictions, thresholds, weights, (condition,))
            value = array_ops.identity(values[condition])
            add_to_collections(metrics_collections, value)
            add_to_collections(updates_collections, updates[condition])
            return value, updates[condition]
    metric.__name__ = f"{scope}_at_thresholds"
    metric.__doc__ = f"The (weighted) {scope.replace('_', ' ')} of ``predictions > t`` for each threshold ``t``."
    return metric


true_positives_at_thresholds = _thresholds_metric("tp")
false_negatives_at_thresholds = _thresholds_metric("fn")
true_negatives_at_thresholds = _thresholds_metric("tn")
false_positives_at_thresholds = _thresholds_metric("fp")


def _ratio_at_thresholds(kind, other):
    def metric(labels, predictions, thresholds, weights=None, metrics_collections=None, updates_collections=None,
               name=None):
        check_collections(metrics_collections, updates_collections)
        with variable_scope.variable_scope(name, f"{kind}_at_thresholds", (predictions, labels, weights)):
            values, updates = confusion_at_thresholds(labels, predictions, thresholds, weights, ("tp", other))

            def ratio(tp, rest, name):
                return math_ops.div(tp, 1e-7 + tp + rest, name=f"{kind}_{name}")
            value = ratio(values["tp"], values[other], "value")
            update = ratio(updates["tp"], updates[other], "update_op")
            add_to_collections(metrics_collections, value)
            add_to_collections(updates_collections, update)
            return value, update
    metric.__name__ = f"{kind}_at_thresholds"
    metric.__doc__ = f"The {kind} of ``predictions > t`` for each threshold ``t`` (tp / (1e-7 + tp + {other}))."
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision", "fp")
recall_at_thresholds = _ratio_at_thresholds("recall", "fn")
