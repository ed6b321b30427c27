"""``precision_at_k`` / ``recall_at_k`` (and their ``_at_top_k`` forms): how the top-k predicted classes of each
row meet the row's set of labels. Rows are sets, as in TF: a repeated label counts once, a label outside the
classes never matches (so it is a false negative for recall), and ``class_id`` restricts both sets to one class.
TF computes the sets with set ops on sparse tensors; here each row's set is its entries with a mask of the
distinct valid ones, compared pairwise (rows hold a few labels and k predictions)."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.metric_variables import add_to_collections, check_collections, metric_variable
from tensorweave.ops import (
    comparison_ops, cond as cond_ops, cumulative_ops, fill_ops, gather_ops, math_ops, range_ops, reduction_ops, shape_ops, state_ops, top_k_ops,
    unary_math_ops, weights_broadcast_ops,
)

__all__ = ["average_precision_at_k", "precision_at_k", "precision_at_top_k", "recall_at_k", "recall_at_top_k",
           "sparse_precision_at_k", "sparse_average_precision_at_k"]


def _at_k_name(name, k=None, class_id=None):
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _label_sets(labels, predictions_idx):
    """(ids, valid) for ``labels`` (a Tensor or SparseTensor) with the rank of ``predictions_idx``: a label
    tensor of one rank less gets a last dimension of 1; a SparseTensor's missing entries are not valid."""
    rank = predictions_idx.shape.ndims
    if isinstance(labels, SparseTensor):
        sparse_rank = labels.indices.shape[1].value
        ids = gather_ops.scatter_nd(labels.indices, unary_math_ops.cast(labels.values, dtypes.int64),
                                    labels.dense_shape)
        valid = comparison_ops.greater(gather_ops.scatter_nd(labels.indices, fill_ops.ones_like(labels.values,
                                                                                          dtype=dtypes.int32),
                                                       labels.dense_shape), 0)
        if sparse_rank is not None and rank is not None and rank == sparse_rank + 1:
            ids, valid = shape_ops.expand_dims(ids, -1), shape_ops.expand_dims(valid, -1)
        return ids, valid
    ids = unary_math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
    if ids.shape.ndims is not None and rank is not None:
        if rank == ids.shape.ndims + 1:
            ids = shape_ops.expand_dims(ids, -1)
        elif rank != ids.shape.ndims:
            raise ValueError(f"Unexpected labels shape {ids.shape} for predictions shape {predictions_idx.shape}. "
                             f"Predictions rank should be the same rank as labels rank or labels rank plus one .")
    return ids, fill_ops.ones_like(ids, dtype=dtypes.bool)


def _distinct(ids, valid):
    """``valid`` where no earlier valid entry of the same row holds the same id (a set's members, once each)."""
    n = shape_ops.shape(ids)[-1]
    positions = range_ops.range(n)
    earlier = comparison_ops.less(shape_ops.expand_dims(positions, 0), shape_ops.expand_dims(positions, 1))
    same = comparison_ops.equal(shape_ops.expand_dims(ids, -1), shape_ops.expand_dims(ids, -2))
    repeated = reduction_ops.reduce_any(comparison_ops.logical_and(
        comparison_ops.logical_and(same, earlier), shape_ops.expand_dims(valid, -2)), -1)
    return comparison_ops.logical_and(valid, comparison_ops.logical_not(repeated))


def _member_of(ids, other_ids, other_valid):
    """Whether each entry of ``ids`` is a valid entry of the same row of ``other_ids``."""
    same = comparison_ops.equal(shape_ops.expand_dims(ids, -1), shape_ops.expand_dims(other_ids, -2))
    return reduction_ops.reduce_any(comparison_ops.logical_and(same, shape_ops.expand_dims(other_valid, -2)), -1)


def _set_count(members, weights):
    """The number of true ``members`` per row, float64, times ``weights`` (which must broadcast to it)."""
    count = unary_math_ops.cast(reduction_ops.reduce_sum(unary_math_ops.cast(members, dtypes.int32), -1),
                                dtypes.float64)
    if weights is None:
        return count
    check = weights_broadcast_ops.assert_broadcastable(weights, count)
    with graph_mod.control_dependencies([check] if check is not None else []):
        return math_ops.multiply(count, unary_math_ops.cast(weights, dtypes.float64))


