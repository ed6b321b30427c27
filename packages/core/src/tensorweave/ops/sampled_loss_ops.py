"""nce_loss and sampled_softmax_loss: losses over a large vocabulary that look at only a few sampled classes.

Both compute logits for the true classes and ``num_sampled`` candidates through ``embedding_lookup``
(so the weights' gradient is sparse, and sharded weights work), then apply a sigmoid or softmax
cross-entropy, as TF1's ``_compute_sampled_logits``.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops, candidate_sampling_ops, concat_split_ops, embedding_ops, fill_ops, loss_ops, matmul_ops, reduction_ops,
    segment_ops, shape_ops, unary_math_ops,
)

__all__ = ["nce_loss", "sampled_softmax_loss"]


def _dims(*dims):
    """A shape argument: a plain list while every entry is a Python int, else a packed tensor."""
    return list(dims) if all(isinstance(d, int) for d in dims) else concat_split_ops.stack(list(dims))


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
                            subtract_log_q, remove_accidental_hits, partition_strategy, seed):
    """(logits, labels) over [true classes, sampled classes] for each example."""
    weights = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    inputs = convert_to_tensor(inputs, name="inputs")
    labels = convert_to_tensor(labels, name="labels")
    if labels.dtype != dtypes.int64:
        labels = unary_math_ops.cast(labels, dtypes.int64)
    if labels.shape.ndims not in (None, 2):
        raise ValueError(f"labels must be [batch_size, num_true] class ids, got shape {labels.shape}")
    flat_labels = shape_ops.reshape(labels, [-1])
    if sampled_values is None:
        sampled_values = candidate_sampling_ops.log_uniform_candidate_sampler(
            labels, num_true, num_sampled, True, num_classes, seed=seed)
    sampled, true_expected, sampled_expected = (array_ops.stop_gradient(v) for v in sampled_values)
    sampled = unary_math_ops.cast(sampled, dtypes.int64)
    all_ids = concat_split_ops.concat([flat_labels, sampled], 0)
    n_true = flat_labels.shape[0].value
    n_true = n_true if n_true is not None else shape_ops.shape(flat_labels)[0]

    all_w = embedding_ops.embedding_lookup(weights, all_ids, partition_strategy)
    all_b = embedding_ops.embedding_lookup(biases, all_ids, partition_strategy)
    true_w, sampled_w, true_b, sampled_b = all_w[:n_true], all_w[n_true:], all_b[:n_true], all_b[n_true:]
    dim = inputs.shape[1].value
    dim = dim if dim is not None else shape_ops.shape(inputs)[1]
    true_w = shape_ops.reshape(true_w, _dims(-1, num_true, dim))
    true_logits = reduction_ops.reduce_sum(shape_ops.expand_dims(inputs, 1) * true_w, 2)
    true_logits += shape_ops.reshape(true_b, [-1, num_true])
    sampled_logits = matmul_ops.matmul(inputs, sampled_w, transpose_b=True) + sampled_b
    if remove_accidental_hits:
        rows, positions, hit_weights = candidate_sampling_ops.compute_accidental_hits(labels, sampled, num_true)
        batch = sampled_logits.shape[0].value
        batch = batch if batch is not None else shape_ops.shape(sampled_logits)[0]
        cells = rows * num_sampled + unary_math_ops.cast(positions, dtypes.int32)
        mask = segment_ops.unsorted_segment_sum(unary_math_ops.cast(hit_weights, sampled_logits.dtype), cells,
                                             batch * num_sampled)
        sampled_logits += shape_ops.reshape(mask, _dims(batch, num_sampled))
    if subtract_log_q:
        true_logits -= unary_math_ops.log(unary_math_ops.cast(true_expected, true_logits.dtype))
        sampled_logits -= unary_math_ops.log(unary_math_ops.cast(sampled_expected, sampled_logits.dtype))
    logits = concat_split_ops.concat([true_logits, sampled_logits], 1)
    targets = concat_split_ops.concat(
        [fill_ops.ones_like(true_logits) / num_true, fill_ops.zeros_like(sampled_logits)], 1)
    return logits, targets


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss"):
    """Per-example noise-contrastive estimation loss (word2vec's): a logistic loss for telling the true
    classes from ``num_sampled`` classes drawn log-uniformly (or given as ``sampled_values``)."""
    with graph_mod.name_scope(name, "nce_loss", [inputs, labels]):
        logits, targets = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                                  num_true, sampled_values, True, remove_accidental_hits,
                                                  partition_strategy, None)
        losses = loss_ops.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits)
        return reduction_ops.reduce_sum(losses, 1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True, partition_strategy="mod",
                         name="sampled_softmax_loss", seed=None):
    """Per-example softmax cross-entropy over the true classes and ``num_sampled`` sampled ones, an
    estimate of the full softmax loss that is cheap for a large ``num_classes`` (training only)."""
    with graph_mod.name_scope(name, "sampled_softmax_loss", [inputs, labels]):
        logits, targets = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                                  num_true, sampled_values, True, remove_accidental_hits,
                                                  partition_strategy, seed)
        return loss_ops.softmax_cross_entropy_with_logits_v2(labels=array_ops.stop_gradient(targets), logits=logits)
