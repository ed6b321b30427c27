"""Max and average pooling over 2-D windows, with their gradient ops (MaxPoolGrad, AvgPoolGrad)."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value_as_shape
from tensorweave.ops import shape_ops
from tensorweave.ops.window_geometry import (
    expand_spatial, padding_attrs, pool_paddings, spatial_axes, spatial_params, window_geometry)

DEFS = OpDefList()

__all__ = ["max_pool", "avg_pool", "max_pool2d", "avg_pool2d"]

_REAL = "T: {float16, float32, float64, int8, int16, int32, int64, uint8}"
_WINDOW_ATTRS = ["ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID'}",
                 "data_format: {'NHWC', 'NCHW'} = 'NHWC'"]
# Max pooling also takes TF's explicit paddings (average pooling does not, as in TF).
_MAX_WINDOW_ATTRS = ["ksize: list(int) >= 4", "strides: list(int) >= 4", "padding: {'SAME', 'VALID', 'EXPLICIT'}",
                     "explicit_paddings: list(int) = []", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"]

MAX_POOL = DEFS.define("MaxPool", inputs=["input: T"], outputs=["output: T"], attrs=[_REAL] + _MAX_WINDOW_ATTRS,
                       doc="The maximum of each window.")
AVG_POOL = DEFS.define("AvgPool", inputs=["value: T"], outputs=["output: T"], attrs=["T: floating"] + _WINDOW_ATTRS,
                       doc="The mean of each window's valid (non-padding) elements.")
MAX_POOL_GRAD = DEFS.define(
    "MaxPoolGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"], outputs=["output: T"],
    attrs=[_REAL] + _MAX_WINDOW_ATTRS, doc="Routes each window's gradient to its (first) maximum.")
MAX_POOL_GRAD_GRAD = DEFS.define(
    "MaxPoolGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"], outputs=["output: T"],
    attrs=[_REAL] + _MAX_WINDOW_ATTRS, doc="Picks, for each window, the gradient at its (first) maximum.")
AVG_POOL_GRAD = DEFS.define(
    "AvgPoolGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"],
    attrs=["T: floating"] + _WINDOW_ATTRS, doc="Spreads each window's gradient evenly over its valid elements.")


def pool_output_shape(input_shape, op):
    data_format = op.get_attr("data_format")
    x = tensor_shape.as_shape(input_shape).with_rank(4).as_list()
    ksize = spatial_params(op.get_attr("ksize"), data_format, "ksize")
    strides = spatial_params(op.get_attr("strides"), data_format, "strides")
    paddings = pool_paddings(op.get_attr("padding"), _explicit_paddings(op), data_format, ksize)
    out = list(x)
    for axis, window, stride, padding in zip(spatial_axes(data_format), ksize, strides, paddings):
        if x[axis] is not None:
            out[axis] = window_geometry(x[axis], window, stride, 1, padding)[0]
    return tensor_shape.TensorShape(out)


@MAX_POOL.set_shape_fn
@AVG_POOL.set_shape_fn
def _pool_shape(op):
    return pool_output_shape(op.inputs[0].shape, op)


@MAX_POOL_GRAD.set_shape_fn
def _max_pool_grad_shape(op):
    _check_grad_shape(op, op.inputs[0].shape, op.inputs[2])
    return op.inputs[0].shape.with_rank(4)


@MAX_POOL_GRAD_GRAD.set_shape_fn
def _max_pool_grad_grad_shape(op):
    return pool_output_shape(op.inputs[0].shape, op)


@AVG_POOL_GRAD.set_shape_fn
def _avg_pool_grad_shape(op):
    input_shape = constant_value_as_shape(op.inputs[0]).with_rank(4)
    _check_grad_shape(op, input_shape, op.inputs[1])
    return input_shape


def _check_grad_shape(op, input_shape, grad):
    want = pool_output_shape(input_shape, op)
    if not want.is_compatible_with(grad.shape):
        raise ValueError(f"grad has shape {grad.shape}, but pooling an input of shape {input_shape} gives {want}")


def _explicit_paddings(op):
    return op.get_attr("explicit_paddings") if "explicit_paddings" in op.op_def.attrs else []


def _window_attrs(op):
    attrs = {k: op.get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}
    if "explicit_paddings" in op.op_def.attrs:
        attrs["explicit_paddings"] = op.get_attr("explicit_paddings")
    return attrs


@MAX_POOL.set_gradient
def _max_pool_grad(op, grad):
    return [apply_op("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], _window_attrs(op), name="MaxPoolGrad")]


@MAX_POOL_GRAD.set_gradient
def _max_pool_grad_grad(op, grad):
    # The routing is piecewise constant in orig_input/orig_output, so only `grad` gets a gradient.
    orig_input, orig_output, _ = op.inputs
    return [None, None, apply_op("MaxPoolGradGrad", [orig_input, orig_output, grad], _window_attrs(op),
                                 name="MaxPoolGradGrad")]


@MAX_POOL_GRAD_GRAD.set_gradient
def _max_pool_grad_grad_grad(op, grad):
    orig_input, orig_output, _ = op.inputs
    return [None, None, apply_op("MaxPoolGrad", [orig_input, orig_output, grad], _window_attrs(op),
                                 name="MaxPoolGrad")]


@AVG_POOL.set_gradient
def _avg_pool_grad(op, grad):
    shape = shape_ops.shape(op.inputs[0], out_type=dtypes.int32)
    return [apply_op("AvgPoolGrad", [shape, grad], _window_attrs(op), name="AvgPoolGrad")]


@AVG_POOL_GRAD.set_gradient
def _avg_pool_grad_grad(op, grad):
    return [None, apply_op("AvgPool", [grad], _window_attrs(op), name="AvgPool")]


def _pool(op_type, value, ksize, strides, padding, data_format, name, input):  # noqa: A002
    if value is not None and input is not None:
        raise ValueError("pass only one of value= and input=")
    value = value if value is not None else input
    if value is None or ksize is None or strides is None or padding is None:
        raise TypeError(f"{op_type} needs value, ksize, strides and padding")
    data_format = data_format or "NHWC"
    attrs = {"ksize": expand_spatial(ksize, data_format, "ksize"),
             "strides": expand_spatial(strides, data_format, "strides"), "data_format": data_format}
    if op_type == "MaxPool":
        attrs["padding"], attrs["explicit_paddings"] = padding_attrs(padding)
    elif not isinstance(padding, str):
        raise TypeError(f"avg_pool: padding must be 'SAME' or 'VALID' (TF's average pooling takes no explicit "
                        f"padding; pad with tf.pad), got {padding!r}")
    else:
        attrs["padding"] = padding
    return apply_op(op_type, [convert_to_tensor(value)], attrs, name=name or op_type)


def max_pool(value=None, ksize=None, strides=None, padding=None, data_format="NHWC", name=None,
             input=None):  # noqa: A002 - TF's name
    """The maximum over each ``ksize`` window of a 4-D tensor; ``padding`` may also be 4 [before, after] pairs
    (spatial only, each smaller than the window), as in TF."""
    return _pool("MaxPool", value, ksize, strides, padding, data_format, name, input)


def avg_pool(value=None, ksize=None, strides=None, padding=None, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """The mean over each ``ksize`` window; SAME padding's padded cells are not counted, as in TF."""
    return _pool("AvgPool", value, ksize, strides, padding, data_format, name, input)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return max_pool(input, ksize, strides, padding, data_format, name)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return avg_pool(input, ksize, strides, padding, data_format, name)
