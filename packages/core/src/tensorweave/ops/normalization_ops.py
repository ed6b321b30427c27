"""Normalization: l2_normalize, moments (and sufficient_statistics, normalize_moments, weighted_moments),
batch_normalization and fused_batch_norm (compositions of math ops, so
their gradients follow) and local response normalization (the fused LRN op with its gradient op LRNGrad)."""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import common_shapes, graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, fill_ops, gather_ops, math_ops, reduction_ops, shape_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["l2_normalize", "moments", "sufficient_statistics", "normalize_moments", "weighted_moments", "batch_normalization", "fused_batch_norm", "local_response_normalization",
           "lrn"]


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon)): unit L2 norm along ``axis`` (all axes if None)."""
    if axis is not None and dim is not None and axis != dim:
        raise ValueError(f"l2_normalize: pass only one of axis= and dim= (got {axis} and {dim})")
    axis = axis if axis is not None else dim
    with graph_mod.name_scope(name, "l2_normalize", [x]):
        x = convert_to_tensor(x, name="x")
        square_sum = reduction_ops.reduce_sum(unary_math_ops.square(x), axis, keepdims=True)
        inverse_norm = unary_math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, inverse_norm)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of ``x`` over ``axes``; float16 inputs are accumulated in float32.

    ``shift`` is accepted for TF1 compatibility and unused, as in TF1's own implementation.
    """
    if keep_dims is not None and keepdims is not None and bool(keep_dims) != bool(keepdims):
        raise ValueError("moments: keep_dims and keepdims disagree")
    keep = bool(keep_dims if keep_dims is not None else keepdims)
    with graph_mod.name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        y = unary_math_ops.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        axes = list(axes) if isinstance(axes, (list, tuple)) else axes
        mean = reduction_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # The mean is a constant for the variance's gradient: d/dmean of sum((y - mean)^2) is zero.
        variance = reduction_ops.reduce_mean(math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
                                        keepdims=True, name="variance")
        if not keep:
            mean = shape_ops.squeeze(mean, axes)
            variance = shape_ops.squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return unary_math_ops.cast(mean, dtypes.float16), unary_math_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """scale * (x - mean) / sqrt(variance + variance_epsilon) + offset, with offset/scale optional (None)."""
    with graph_mod.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = unary_math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * unary_math_ops.cast(inv, x.dtype) + unary_math_ops.cast(shift, x.dtype)


_FUSED_MIN_EPSILON = 1.001e-5  # TF1 raises smaller epsilons to this (cuDNN's lower bound)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None):
    """(y, batch_mean, batch_variance) of TF1's fused batch norm over the channel axis of a 4-D ``x``.

    Training normalizes by the batch's moments and returns the batch mean and the unbiased (n / (n - 1))
    variance, as moving averages want them; inference normalizes by the given ``mean`` and ``variance`` and
    returns them. As in TF, no gradient flows through the returned moments, nor to ``mean`` and ``variance``.
    """
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"fused_batch_norm: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    with graph_mod.name_scope(name, "FusedBatchNorm", [x, scale, offset, mean, variance]):
        x = convert_to_tensor(x, name="input")
        x.shape.with_rank(4)
        scale = convert_to_tensor(scale, name="scale")
        offset = convert_to_tensor(offset, dtype=scale.dtype, name="offset")
        if x.dtype not in (dtypes.float16, dtypes.float32) or scale.dtype != dtypes.float32:
            raise TypeError(f"fused_batch_norm: x must be float16 or float32 and scale and offset float32 (as TF's "
                            f"fused kernel), got {x.dtype.name} and {scale.dtype.name}; cast them, or use "
                            f"tf.nn.batch_normalization for other types")
        epsilon = max(float(epsilon), _FUSED_MIN_EPSILON)
        axes, channel = ([0, 1, 2], 3) if data_format == "NHWC" else ([0, 2, 3], 1)
        along = [1, 1, 1, 1]
        along[channel] = -1
        wide = unary_math_ops.cast(x, scale.dtype) if x.dtype != scale.dtype else x
        if is_training:
            batch_mean, batch_variance = moments(wide, axes)
            count = unary_math_ops.cast(shape_ops.size(wide), scale.dtype) / unary_math_ops.cast(
                shape_ops.size(batch_mean), scale.dtype)
            unbiased = batch_variance * (count / math_ops.maximum(count - 1.0, 1.0))
        else:
            if mean is None or variance is None:
                raise ValueError("fused_batch_norm: inference (is_training=False) needs the mean and variance")
            batch_mean = array_ops.stop_gradient(convert_to_tensor(mean, dtype=scale.dtype, name="mean"))
            batch_variance = unbiased = array_ops.stop_gradient(
                convert_to_tensor(variance, dtype=scale.dtype, name="variance"))
        y = batch_normalization(wide, shape_ops.reshape(batch_mean, along), shape_ops.reshape(batch_variance, along),
                                shape_ops.reshape(offset, along), shape_ops.reshape(scale, along), epsilon)
        y = unary_math_ops.cast(y, x.dtype) if x.dtype != scale.dtype else y
        return y, array_ops.stop_gradient(batch_mean), array_ops.stop_gradient(unbiased)


