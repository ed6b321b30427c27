"""``tf.losses``: weighted losses reduced as TF1 does, and the loss collections.

Each loss computes per-element losses, weights them (``weights`` broadcast to the losses), reduces them
(by default the weighted sum over the number of non-zero weights, TF1's SUM_BY_NONZERO_WEIGHTS), and
adds the result to ``GraphKeys.LOSSES``, so ``get_total_loss()`` sums every loss of the model plus the
regularization losses of its variables.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "get_losses",
           "get_regularization_loss", "get_regularization_losses", "get_total_loss", "huber_loss", "log_loss",
           "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy", "sparse_softmax_cross_entropy"]


class Reduction:
    """How weighted losses become the returned loss."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key!r}; expected one of {cls.all()}")


def _safe_mean(total, count):
    from tensorweave.ops import math_ops
    return math_ops.div_no_nan(total, count, name="value")


def _num_present(losses, weights):
    """How many losses have a non-zero weight (weights broadcast to the losses' shape)."""
    from tensorweave.ops import array_ops, math_ops
    if isinstance(weights, (int, float)) and weights != 0:
        return math_ops.cast(array_ops.size(losses), dtypes.float32)
    with graph_mod.name_scope(None, "num_present", [losses, weights]):
        weights = math_ops.cast(weights, dtypes.float32)
        present = math_ops.cast(math_ops.not_equal(weights, 0.0), dtypes.float32)
        return math_ops.reduce_sum(present * array_ops.ones_like(losses, dtype=dtypes.float32))


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``losses * weights`` reduced by ``reduction`` (computed in float32, returned in the losses' dtype)."""
    from tensorweave.ops import array_ops, math_ops
    Reduction.validate(reduction)
    with graph_mod.name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = math_ops.cast(losses, dtypes.float32)
        weights_f = math_ops.cast(weights, dtypes.float32)
        weighted = math_ops.multiply(losses, weights_f)
        if not weighted.shape.is_compatible_with(losses.shape) and losses.shape.is_fully_defined() \
                and weighted.shape.is_fully_defined():
            raise ValueError(f"weights of shape {weights_f.shape} cannot be broadcast to losses of shape "
                             f"{losses.shape}")
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = math_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_mean(loss, math_ops.reduce_sum(array_ops.ones_like(losses) * weights_f))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_mean(loss, _num_present(losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_mean(loss, math_ops.cast(array_ops.size(losses), dtypes.float32))
        loss = math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _required(**values):
    for name, value in values.items():
        if value is None:
            raise ValueError(f"{name} must not be None.")


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of softmax(logits) against one-hot labels (smoothed towards uniform by label_smoothing)."""
    from tensorweave.ops import array_ops, loss_ops, math_ops
    _required(onehot_labels=onehot_labels, logits=logits)
    with graph_mod.name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as name:
        logits = convert_to_tensor(logits)
        onehot_labels = math_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(onehot_labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(onehot_labels)[-1], logits.dtype)
            onehot_labels = onehot_labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        onehot_labels = array_ops.stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = loss_ops.softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of softmax(logits) against integer class ids ``labels``."""
    from tensorweave.ops import array_ops, loss_ops
    _required(labels=labels, logits=logits)
    with graph_mod.name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as name:
        labels, logits = convert_to_tensor(labels), convert_to_tensor(logits)
        if labels.shape.ndims is not None and logits.shape.ndims is not None \
                and labels.shape.ndims == logits.shape.ndims and labels.shape[-1].value == 1:
            labels = array_ops.squeeze(labels, [-1])  # [batch, 1] labels, as TF1's squeezable dimension
        losses = loss_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Element-wise logistic loss of ``logits`` against 0/1 labels (smoothed towards 1/2 by label_smoothing)."""
    from tensorweave.ops import loss_ops, math_ops
    _required(multi_class_labels=multi_class_labels, logits=logits)
    with graph_mod.name_scope(scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]) as name:
        logits = convert_to_tensor(logits)
        labels = math_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = loss_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def _regression(default_name, element_loss):
    def loss(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, **options):
        from tensorweave.ops import math_ops
        _required(labels=labels, predictions=predictions)
        with graph_mod.name_scope(scope, default_name, [predictions, labels, weights]) as name:
            predictions = math_ops.cast(predictions, dtypes.float32)
            labels = math_ops.cast(labels, dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            losses = element_loss(labels, predictions, **options)
            return compute_weighted_loss(losses, weights, name, loss_collection, reduction)
    return loss


def _squared(labels, predictions):
    from tensorweave.ops import math_ops
    return math_ops.squared_difference(predictions, labels)


def _absolute(labels, predictions):
    from tensorweave.ops import math_ops
    return math_ops.abs(predictions - labels)


def _huber(labels, predictions, delta=1.0):
    from tensorweave.ops import math_ops
    error = math_ops.abs(predictions - labels)
    quadratic = math_ops.minimum(error, delta)
    return 0.5 * quadratic * quadratic + delta * (error - quadratic)


def _log(labels, predictions, epsilon=1e-7):
    from tensorweave.ops import math_ops
    return -labels * math_ops.log(predictions + epsilon) - (1 - labels) * math_ops.log(1 - predictions + epsilon)


mean_squared_error = _regression("mean_squared_error", _squared)
mean_squared_error.__name__, mean_squared_error.__doc__ = "mean_squared_error", "(predictions - labels)², weighted."
absolute_difference = _regression("absolute_difference", _absolute)
absolute_difference.__name__, absolute_difference.__doc__ = "absolute_difference", "|predictions - labels|, weighted."
huber_loss = _regression("huber_loss", _huber)
huber_loss.__name__, huber_loss.__doc__ = "huber_loss", "Quadratic within ``delta`` of the label, linear beyond."
log_loss = _regression("log_loss", _log)
log_loss.__name__, log_loss.__doc__ = "log_loss", "Binary log loss of probabilities ``predictions``."


def add_loss(loss, loss_collection=GraphKeys.LOSSES):
    """Adds an externally computed loss to ``loss_collection`` (so get_total_loss includes it)."""
    if loss_collection:
        graph_mod.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=GraphKeys.LOSSES):
    return graph_mod.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    return graph_mod.get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses (0.0 when there are none)."""
    from tensorweave.ops import array_ops, math_ops
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return array_ops.constant(0.0, name=name)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the losses in GraphKeys.LOSSES (and, by default, the regularization losses)."""
    from tensorweave.ops import math_ops
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses found: build a loss with tf.losses.* or add one with tf.losses.add_loss first")
    return math_ops.add_n(losses, name=name)