def _sets(labels, predictions_idx, class_id):
    """(label ids, their distinct-valid mask, predicted ids, theirs), restricted to ``class_id`` if given."""
    predictions_idx = unary_math_ops.cast(predictions_idx, dtypes.int64)
    label_ids, label_valid = _label_sets(labels, predictions_idx)
    predicted_valid = fill_ops.ones_like(predictions_idx, dtype=dtypes.bool)
    if class_id is not None:
        label_valid = comparison_ops.logical_and(label_valid, comparison_ops.equal(label_ids, class_id))
        predicted_valid = comparison_ops.equal(predictions_idx, class_id)
    return (label_ids, _distinct(label_ids, label_valid), predictions_idx,
            _distinct(predictions_idx, predicted_valid))


def _streaming_count(kind, k, class_id, members, weights):
    """A float64 variable named ``<kind>_at_<k>[_class<id>]`` in the current scope and the op adding the batch's."""
    with graph_mod.name_scope(None, _at_k_name(kind, k, class_id=class_id)) as scope:
        total = reduction_ops.reduce_sum(_set_count(members, weights))
        variable = metric_variable([], dtypes.float64, name=scope)
        return variable, state_ops.assign_add(variable, total, name="update")


def _at_top_k(kind, labels, predictions_idx, k, class_id, weights, metrics_collections, updates_collections, name):
    check_collections(metrics_collections, updates_collections)
    with graph_mod.name_scope(name, _at_k_name(kind, k, class_id=class_id), (predictions_idx, labels, weights)):
        label_ids, label_set, predicted_ids, predicted_set = _sets(labels, predictions_idx, class_id)
        label_hit = _member_of(label_ids, predicted_ids, predicted_set)
        tp, tp_update = _streaming_count("true_positive", k, class_id,
                                         comparison_ops.logical_and(label_set, label_hit), weights)
        if kind == "precision":
            missed = comparison_ops.logical_and(predicted_set, comparison_ops.logical_not(
                _member_of(predicted_ids, label_ids, label_set)))
            other, other_update = _streaming_count("false_positive", k, class_id, missed, weights)
        else:
            missed = comparison_ops.logical_and(label_set, comparison_ops.logical_not(label_hit))
            other, other_update = _streaming_count("false_negative", k, class_id, missed, weights)
        value = math_ops.div(tp, math_ops.add(tp, other), name="value")
        update = math_ops.div(tp_update, math_ops.add(tp_update, other_update), name="update")
        add_to_collections(metrics_collections, value)
        add_to_collections(updates_collections, update)
        return value, update


def precision_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """Precision of the given top-k class ids ``predictions_idx`` [..., k] against the label sets: TP / (TP + FP)
    over ``precision_at_<k>/true_positive_at_<k>`` and ``/false_positive_at_<k>`` (float64; NaN before any)."""
    return _at_top_k("precision", labels, predictions_idx, k, class_id, weights, metrics_collections,
                     updates_collections, name)


def recall_at_top_k(labels, predictions_idx, k=None, class_id=None, weights=None, metrics_collections=None,
                    updates_collections=None, name=None):
    """Recall of the top-k class ids: TP / (TP + FN) over ``recall_at_<k>/true_positive_at_<k>`` and
    ``/false_negative_at_<k>``."""
    return _at_top_k("recall", labels, predictions_idx, k, class_id, weights, metrics_collections,
                     updates_collections, name)


def _from_scores(kind, at_top_k):
    def metric(labels, predictions, k, class_id=None, weights=None, metrics_collections=None,
               updates_collections=None, name=None):
        with graph_mod.name_scope(name, _at_k_name(kind, k, class_id=class_id), (predictions, labels, weights)) \
                as scope:
            _, top_k_idx = top_k_ops.top_k(predictions, k)
            return at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections, updates_collections,
                            scope)
    metric.__name__ = f"{kind}_at_k"
    metric.__doc__ = (f"{kind.capitalize()} of the ``k`` highest-scoring classes of ``predictions`` [..., classes] "
                      f"against ``labels`` (class ids [...] or [..., n], or a SparseTensor of them).")
    return metric


