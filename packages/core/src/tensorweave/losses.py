"""``tf.losses``: weighted losses reduced as TF1 does, and the loss collections.

Each loss computes per-element losses, weights them (``weights`` a scalar or of the losses' rank with each
dimension 1 or the losses' own, TF's rule in weights_broadcast_ops), reduces them (by default the weighted
sum over the number of non-zero weights, TF1's SUM_BY_NONZERO_WEIGHTS), and adds the result to
``GraphKeys.LOSSES``, so ``get_total_loss()`` sums every loss of the model plus the regularization losses of
its variables.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops, comparison_ops, concat_split_ops, fill_ops, loss_ops, math_ops, nn_ops, range_ops, reduction_ops,
    shape_ops, slicing_ops, unary_math_ops,
)

__all__ = ["Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "cosine_distance", "get_losses",
           "get_regularization_loss", "get_regularization_losses", "get_total_loss", "hinge_loss", "huber_loss",
           "log_loss", "mean_pairwise_squared_error", "mean_squared_error", "sigmoid_cross_entropy",
           "softmax_cross_entropy", "sparse_softmax_cross_entropy"]


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
    return math_ops.div_no_nan(total, count, name="value")


def _num_present(losses, weights, per_batch=False):
    """How many losses have a non-zero weight (weights broadcast to the losses' shape); per batch entry
    (summed over every axis but the first, kept) when ``per_batch``."""
    from tensorweave.ops import weights_broadcast_ops  # on first use of a loss with weights: start-up time
    if isinstance(weights, (int, float)) and weights != 0 and not per_batch:
        return unary_math_ops.cast(shape_ops.size(losses), dtypes.float32)
    with graph_mod.name_scope(None, "num_present", [losses, weights]):
        weights = unary_math_ops.cast(weights, dtypes.float32)
        present = unary_math_ops.cast(comparison_ops.not_equal(weights, 0.0), dtypes.float32)
        present = weights_broadcast_ops.broadcast_weights(present, losses)
        if per_batch:
            return reduction_ops.reduce_sum(present, range_ops.range(1, shape_ops.rank(present)), keepdims=True)
        return reduction_ops.reduce_sum(present)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``losses * weights`` reduced by ``reduction`` (computed in float32, returned in the losses' dtype).

    ``weights`` is a scalar or has the losses' rank with each dimension 1 or the losses' own; other shapes are
    refused while building (or, for shapes known only at run time, when the step runs), as in TF.
    """
    from tensorweave.ops import weights_broadcast_ops  # on first use of a loss with weights: start-up time
    Reduction.validate(reduction)
    with graph_mod.name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        check = weights_broadcast_ops.assert_broadcastable(weights, losses)
        with graph_mod.control_dependencies([check] if check is not None else []):
            input_dtype = losses.dtype
            losses = unary_math_ops.cast(losses, dtypes.float32)
            weights_f = unary_math_ops.cast(weights, dtypes.float32)
            weighted = math_ops.multiply(losses, weights_f)
            if reduction == Reduction.NONE:
                loss = weighted
            else:
                loss = reduction_ops.reduce_sum(weighted)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(loss, reduction_ops.reduce_sum(fill_ops.ones_like(losses) * weights_f))
                elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, unary_math_ops.cast(shape_ops.size(losses), dtypes.float32))
            loss = unary_math_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _required(**values):
    for name, value in values.items():
        if value is None:
            raise ValueError(f"{name} must not be None.")


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of softmax(logits) against one-hot labels (smoothed towards uniform by label_smoothing)."""
    _required(onehot_labels=onehot_labels, logits=logits)
    with graph_mod.name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as name:
        logits = convert_to_tensor(logits)
        onehot_labels = unary_math_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(onehot_labels.shape)
        if label_smoothing > 0:
            num_classes = unary_math_ops.cast(shape_ops.shape(onehot_labels)[-1], logits.dtype)
            onehot_labels = onehot_labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        onehot_labels = array_ops.stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = loss_ops.softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of softmax(logits) against integer class ids ``labels``."""
    _required(labels=labels, logits=logits)
    with graph_mod.name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as name:
        labels, logits = convert_to_tensor(labels), convert_to_tensor(logits)
        if labels.shape.ndims is not None and logits.shape.ndims is not None \
                and labels.shape.ndims == logits.shape.ndims and labels.shape[-1].value == 1:
            labels = shape_ops.squeeze(labels, [-1])  # [batch, 1] labels, as TF1's squeezable dimension
        weights = _squeezed_weights(weights, labels)
        losses = loss_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def _squeezed_weights(weights, labels):
    """TF's sparse_softmax_cross_entropy drops a last dimension of size 1 from weights with one more dimension
    than the labels ([batch, 1] weights for [batch] labels); for ranks known only at run time it also adds
    one to non-scalar weights with one dimension fewer (TF's dynamic path does both)."""
    weights = convert_to_tensor(weights, name="weights")
    rank, labels_rank = weights.shape.ndims, labels.shape.ndims
    if rank is not None and labels_rank is not None:
        if rank != labels_rank + 1:
            return weights
        if weights.shape[-1].value not in (None, 1):
            raise ValueError(f"weights of shape {weights.shape} for labels of shape {labels.shape}: with one more "
                             f"dimension than the labels, the last must be 1 (it is dropped, as in TF)")
        return shape_ops.squeeze(weights, [-1])
    shape, rank = shape_ops.shape(weights), shape_ops.rank(weights)
    difference = rank - shape_ops.rank(labels)
    drop = unary_math_ops.cast(comparison_ops.equal(difference, 1), dtypes.int32)
    add = unary_math_ops.cast(
        comparison_ops.logical_and(comparison_ops.equal(difference, -1), comparison_ops.not_equal(rank, 0)),
        dtypes.int32)
    kept = slicing_ops.slice(shape, [0], shape_ops.reshape(rank - drop, [1]))
    return shape_ops.reshape(weights, concat_split_ops.concat([kept, fill_ops.fill(shape_ops.reshape(add, [1]), 1)], 0),
                             name="weights_to_labels_rank")


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=GraphKeys.LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Element-wise logistic loss of ``logits`` against 0/1 labels (smoothed towards 1/2 by label_smoothing)."""
    _required(multi_class_labels=multi_class_labels, logits=logits)
    with graph_mod.name_scope(scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]) as name:
        logits = convert_to_tensor(logits)
        labels = unary_math_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = loss_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def _regression(default_name, element_loss):
    def loss(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, **options):
        _required(labels=labels, predictions=predictions)
        with graph_mod.name_scope(scope, default_name, [predictions, labels, weights]) as name:
            predictions = unary_math_ops.cast(predictions, dtypes.float32)
            labels = unary_math_ops.cast(labels, dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            losses = element_loss(labels, predictions, **options)
            return compute_weighted_loss(losses, weights, name, loss_collection, reduction)
    return loss


def _squared(labels, predictions):
    return math_ops.squared_difference(predictions, labels)


def _absolute(labels, predictions):
    return unary_math_ops.abs(predictions - labels)


def _huber(labels, predictions, delta=1.0):
    error = unary_math_ops.abs(predictions - labels)
    quadratic = math_ops.minimum(error, delta)
    return 0.5 * quadratic * quadratic + delta * (error - quadratic)


def _log(labels, predictions, epsilon=1e-7):
    return (-labels * unary_math_ops.log(predictions + epsilon)
            - (1 - labels) * unary_math_ops.log(1 - predictions + epsilon))


mean_squared_error = _regression("mean_squared_error", _squared)
mean_squared_error.__name__, mean_squared_error.__doc__ = "mean_squared_error", "(predictions - labels)², weighted."
absolute_difference = _regression("absolute_difference", _absolute)
absolute_difference.__name__, absolute_difference.__doc__ = "absolute_difference", "|predictions - labels|, weighted."
huber_loss = _regression("huber_loss", _huber)
huber_loss.__name__, huber_loss.__doc__ = "huber_loss", "Quadratic within ``delta`` of the label, linear beyond."
log_loss = _regression("log_loss", _log)
log_loss.__name__, log_loss.__doc__ = "log_loss", "Binary log loss of probabilities ``predictions``."


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - y * logits) with the 0/1 ``labels`` mapped to y = -1/1."""
    _required(labels=labels, logits=logits)
    with graph_mod.name_scope(scope, "hinge_loss", [logits, labels, weights]) as name:
        logits = unary_math_ops.cast(logits, dtypes.float32)
        labels = unary_math_ops.cast(labels, dtypes.float32)
        logits.shape.assert_is_compatible_with(labels.shape)
        losses = nn_ops.relu(1.0 - (2.0 * labels - 1.0) * logits)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - sum(labels * predictions) along ``axis`` (kept, size 1): the cosine distance of unit-normalized
    inputs. ``dim`` is TF1's old name for ``axis``, which is required."""
    axis = loss_ops._axis(axis, dim)
    if axis is None:
        raise ValueError("cosine_distance: You must specify 'axis' (the axis of the vectors being compared)")
    _required(labels=labels, predictions=predictions)
    with graph_mod.name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as name:
        predictions = unary_math_ops.cast(predictions, dtypes.float32)
        labels = unary_math_ops.cast(labels, dtypes.float32)
        predictions.shape.assert_is_compatible_with(labels.shape)
        losses = 1.0 - reduction_ops.reduce_sum(predictions * labels, axis=[axis], keepdims=True)
        return compute_weighted_loss(losses, weights, name, loss_collection, reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=GraphKeys.LOSSES):
    """For each batch entry, the mean over pairs of elements (i, j) of ((p_i - p_j) - (l_i - l_j))², weighted
    by the entry's weights and summed over the batch (TF1's formula, from per-entry sums of differences)."""
    from tensorweave.ops import weights_broadcast_ops  # on first use of a loss with weights: start-up time
    _required(labels=labels, predictions=predictions)
    with graph_mod.name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]):
        weights = unary_math_ops.cast(weights, dtypes.float32)
        labels = unary_math_ops.cast(labels, dtypes.float32)
        check = weights_broadcast_ops.assert_broadcastable(weights, labels)
        with graph_mod.control_dependencies([check] if check is not None else []):
            predictions = unary_math_ops.cast(predictions, dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            diffs = predictions - labels
            axes = range_ops.range(1, shape_ops.rank(diffs))
            count = _num_present(diffs, weights, per_batch=True)
            squares = reduction_ops.reduce_sum(unary_math_ops.square(diffs), axes, keepdims=True)
            term1 = 2.0 * math_ops.div_no_nan(squares, math_ops.maximum(count - 1, 0))
            sums = reduction_ops.reduce_sum(diffs, axes, keepdims=True)
            term2 = 2.0 * math_ops.div_no_nan(unary_math_ops.square(sums), math_ops.maximum(count * (count - 1), 0))
            loss = reduction_ops.reduce_sum((term1 - term2) * weights)
            loss = comparison_ops.where(reduction_ops.reduce_sum(count) > 0, loss, fill_ops.zeros_like(loss),
                                        name="value")
        add_loss(loss, loss_collection)
        return loss


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
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return array_ops.constant(0.0, name=name)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the losses in GraphKeys.LOSSES (and, by default, the regularization losses)."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses found: build a loss with tf.losses.* or add one with tf.losses.add_loss first")
    return math_ops.add_n(losses, name=name)
