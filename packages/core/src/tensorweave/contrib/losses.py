"""``tf.contrib.losses`` (``slim.losses``): TF1's older loss functions, which take predictions or logits first,
then the labels; each is tf.losses' loss of the same name (the same weighting: the mean over the nonzero weights),
and ``hinge_loss`` returns the unreduced element losses, as contrib's did."""

from tensorweave import losses as _losses
from tensorweave.losses import (  # noqa: F401
    add_loss, compute_weighted_loss, get_losses, get_regularization_losses, get_total_loss,
)

__all__ = ["absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance", "get_losses",
           "get_regularization_losses", "get_total_loss", "hinge_loss", "log_loss", "mean_pairwise_squared_error",
           "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy", "sparse_softmax_cross_entropy"]


def softmax_cross_entropy(logits, onehot_labels, weights=1.0, label_smoothing=0, scope=None):
    return _losses.softmax_cross_entropy(onehot_labels, logits, weights=weights, label_smoothing=label_smoothing,
                                          scope=scope)


def sigmoid_cross_entropy(logits, multi_class_labels, weights=1.0, label_smoothing=0, scope=None):
    return _losses.sigmoid_cross_entropy(multi_class_labels, logits, weights=weights, label_smoothing=label_smoothing,
                                          scope=scope)


def sparse_softmax_cross_entropy(logits, labels, weights=1.0, scope=None):
    return _losses.sparse_softmax_cross_entropy(labels, logits, weights=weights, scope=scope)


def log_loss(predictions, labels=None, weights=1.0, epsilon=1e-7, scope=None):
    return _losses.log_loss(labels, predictions, weights=weights, scope=scope, epsilon=epsilon)


def mean_squared_error(predictions, labels=None, weights=1.0, scope=None):
    return _losses.mean_squared_error(labels, predictions, weights=weights, scope=scope)


def absolute_difference(predictions, labels=None, weights=1.0, scope=None):
    return _losses.absolute_difference(labels, predictions, weights=weights, scope=scope)


def mean_pairwise_squared_error(predictions, labels=None, weights=1.0, scope=None):
    return _losses.mean_pairwise_squared_error(labels, predictions, weights=weights, scope=scope)


def cosine_distance(predictions, labels=None, axis=None, weights=1.0, scope=None, dim=None):
    return _losses.cosine_distance(labels, predictions, axis=axis if axis is not None else dim, weights=weights,
                                   scope=scope)


def hinge_loss(logits, labels=None, scope=None):
    """The element-wise hinge losses max(0, 1 - (2 * labels - 1) * logits), not reduced and not collected."""
    return _losses.hinge_loss(labels, logits, scope=scope, loss_collection=None,
                              reduction=_losses.Reduction.NONE)