precision_at_k = _from_scores("precision", precision_at_top_k)
recall_at_k = _from_scores("recall", recall_at_top_k)
sparse_precision_at_k = precision_at_k


def _clean_out_of_range(labels, num_classes):
    """Ids >= num_classes become -1 (when there are any), as TF does before average precision."""
    def clean(values):
        return comparison_ops.where(comparison_ops.greater_equal(values, num_classes), -fill_ops.ones_like(values),
                                    values)
    values = labels.values if isinstance(labels, SparseTensor) else convert_to_tensor(labels, name="labels")
    values = unary_math_ops.cast(values, dtypes.int64)
    values = cond_ops.cond(comparison_ops.greater_equal(reduction_ops.reduce_max(values), num_classes),
                           lambda: clean(values), lambda: values)
    return SparseTensor(labels.indices, values, labels.dense_shape) if isinstance(labels, SparseTensor) else values


def _average_precision(labels, predictions_idx, k):
    """Per row: the sum over ranks i <= k holding a label of the precision of the first i predictions, divided by
    min(number of labels, k) (TF counts a dense row's ids >= 0, a sparse row's distinct ids)."""
    predictions_idx = unary_math_ops.cast(predictions_idx, dtypes.int64)
    label_ids, label_valid = _label_sets(labels, predictions_idx)
    relevant = unary_math_ops.cast(_member_of(predictions_idx, label_ids, label_valid), dtypes.float64)
    hits = cumulative_ops.cumsum(relevant, axis=-1)
    ranks = cumulative_ops.cumsum(fill_ops.ones_like(relevant), axis=-1)
    precision_sum = reduction_ops.reduce_sum(math_ops.div(hits, ranks) * relevant, -1)
    counted = _distinct(label_ids, label_valid) if isinstance(labels, SparseTensor) else \
        comparison_ops.logical_and(label_valid, comparison_ops.greater_equal(label_ids, 0))
    num_relevant = math_ops.minimum(unary_math_ops.cast(reduction_ops.reduce_sum(
        unary_math_ops.cast(counted, dtypes.int64), -1), dtypes.float64), float(k))
    return math_ops.div(precision_sum, num_relevant)


def average_precision_at_k(labels, predictions, k, weights=None, metrics_collections=None, updates_collections=None,
                           name=None):
    """The mean average precision of the top ``k`` predictions: variables ``average_precision_at_<k>/total`` and
    ``/max`` (float64; the weights' sum, or the number of rows)."""
    check_collections(metrics_collections, updates_collections)
    if k < 1:
        raise ValueError(f"Invalid k={k}.")
    with graph_mod.name_scope(name, _at_k_name("average_precision", k), (predictions, labels, weights)):
        predictions = convert_to_tensor(predictions, name="predictions")
        _, predictions_idx = top_k_ops.top_k(predictions, k)
        num_classes = unary_math_ops.cast(shape_ops.shape(predictions)[-1], dtypes.int64)
        average = _average_precision(_clean_out_of_range(labels, num_classes), predictions_idx, k)
        if weights is None:
            batch_max = unary_math_ops.cast(shape_ops.size(average), dtypes.float64)
        else:
            weights = weights_broadcast_ops.broadcast_weights(unary_math_ops.cast(weights, dtypes.float64),
                                                              average)
            average = math_ops.multiply(average, weights)
            batch_max = reduction_ops.reduce_sum(weights)
        with graph_mod.name_scope(None, "max") as max_scope:
            max_var = metric_variable([], dtypes.float64, name=max_scope)
        with graph_mod.name_scope(None, "total") as total_scope:
            total_var = metric_variable([], dtypes.float64, name=total_scope)
        value = math_ops.div_no_nan(total_var, max_var, name="mean")
        update = math_ops.div_no_nan(state_ops.assign_add(total_var, reduction_ops.reduce_sum(average)),
                                     state_ops.assign_add(max_var, batch_max), name="update")
        add_to_collections(metrics_collections, value)
        add_to_collections(updates_collections, update)
        return value, update


sparse_average_precision_at_k = average_precision_at_k
