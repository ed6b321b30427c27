"""Normalization built from math ops: l2_normalize, moments and batch_normalization (their gradients follow)."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["l2_normalize", "moments", "batch_normalization"]


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon)): unit L2 norm along ``axis`` (all axes if None)."""
    from tensorweave.ops import math_ops
    if axis is not None and dim is not None and axis != dim:
        raise ValueError(f"l2_normalize: pass only one of axis= and dim= (got {axis} and {dim})")
    axis = axis if axis is not None else dim
    with graph_mod.name_scope(name, "l2_normalize", [x]):
        x = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        inverse_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, inverse_norm)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of ``x`` over ``axes``; float16 inputs are accumulated in float32.

    ``shift`` is accepted for TF1 compatibility and unused, as in TF1's own implementation.
    """
    from tensorweave.ops import array_ops, math_ops
    if keep_dims is not None and keepdims is not None and bool(keep_dims) != bool(keepdims):
        raise ValueError("moments: keep_dims and keepdims disagree")
    keep = bool(keep_dims if keep_dims is not None else keepdims)
    with graph_mod.name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        y = math_ops.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        axes = list(axes) if isinstance(axes, (list, tuple)) else axes
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # The mean is a constant for the variance's gradient: d/dmean of sum((y - mean)^2) is zero.
        variance = math_ops.reduce_mean(math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
                                        keepdims=True, name="variance")
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """scale * (x - mean) / sqrt(variance + variance_epsilon) + offset, with offset/scale optional (None)."""
    from tensorweave.ops import math_ops
    with graph_mod.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(shift, x.dtype)
