"""Softmax, log-softmax and the losses built on them: fused cross-entropies (as TF) and l2_loss.

The fused cross-entropy ops return the loss and its gradient together, so training computes the
softmax once; sigmoid cross-entropies are compositions written in their stable form.
"""

from tensorweave.framework import common_shapes, graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_ops, concat_split_ops, math_ops, nn_ops, reduction_ops, shape_ops, transpose_ops, unary_math_ops,
)
from tensorweave.ops import comparison_ops, fill_ops  # noqa: I001 - for log_poisson_loss, kept apart from the block above

DEFS = OpDefList()

__all__ = ["softmax", "log_softmax", "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
           "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
           "weighted_cross_entropy_with_logits", "l2_loss"]


def _rank_at_least_1(op):
    return op.inputs[0].shape.with_rank_at_least(1)


SOFTMAX = DEFS.define("Softmax", inputs=["logits: T"], outputs=["softmax: T"], attrs=["T: floating"],
                      shape_fn=_rank_at_least_1, doc="exp(x) / sum(exp(x)) along the last axis, computed stably.")
LOG_SOFTMAX = DEFS.define("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"], attrs=["T: floating"],
                          shape_fn=_rank_at_least_1, doc="x - log(sum(exp(x))) along the last axis, stably.")


@SOFTMAX.set_gradient
def _softmax_grad(op, grad):
    y = op.outputs[0]
    return [(grad - reduction_ops.reduce_sum(grad * y, -1, keepdims=True)) * y]


@LOG_SOFTMAX.set_gradient
def _log_softmax_grad(op, grad):
    return [grad - reduction_ops.reduce_sum(grad, -1, keepdims=True) * unary_math_ops.exp(op.outputs[0])]


def _along_last_axis(op_type, logits, axis, name):
    """TF's Softmax ops work on the last axis; another axis is swapped to the end and back."""
    logits = convert_to_tensor(logits, name="logits")
    rank = logits.shape.ndims
    axis = -1 if axis is None else int(axis)
    if axis == -1 or (rank is not None and axis == rank - 1):
        return apply_op(op_type, [logits], name=name or op_type)
    if rank is None:
        raise ValueError(f"{op_type} along axis {axis} needs logits of known rank; set_shape the input, "
                         f"or move the axis last yourself")
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for logits of rank {rank}")
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    with graph_mod.name_scope(name, op_type, [logits]):
        result = apply_op(op_type, [transpose_ops.transpose(logits, perm)], name=op_type)
        return transpose_ops.transpose(result, perm)


def softmax(logits, axis=None, name=None, dim=None):
    """Softmax along ``axis`` (TF1 also calls it ``dim``; default the last axis)."""
    return _along_last_axis("Softmax", logits, _axis(axis, dim), name)


def log_softmax(logits, axis=None, name=None, dim=None):
    return _along_last_axis("LogSoftmax", logits, _axis(axis, dim), name)


def _axis(axis, dim):
    """TF's deprecated-argument rule for ``dim`` (the old name of ``axis``): either one, never both."""
    if axis is not None and dim is not None:
        raise ValueError(f"Cannot specify both 'dim' and 'axis' (got dim={dim}, axis={axis}): dim is the old name "
                         f"of axis; pass only axis=")
    return axis if axis is not None else dim


# ---- fused softmax cross-entropies ----------------------------------------------------------------------------
SOFTMAX_XENT = DEFS.define(
    "SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"], outputs=["loss: T", "backprop: T"],
    attrs=["T: floating"], doc="Per-row -sum(labels * log_softmax(features)) and its gradient softmax - labels.")
SPARSE_SOFTMAX_XENT = DEFS.define(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
    outputs=["loss: T", "backprop: T"], attrs=["T: floating", "Tlabels: {int32, int64} = int64"],
    doc="Per-row -log_softmax(features)[label] and its gradient; labels must lie in [0, classes).")


@SOFTMAX_XENT.set_shape_fn
def _softmax_xent_shape(op):
    features = op.inputs[0].shape.with_rank(2)
    labels = op.inputs[1].shape.with_rank(2)
    if not features.is_compatible_with(labels):
        raise ValueError(f"logits and labels must be the same shape: logits {features} vs labels {labels}")
    merged = features.merge_with(labels)
    return [merged[:1], merged]


@SPARSE_SOFTMAX_XENT.set_shape_fn
def _sparse_softmax_xent_shape(op):
    features = op.inputs[0].shape.with_rank(2)
    labels = op.inputs[1].shape.with_rank(1)
    if not features[0].is_compatible_with(labels[0]):
        raise ValueError(f"logits and labels must have the same first dimension: logits {features} vs "
                         f"labels {labels}")
    batch = tensor_shape.TensorShape([features[0].merge_with(labels[0])])
    return [batch, batch.concatenate(features[1:])]


def _is_zero(t):
    if t is None or t.op.type in ("ZerosLike", "Zeros"):
        return True
    value = constant_value(t)
    return value is not None and not value.any()


