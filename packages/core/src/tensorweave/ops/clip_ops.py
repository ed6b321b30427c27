"""Gradient clipping by norm: clip_by_norm, global_norm, clip_by_global_norm, clip_by_average_norm (TF1).

IndexedSlices are clipped through their values and keep their indices; None entries pass through, so a
list of gradients from ``compute_gradients`` can be clipped as it is.
"""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops, comparison_ops, concat_split_ops, fill_ops, loss_ops, math_ops, reduction_ops, shape_ops, unary_math_ops,
)

__all__ = ["clip_by_average_norm", "clip_by_global_norm", "clip_by_norm", "global_norm"]


def _values(t, name):
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def _like(original, values):
    if isinstance(original, IndexedSlices):
        return IndexedSlices(values, original.indices, original.dense_shape)
    return values


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``t * clip_norm / max(||t||_2, clip_norm)``, the L2 norm taken over ``axes`` (default: all)."""
    with graph_mod.name_scope(name, "clip_by_norm", [t, clip_norm]):
        values = _values(t, "t")
        l2sum = reduction_ops.reduce_sum(values * values, axes, keepdims=True)
        positive = l2sum > 0
        # sqrt only of positive sums, so the gradient at a zero tensor is finite
        l2norm = comparison_ops.where(
            positive, unary_math_ops.sqrt(comparison_ops.where(positive, l2sum, fill_ops.ones_like(l2sum))), l2sum)
        clip_norm = unary_math_ops.cast(clip_norm, values.dtype)
        clipped = array_ops.identity(values * clip_norm / math_ops.maximum(l2norm, clip_norm), name="clipped")
        return _like(t, clipped)


def _check_sequence(t_list):
    if isinstance(t_list, (str, bytes)) or not isinstance(t_list, (list, tuple)):
        raise TypeError(f"t_list should be a sequence (list or tuple) of tensors, got {type(t_list).__name__}")


def global_norm(t_list, name=None):
    """sqrt(sum of squared L2 norms) of the tensors in ``t_list`` (None entries ignored)."""
    _check_sequence(t_list)
    present = [(i, t) for i, t in enumerate(t_list) if t is not None]
    with graph_mod.name_scope(name, "global_norm", [t for _, t in present]):
        half_squared = []
        for i, t in present:
            values = _values(t, f"t_{i}")
            with graph_mod.colocate_with(values):
                half_squared.append(loss_ops.l2_loss(values))
        if not half_squared:
            raise ValueError("global_norm needs at least one tensor that is not None")
        total = reduction_ops.reduce_sum(concat_split_ops.stack(half_squared))
        return unary_math_ops.sqrt(total * unary_math_ops.cast(2.0, total.dtype), name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(t_list scaled by clip_norm / max(global_norm, clip_norm), global_norm); None entries stay None.

    When the global norm is inf or nan, every entry becomes nan (as TF1), so a broken step is visible.
    """
    _check_sequence(t_list)
    t_list = list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    present = [t for t in t_list if t is not None]
    with graph_mod.name_scope(name, "clip_by_global_norm", present) as scope:
        scope = scope.rstrip("/").split("/")[-1] or "clip_by_global_norm"
        clip_norm = unary_math_ops.cast(clip_norm, use_norm.dtype)
        scale = clip_norm * math_ops.minimum(1.0 / use_norm, unary_math_ops.cast(1.0, use_norm.dtype) / clip_norm)
        scale = scale + (use_norm - use_norm)  # nan when the norm is not finite
        clipped = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            values = _values(t, f"t_{i}")
            with graph_mod.colocate_with(values):
                clipped.append(_like(t, array_ops.identity(values * unary_math_ops.cast(scale, values.dtype),
                                                           name=f"{scope}_{i}")))
        return clipped, use_norm


def clip_by_average_norm(t, clip_norm, name=None):
    """``t * clip_norm / max(||t||_2 / size(t), clip_norm)``: clipping by the L2 norm per element."""
    with graph_mod.name_scope(name, "clip_by_average_norm", [t, clip_norm]):
        t = convert_to_tensor(t, name="t")
        n_element = unary_math_ops.cast(shape_ops.size(t), t.dtype)
        l2norm_inv = unary_math_ops.rsqrt(reduction_ops.reduce_sum(t * t))
        clip_norm = unary_math_ops.cast(clip_norm, t.dtype)
        return array_ops.identity(t * clip_norm * math_ops.minimum(l2norm_inv * n_element, 1.0 / clip_norm),
                                  name="clip_by_average_norm")