_LRN_ATTRS = ["T: {float16, float32, float64}", "depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0",
              "beta: float = 0.5"]


def _rank4(op):
    return op.inputs[0].shape.with_rank(4)


LRN = DEFS.define("LRN", inputs=["input: T"], outputs=["output: T"], attrs=_LRN_ATTRS, shape_fn=_rank4,
                  doc="x / (bias + alpha * sum of x^2 over depth_radius neighbouring channels) ** beta.")
LRN_GRAD = DEFS.define("LRNGrad", inputs=["input_grads: T", "input_image: T", "output_image: T"],
                       outputs=["output: T"], attrs=_LRN_ATTRS, shape_fn=common_shapes.unchanged_shape,
                       doc="The gradient of LRN.")


@LRN.set_gradient
def _lrn_grad(op, grad):
    attrs = {name: op.get_attr(name) for name in ("depth_radius", "bias", "alpha", "beta")}
    return [apply_op("LRNGrad", [grad, op.inputs[0], op.outputs[0]], attrs, name="LRNGrad")]


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """Normalizes each channel of a 4-D NHWC tensor by the energy of its neighbouring channels (AlexNet's LRN)."""
    return apply_op("LRN", [input], {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha),
                                     "beta": float(beta)}, name=name or "LRN")


lrn = local_response_normalization


def _keep(keep_dims, keepdims):
    return bool(keepdims if keepdims is not None else keep_dims)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum of x - shift, sum of (x - shift)^2, shift) over ``axes``, as TF1 builds them."""
    axes = sorted(set(axes))
    keep = _keep(keep_dims, keepdims)
    with graph_mod.name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and all(dims[d] is not None for d in axes):
            counts = convert_to_tensor(float(np.prod([dims[d] for d in axes])), dtype=x.dtype)
        else:
            sizes = gather_ops.gather(unary_math_ops.cast(shape_ops.shape(x), x.dtype), axes)
            counts = reduction_ops.reduce_prod(sizes, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss, v_ss = math_ops.subtract(x, shift), math_ops.squared_difference(x, shift)
        else:
            m_ss, v_ss = x, unary_math_ops.square(x)
        m_ss = reduction_ops.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = reduction_ops.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient statistics."""
    with graph_mod.name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = unary_math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = mean = math_ops.multiply(mean_ss, divisor, name="mean")
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor), unary_math_ops.square(shifted_mean),
                                     name="variance")
    return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of ``x`` over ``axes`` with each entry counted ``frequency_weights`` times (broadcast)."""
    keep = _keep(keep_dims, keepdims)
    with graph_mod.name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        half = x.dtype == dtypes.float16
        if half:
            x = unary_math_ops.cast(x, dtypes.float32)
        if weights.dtype != x.dtype:
            weights = unary_math_ops.cast(weights, x.dtype)
        weighted_sum = reduction_ops.reduce_sum(weights * x, axes, name="weighted_input_sum", keepdims=True)
        total = reduction_ops.reduce_sum(weights + fill_ops.zeros_like(x), axes, name="sum_of_weights",
                                         keepdims=True)
        divisor = unary_math_ops.reciprocal(total, name="inv_weight_sum")
        mean = math_ops.multiply(weighted_sum, divisor)
        distsq = reduction_ops.reduce_sum(weights * math_ops.squared_difference(x, mean), axes,
                                          name="weighted_distsq", keepdims=True)
        variance = math_ops.multiply(distsq, divisor)
        if not keep:
            mean, variance = shape_ops.squeeze(mean, axis=axes), shape_ops.squeeze(variance, axis=axes)
        if half:
            mean, variance = unary_math_ops.cast(mean, dtypes.float16), unary_math_ops.cast(variance, dtypes.float16)
        return mean, variance
