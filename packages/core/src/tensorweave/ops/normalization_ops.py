"""Normalization: l2_normalize, moments and batch_normalization (compositions of math ops, so their
gradients follow) and local response normalization (the fused LRN op with its gradient op LRNGrad)."""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, reduction_ops, shape_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["l2_normalize", "moments", "batch_normalization", "local_response_normalization", "lrn"]


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