def _xent_grad(op, grad_loss, grad_backprop):
    """d/dlogits of the loss, plus the second-order term when the backprop output was used downstream."""
    grad = shape_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if not _is_zero(grad_backprop):
        probs = apply_op("Softmax", [op.inputs[0]], name="Softmax")
        grad = grad + (grad_backprop - reduction_ops.reduce_sum(grad_backprop * probs, -1, keepdims=True)) * probs
    return grad


@SOFTMAX_XENT.set_gradient
def _softmax_xent_grad(op, grad_loss, grad_backprop):
    log_probs = apply_op("LogSoftmax", [op.inputs[0]], name="LogSoftmax")
    return [_xent_grad(op, grad_loss, grad_backprop), shape_ops.expand_dims(grad_loss, -1) * -log_probs]


@SPARSE_SOFTMAX_XENT.set_gradient
def _sparse_softmax_xent_grad(op, grad_loss, grad_backprop):
    return [_xent_grad(op, grad_loss, grad_backprop), None]


def _labels_logits(sentinel, labels, logits, fn_name):
    """TF1's keyword form (labels=, logits=) and the pre-1.0 positional form fn(logits, labels)."""
    if sentinel is not None:
        if logits is not None:
            raise ValueError(f"{fn_name}: logits given twice (positionally and as logits=); call it with "
                             f"named arguments: {fn_name}(labels=..., logits=...)")
        logits = sentinel
    if labels is None or logits is None:
        raise ValueError(f"{fn_name}: both labels and logits are needed: {fn_name}(labels=..., logits=...)")
    logits = convert_to_tensor(logits, name="logits")
    return logits, labels


def _moved_last_and_flattened(t, axis):
    """``t`` with ``axis`` moved last, reshaped to [-1, classes]; and its shape without the class axis."""
    rank = t.shape.ndims
    if axis not in (-1, None) and not (rank is not None and axis == rank - 1):
        if rank is None:
            raise ValueError(f"a class axis of {axis} needs logits of known rank")
        if not -rank <= axis < rank:
            raise ValueError(f"class axis {axis} is out of range for logits of rank {rank}")
        perm = list(range(rank))
        perm.append(perm.pop(axis))
        t = transpose_ops.transpose(t, perm)
    if t.shape.ndims == 2:
        return t, None
    outer = (tensor_shape.TensorShape(t.shape.as_list()[:-1]) if t.shape.ndims is not None
             else tensor_shape.TensorShape(None))
    outer_tensor = (outer.as_list() if outer.is_fully_defined()
                    else shape_ops.shape(t)[:-1])
    classes = t.shape[-1].value if t.shape.ndims is not None else None
    flat = shape_ops.reshape(
        t, [-1, classes] if classes is not None else concat_split_ops.stack([-1, shape_ops.shape(t)[-1]]))
    return flat, (outer_tensor, outer)


