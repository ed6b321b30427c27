"""contrib.layers' regularizers: functions of a weight tensor that return a scalar penalty (or None), and
``apply_regularization``, which sums them into ``GraphKeys.REGULARIZATION_LOSSES``."""

import numbers

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import loss_ops, math_ops, reduction_ops, unary_math_ops

__all__ = ["apply_regularization", "l1_l2_regularizer", "l1_regularizer", "l2_regularizer", "sum_regularizer"]


def _check_scale(scale, who):
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale} ({who})")
    if not isinstance(scale, numbers.Real):
        raise ValueError(f"scale must be a float, got {scale!r} ({who})")
    if scale < 0.0:
        raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale}")
    return float(scale)


def _regularizer(scale, scope, default_name, penalty):
    scale = _check_scale(scale, default_name)
    if scale == 0.0:
        return lambda _: None

    def regularize(weights):
        with graph_mod.name_scope(scope, default_name, [weights]) as name:
            weights = convert_to_tensor(weights)
            return math_ops.multiply(convert_to_tensor(scale, weights.dtype.base_dtype, name="scale"),
                                     penalty(weights), name=name)
    return regularize


def l1_regularizer(scale, scope=None):
    """``weights -> scale * sum(|weights|)``."""
    return _regularizer(scale, scope, "l1_regularizer",
                        lambda w: reduction_ops.reduce_sum(unary_math_ops.abs(w)))


def l2_regularizer(scale, scope=None):
    """``weights -> scale * sum(weights ** 2) / 2`` (TF's l2_loss)."""
    return _regularizer(scale, scope, "l2_regularizer", loss_ops.l2_loss)


def sum_regularizer(regularizer_list, scope=None):
    """The sum of the regularizers' penalties (those that return None are left out)."""
    regularizer_list = [r for r in regularizer_list if r]
    if not regularizer_list:
        return None

    def regularize(weights):
        with graph_mod.name_scope(scope, "sum_regularizer", [weights]) as name:
            penalties = [p for p in (r(weights) for r in regularizer_list) if p is not None]
            return math_ops.add_n(penalties, name=name)
    return regularize


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    if isinstance(scale_l1, numbers.Integral) or isinstance(scale_l2, numbers.Integral):
        raise ValueError("scale cannot be an integer")
    scope = scope or "l1_l2_regularizer"
    if scale_l1 == 0.0:
        return l2_regularizer(scale_l2, scope)
    if scale_l2 == 0.0:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def apply_regularization(regularizer, weights_list=None):
    """The sum of ``regularizer`` over ``weights_list`` (default: ``GraphKeys.WEIGHTS``), also added to
    ``GraphKeys.REGULARIZATION_LOSSES``."""
    if not weights_list:
        weights_list = graph_mod.get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize: pass weights_list, or add weights to GraphKeys.WEIGHTS")
    with graph_mod.name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else convert_to_tensor(0.0) for p in penalties]
        for p in penalties:
            if p.shape.ndims not in (0, None):
                raise ValueError(f"regularizer returned a tensor of shape {p.shape}, not a scalar")
        summed = math_ops.add_n(penalties, name=scope)
        graph_mod.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed
