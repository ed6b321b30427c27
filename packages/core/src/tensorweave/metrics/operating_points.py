"""``sensitivity_at_specificity`` and ``specificity_at_sensitivity``: one rate read at the threshold where the
other is closest to the one asked for, over running confusion counts at evenly spaced thresholds (TF 1.15's
thresholds, including its last one, 1 - 1e-7, for specificity_at_sensitivity)."""

from tensorweave import dtypes
from tensorweave.metrics.counts import confusion_at_thresholds
from tensorweave.metrics.metric_variables import add_to_collections, check_collections
from tensorweave.ops import (
    comparison_ops, cumulative_ops, gather_ops, math_ops, reduction_ops, unary_math_ops, variable_scope,
)

__all__ = ["sensitivity_at_specificity", "specificity_at_sensitivity"]

_KEPSILON = 1e-7


def _inner_thresholds(num_thresholds):
    return [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]


def _sensitivity(tp, tn, fp, fn, specificity, name):
    specificities = math_ops.divide(tn, tn + fp + _KEPSILON)
    index = reduction_ops.argmin(unary_math_ops.abs(specificities - specificity), 0)
    tp_at, fn_at = gather_ops.gather(tp, index), gather_ops.gather(fn, index)
    return math_ops.divide(tp_at, tp_at + fn_at + _KEPSILON, name=name)


def _specificity(tp, tn, fp, fn, sensitivity, name):
    """The specificity at the last threshold whose sensitivity is closest to ``sensitivity`` (TF's choice)."""
    distances = unary_math_ops.abs(math_ops.divide(tp, tp + fn + _KEPSILON) - sensitivity)
    closest = unary_math_ops.cast(comparison_ops.equal(distances, reduction_ops.reduce_min(distances)),
                                  dtypes.int64)
    index = reduction_ops.argmax(cumulative_ops.cumsum(closest), 0)
    tn_at, fp_at = gather_ops.gather(tn, index), gather_ops.gather(fp, index)
    return math_ops.divide(tn_at, tn_at + fp_at + _KEPSILON, name=name)


def _operating_point(kind, rate, at, labels, predictions, target, weights, num_thresholds, metrics_collections,
                     updates_collections, name, last_threshold):
    check_collections(metrics_collections, updates_collections)
    if target < 0 or target > 1:
        raise ValueError(f"`{at}` must be in the range [0, 1]. Currently, `{at}` got {target}.")
    with variable_scope.variable_scope(name, f"{kind}_at_{at}", (predictions, labels, weights)):
        thresholds = [0.0 - _KEPSILON] + _inner_thresholds(num_thresholds) + [last_threshold]
        values, updates = confusion_at_thresholds(labels, predictions, thresholds, weights)
        value = rate(values["tp"], values["tn"], values["fp"], values["fn"], target, "value")
        update = rate(updates["tp"], updates["tn"], updates["fp"], updates["fn"], target, "update_op")
        add_to_collections(metrics_collections, value)
        add_to_collections(updates_collections, update)
        return value, update


def sensitivity_at_specificity(labels, predictions, specificity, weights=None, num_thresholds=200,
                               metrics_collections=None, updates_collections=None, name=None):
    """The recall (sensitivity) at the threshold whose specificity is closest to ``specificity``."""
    return _operating_point("sensitivity", _sensitivity, "specificity", labels, predictions, specificity, weights,
                            num_thresholds, metrics_collections, updates_collections, name, 1.0 + _KEPSILON)


def specificity_at_sensitivity(labels, predictions, sensitivity, weights=None, num_thresholds=200,
                               metrics_collections=None, updates_collections=None, name=None):
    """The specificity at the threshold whose sensitivity is closest to ``sensitivity``."""
    return _operating_point("specificity", _specificity, "sensitivity", labels, predictions, sensitivity, weights,
                            num_thresholds, metrics_collections, updates_collections, name, 1.0 - _KEPSILON)
