"""``tf.metrics.auc``: the area under the ROC or precision-recall curve, summed over fixed thresholds from running
confusion counts, with TF 1.15's thresholds, epsilons and summation methods."""

from tensorweave.logging import warning
from tensorweave.metrics.counts import confusion_at_thresholds
from tensorweave.metrics.metric_variables import add_to_collections, check_collections
from tensorweave.ops import comparison_ops, fill_ops, math_ops, reduction_ops, unary_math_ops, variable_scope

__all__ = ["auc"]

_KEPSILON = 1e-7  # thresholds just outside [0, 1], so predictions of exactly 0 or 1 fall inside the curve
_EPSILON = 1e-6
_SUMMATIONS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def _interpolated_pr_auc(tp, fp, fn, n):
    """TF's careful interpolation of the PR curve (Davis & Goadrich 2006): precision varies as TP over P
    between thresholds, integrated in closed form."""
    dtp = tp[:n - 1] - tp[1:]
    p = tp + fp
    slope = math_ops.div_no_nan(dtp, math_ops.maximum(p[:n - 1] - p[1:], 0), name="prec_slope")
    intercept = tp[1:] - math_ops.multiply(slope, p[1:])
    safe_ratio = comparison_ops.where(
        comparison_ops.logical_and(p[:n - 1] > 0, p[1:] > 0),
        math_ops.div_no_nan(p[:n - 1], math_ops.maximum(p[1:], 0), name="recall_relative_ratio"),
        fill_ops.ones_like(p[1:]))
    increments = math_ops.div_no_nan(slope * (dtp + intercept * unary_math_ops.log(safe_ratio)),
                                     math_ops.maximum(tp[1:] + fn[1:], 0), name="pr_auc_increment")
    return reduction_ops.reduce_sum(increments, name="interpolate_pr_auc")


def _area(tp, fn, tn, fp, n, curve, summation_method, name):
    if curve == "PR" and summation_method == "careful_interpolation":
        return _interpolated_pr_auc(tp, fp, fn, n)
    recall = math_ops.div(tp + _EPSILON, tp + fn + _EPSILON)
    if curve == "ROC":
        x, y = math_ops.div(fp, fp + tn + _EPSILON), recall
    else:
        x, y = recall, math_ops.div(tp + _EPSILON, tp + fp + _EPSILON)
    width = x[:n - 1] - x[1:]
    if summation_method == "minoring":
        height = math_ops.minimum(y[:n - 1], y[1:])
    elif summation_method == "majoring":
        height = math_ops.maximum(y[:n - 1], y[1:])
    else:
        height = (y[:n - 1] + y[1:]) / 2.0
    return reduction_ops.reduce_sum(math_ops.multiply(width, height), name=name)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None, updates_collections=None,
        curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """Area under the ROC (``curve='ROC'``) or PR curve of ``predictions`` in [0, 1] against boolean ``labels``.

    The counts live in ``auc/true_positives``, ``/false_negatives``, ``/true_negatives``, ``/false_positives``
    (one entry per threshold: ``num_thresholds`` evenly spaced, or the given ``thresholds`` plus the two ends).
    """
    check_collections(metrics_collections, updates_collections)
    with variable_scope.variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if summation_method not in _SUMMATIONS:
            raise ValueError(f"Invalid summation_method: {summation_method!r}; use one of {', '.join(_SUMMATIONS)}")
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            num_thresholds = len(inner) + 2
        else:
            if num_thresholds < 2:
                raise ValueError(f"num_thresholds must be at least 2, got {num_thresholds}")
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        edges = [0.0 - _KEPSILON] + inner + [1.0 + _KEPSILON]
        if curve == "PR" and summation_method == "trapezoidal":
            warning('Trapezoidal rule is known to produce incorrect PR-AUCs; please switch to '
                    '"careful_interpolation" instead.')
        values, updates = confusion_at_thresholds(labels, predictions, edges, weights)
        value = _area(values["tp"], values["fn"], values["tn"], values["fp"], num_thresholds, curve,
                      summation_method, "value")
        update = _area(updates["tp"], updates["fn"], updates["tn"], updates["fp"], num_thresholds, curve,
                       summation_method, "update_op")
        add_to_collections(metrics_collections, value)
        add_to_collections(updates_collections, update)
        return value, update