def _restore_outer(loss, outer):
    if outer is None:
        return loss
    outer_tensor, static = outer
    loss = shape_ops.reshape(loss, outer_tensor)
    loss.set_shape(static)
    return loss


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, dim=None, name=None, axis=None):
    """Per-example -sum(labels * log_softmax(logits)) along the class axis (``axis`` or TF1's ``dim``; default
    the last); gradients reach labels too."""
    logits, labels = _labels_logits(_sentinel, labels, logits, "softmax_cross_entropy_with_logits_v2")
    axis = _axis(axis, dim)
    with graph_mod.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]):
        labels = convert_to_tensor(labels, dtype=logits.dtype if not hasattr(labels, "dtype") else None,
                                   name="labels")
        if labels.dtype != logits.dtype:
            labels = unary_math_ops.cast(labels, logits.dtype)
        if not labels.shape.is_compatible_with(logits.shape):
            raise ValueError(f"logits and labels must be the same shape: logits {logits.shape} vs labels "
                             f"{labels.shape}")
        flat_logits, outer = _moved_last_and_flattened(logits, axis)
        flat_labels, _ = _moved_last_and_flattened(labels, axis)
        loss, _ = apply_op("SoftmaxCrossEntropyWithLogits", [flat_logits, flat_labels],
                           name="SoftmaxCrossEntropyWithLogits")
        return _restore_outer(loss, outer)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=None, name=None, axis=None):
    """As the v2 op, but labels get no gradient (TF1's behaviour); also takes the old ``(logits, labels)``.

    TF's own v1 function refuses ``axis=`` (its ``dim=-1`` default counts as given); here either works.
    """
    logits, labels = _labels_logits(_sentinel, labels, logits, "softmax_cross_entropy_with_logits")
    labels = array_ops.stop_gradient(convert_to_tensor(labels, dtype=logits.dtype if not hasattr(labels, "dtype")
                                                        else None, name="labels"))
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, dim=dim, name=name, axis=axis)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Per-example -log_softmax(logits)[label]; ``labels`` are class indices (int32/int64) of rank one less."""
    logits, labels = _labels_logits(_sentinel, labels, logits, "sparse_softmax_cross_entropy_with_logits")
    with graph_mod.name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [logits, labels]):
        labels = convert_to_tensor(labels, name="labels")
        if not labels.dtype.is_integer:
            raise TypeError(f"sparse_softmax_cross_entropy_with_logits: labels must be int32 or int64 class "
                            f"indices, got {labels.dtype.name}")
        lr, gr = labels.shape.ndims, logits.shape.ndims
        if lr is not None and gr is not None:
            if lr != gr - 1:
                raise ValueError(f"Rank mismatch: rank of labels (received {lr}) should equal rank of logits minus 1 "
                                 f"(received {gr})")
            if not labels.shape.is_compatible_with(logits.shape[:-1]):
                raise ValueError(f"labels of shape {labels.shape} do not match logits of shape {logits.shape} "
                                 f"without their class dimension")
        if gr == 2:
            loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                               name="SparseSoftmaxCrossEntropyWithLogits")
            return loss
        flat_logits, outer = _moved_last_and_flattened(logits, -1)
        loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", [flat_logits, shape_ops.reshape(labels, [-1])],
                           name="SparseSoftmaxCrossEntropyWithLogits")
        return _restore_outer(loss, outer)


# ---- sigmoid cross-entropies (compositions) -------------------------------------------------------------------
def _same_shape(labels, logits, fn_name):
    logits = convert_to_tensor(logits, name="logits")
    labels = convert_to_tensor(labels, dtype=logits.dtype if not hasattr(labels, "dtype") else None, name="labels")
    if labels.dtype != logits.dtype:
        raise TypeError(f"{fn_name}: labels ({labels.dtype.name}) and logits ({logits.dtype.name}) must have the "
                        f"same dtype; use tf.cast")
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"{fn_name}: logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
    return labels, logits


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise logistic loss, stable for any logit: (1 - z) * x + softplus(-x)."""
    logits, labels = _labels_logits(_sentinel, labels, logits, "sigmoid_cross_entropy_with_logits")
    with graph_mod.name_scope(name, "logistic_loss", [logits, labels]):
        labels, logits = _same_shape(labels, logits, "sigmoid_cross_entropy_with_logits")
        return math_ops.add((1 - labels) * logits, nn_ops.softplus(unary_math_ops.negative(logits)))


def weighted_cross_entropy_with_logits(targets=None, logits=None, pos_weight=None, name=None, labels=None):
    """The logistic loss with positives weighted by ``pos_weight``: (1 - z) * x + (1 + (q - 1) z) softplus(-x)."""
    if targets is not None and labels is not None:
        raise ValueError("weighted_cross_entropy_with_logits: pass only one of targets= and labels=")
    targets = targets if targets is not None else labels
    if targets is None or logits is None or pos_weight is None:
        raise ValueError("weighted_cross_entropy_with_logits needs targets (labels), logits and pos_weight")
    with graph_mod.name_scope(name, "logistic_loss", [logits, targets]):
        targets, logits = _same_shape(targets, logits, "weighted_cross_entropy_with_logits")
        log_weight = 1 + (pos_weight - 1) * targets
        return math_ops.add((1 - targets) * logits, log_weight * nn_ops.softplus(unary_math_ops.negative(logits)))


# ---- l2_loss --------------------------------------------------------------------------------------------------
L2_LOSS = DEFS.define("L2Loss", inputs=["t: T"], outputs=["output: T"], attrs=["T: floating"],
                      shape_fn=common_shapes.scalar_shape, doc="sum(t ** 2) / 2.")


@L2_LOSS.set_gradient
def _l2_loss_grad(op, grad):
    return [op.inputs[0] * grad]


def l2_loss(t, name=None):
    """sum(t ** 2) / 2, the usual weight-decay term."""
    return apply_op("L2Loss", [t], name=name or "L2Loss")



# ---- log_poisson_loss -----------------------------------------------------------------------------------------
__all__ += ["log_poisson_loss"]


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """The negative log-likelihood of ``targets`` under a Poisson of rate exp(``log_input``), up to the terms
    that do not depend on ``log_input``: exp(log_input) - log_input * targets; ``compute_full_loss`` adds
    Stirling's approximation of log(targets!) where targets > 1, as TF1."""
    with graph_mod.name_scope(name, "log_poisson_loss", [log_input, targets]) as name:
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets", dtype=log_input.dtype)
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError(f"log_poisson_loss: log_input shape {log_input.shape} and targets shape "
                             f"{targets.shape} must be the same")
        result = unary_math_ops.exp(log_input) - log_input * targets
        if not compute_full_loss:
            return array_ops.identity(result, name=name)
        stirling = (targets * unary_math_ops.log(targets) - targets
                    + 0.5 * unary_math_ops.log(2.0 * 3.141592653589793 * targets))
        small = comparison_ops.logical_and(comparison_ops.greater_equal(targets, 0.0),
                                           comparison_ops.less_equal(targets, 1.0))
        return math_ops.add(result, comparison_ops.where(small, fill_ops.zeros_like(targets), stirling), name=name)
