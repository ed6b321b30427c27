"""3-D convolution and pooling over [batch, depth, height, width, channels] ("NDHWC") or channels-first ("NCDHW")
volumes: TF's Conv3D with Conv3DBackpropInputV2/FilterV2, MaxPool3D and AvgPool3D with their gradient ops."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value_as_shape
from tensorweave.ops.conv_family import attrs_of, shape_of, wire_convolution
from tensorweave.ops.window_geometry import window_geometry

DEFS = OpDefList()

__all__ = ["avg_pool3d", "conv3d", "conv3d_backprop_filter_v2", "conv3d_transpose", "max_pool3d"]

_FORMAT = "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'"
_CONV_ATTRS = ["T: {float16, float32, float64}", "strides: list(int) >= 5", "padding: {'SAME', 'VALID'}", _FORMAT,
               "dilations: list(int) = [1, 1, 1, 1, 1]"]
_POOL_ATTRS = ["ksize: list(int) >= 5", "strides: list(int) >= 5", "padding: {'SAME', 'VALID'}", _FORMAT,
               "T: {float16, float32, float64}"]

CONV3D = DEFS.define("Conv3D", inputs=["input: T", "filter: T"], outputs=["output: T"], attrs=_CONV_ATTRS,
                     is_intra_op_parallel=True, doc="Cross-correlates a 5-D input with a [d, h, w, in, out] filter.")
CONV3D_BACKPROP_INPUT = DEFS.define(
    "Conv3DBackpropInputV2", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"], outputs=["output: T"],
    attrs=_CONV_ATTRS, is_intra_op_parallel=True, doc="The gradient of Conv3D with respect to its input.")
CONV3D_BACKPROP_FILTER = DEFS.define(
    "Conv3DBackpropFilterV2", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"], outputs=["output: T"],
    attrs=_CONV_ATTRS, is_intra_op_parallel=True, doc="The gradient of Conv3D with respect to its filter.")
MAX_POOL3D = DEFS.define("MaxPool3D", inputs=["input: T"], outputs=["output: T"], attrs=_POOL_ATTRS,
                         doc="The maximum of each 3-D window.")
AVG_POOL3D = DEFS.define("AvgPool3D", inputs=["input: T"], outputs=["output: T"], attrs=_POOL_ATTRS,
                         doc="The mean of each 3-D window's valid (non-padding) elements.")
MAX_POOL3D_GRAD = DEFS.define(
    "MaxPool3DGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"], outputs=["output: T"],
    attrs=_POOL_ATTRS, doc="Routes each 3-D window's gradient to its (first) maximum.")
MAX_POOL3D_GRAD_GRAD = DEFS.define(
    "MaxPool3DGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"], outputs=["output: T"],
    attrs=_POOL_ATTRS, doc="Picks, for each 3-D window, the gradient at its (first) maximum.")
AVG_POOL3D_GRAD = DEFS.define(
    "AvgPool3DGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"], attrs=_POOL_ATTRS,
    doc="Spreads each 3-D window's gradient evenly over its valid elements.")


def spatial_axes_3d(data_format):
    if data_format == "NDHWC":
        return 1, 2, 3
    if data_format == "NCDHW":
        return 2, 3, 4
    raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")


def channel_axis_3d(data_format):
    return 4 if data_format == "NDHWC" else 1


def spatial_params_3d(values, data_format, what):
    """The (depth, height, width) entries of a 5-element attr; TF requires 1 in the batch and channel entries."""
    values = [int(v) for v in values]
    if len(values) != 5:
        raise ValueError(f"{what} must have 5 elements ({data_format} order), got {values}")
    if values[0] != 1 or values[channel_axis_3d(data_format)] != 1:
        raise ValueError(f"{what}={values}: {what} in the batch and channel dimensions must be 1 "
                         f"(data_format {data_format})")
    return tuple(values[a] for a in spatial_axes_3d(data_format))


def expand_spatial_3d(value, data_format, what):
    """An int, 3 ints (depth, height, width) or 5 ints, as 5 ints in ``data_format``'s order."""
    value = [int(value)] * 3 if isinstance(value, int) else [int(v) for v in value]
    if len(value) == 1:
        value = value * 3
    if len(value) == 3:
        return [1, *value, 1] if data_format == "NDHWC" else [1, 1, *value]
    if len(value) == 5:
        return value
    raise ValueError(f"{what} must be an int or a list of 1, 3 or 5 ints, got {value}")


def _window_output_shape(x, window, op, out_channels):
    fmt = op.get_attr("data_format")
    strides = spatial_params_3d(op.get_attr("strides"), fmt, "strides")
    dilations = (spatial_params_3d(op.get_attr("dilations"), fmt, "dilations") if "dilations" in op.op_def.attrs
                 else (1, 1, 1))
    out = list(x)
    out[channel_axis_3d(fmt)] = out_channels
    for axis, size, stride, dilation in zip(spatial_axes_3d(fmt), window, strides, dilations):
        if x[axis] is not None and size is not None:
            out[axis] = window_geometry(x[axis], size, stride, dilation, op.get_attr("padding"))[0]
        else:
            out[axis] = None
    return tensor_shape.TensorShape(out)


def conv3d_output_shape(input_shape, filter_shape, op):
    x = tensor_shape.as_shape(input_shape).with_rank(5).as_list()
    f = tensor_shape.as_shape(filter_shape).with_rank(5).as_list()
    in_channels = x[channel_axis_3d(op.get_attr("data_format"))]
    if in_channels is not None and f[3] is not None and in_channels != f[3]:
        raise ValueError(f"{op.name}: input depth {in_channels} does not match the filter's in_channels {f[3]} "
                         f"(filter shape is [depth, height, width, in_channels, out_channels])")
    return _window_output_shape(x, f[:3], op, f[4])


def pool3d_output_shape(input_shape, op):
    x = tensor_shape.as_shape(input_shape).with_rank(5).as_list()
    fmt = op.get_attr("data_format")
    return _window_output_shape(x, spatial_params_3d(op.get_attr("ksize"), fmt, "ksize"), op,
                                x[channel_axis_3d(fmt)])


def _check(op, want, got, what):
    if not want.is_compatible_with(got.shape):
        raise ValueError(f"{op.name}: {what} has shape {got.shape}, but the forward op's output has shape {want}")


@CONV3D.set_shape_fn
def _conv3d_shape(op):
    return conv3d_output_shape(op.inputs[0].shape, op.inputs[1].shape, op)


@MAX_POOL3D.set_shape_fn
@AVG_POOL3D.set_shape_fn
def _pool3d_shape(op):
    return pool3d_output_shape(op.inputs[0].shape, op)


@MAX_POOL3D_GRAD.set_shape_fn
def _max_pool3d_grad_shape(op):
    _check(op, pool3d_output_shape(op.inputs[0].shape, op), op.inputs[2], "grad")
    return op.inputs[0].shape.with_rank(5)


@MAX_POOL3D_GRAD_GRAD.set_shape_fn
def _max_pool3d_grad_grad_shape(op):
    _check(op, op.inputs[0].shape.with_rank(5), op.inputs[2], "grad")
    return pool3d_output_shape(op.inputs[0].shape, op)


@AVG_POOL3D_GRAD.set_shape_fn
def _avg_pool3d_grad_shape(op):
    input_shape = constant_value_as_shape(op.inputs[0]).with_rank(5)
    _check(op, pool3d_output_shape(input_shape, op), op.inputs[1], "grad")
    return input_shape


_CONV_NAMES = ("strides", "padding", "data_format", "dilations")
_POOL_NAMES = ("ksize", "strides", "padding", "data_format")


wire_convolution(CONV3D, CONV3D_BACKPROP_INPUT, CONV3D_BACKPROP_FILTER, conv3d_output_shape, 5, _CONV_NAMES)


@MAX_POOL3D.set_gradient
def _max_pool3d_grad(op, grad):
    return [apply_op("MaxPool3DGrad", [op.inputs[0], op.outputs[0], grad], attrs_of(op, _POOL_NAMES),
                     name="MaxPool3DGrad")]


@MAX_POOL3D_GRAD.set_gradient
def _max_pool3d_grad_grad(op, grad):
    # the routing is piecewise constant in orig_input/orig_output, so only `grad` gets a gradient
    orig_input, orig_output, _ = op.inputs
    return [None, None, apply_op("MaxPool3DGradGrad", [orig_input, orig_output, grad], attrs_of(op, _POOL_NAMES),
                                 name="MaxPool3DGradGrad")]


@MAX_POOL3D_GRAD_GRAD.set_gradient
def _max_pool3d_grad_grad_grad(op, grad):
    orig_input, orig_output, _ = op.inputs
    return [None, None, apply_op("MaxPool3DGrad", [orig_input, orig_output, grad], attrs_of(op, _POOL_NAMES),
                                 name="MaxPool3DGrad")]


@AVG_POOL3D.set_gradient
def _avg_pool3d_grad(op, grad):
    return [apply_op("AvgPool3DGrad", [shape_of(op.inputs[0]), grad], attrs_of(op, _POOL_NAMES),
                     name="AvgPool3DGrad")]


@AVG_POOL3D_GRAD.set_gradient
def _avg_pool3d_grad_grad(op, grad):
    return [None, apply_op("AvgPool3D", [grad], attrs_of(op, _POOL_NAMES), name="AvgPool3D")]


def _conv_attrs(strides, padding, data_format, dilations):
    data_format = data_format or "NDHWC"
    return {"strides": expand_spatial_3d(strides, data_format, "strides"), "padding": padding,
            "data_format": data_format, "dilations": expand_spatial_3d(dilations or 1, data_format, "dilations")}


def _sizes(sizes):
    return sizes if hasattr(sizes, "op") else convert_to_tensor(sizes, dtype=dtypes.int32)


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC", dilations=(1, 1, 1, 1, 1),  # noqa: A002
           name=None, filters=None):
    """3-D convolution of a 5-D ``input`` with a ``[d, h, w, in, out]`` filter; SAME puts the odd padding after."""
    filter = filter if filter is not None else filters  # noqa: A001
    if filter is None or strides is None or padding is None:
        raise TypeError("conv3d needs input, filter, strides and padding")
    return apply_op("Conv3D", [input, filter], _conv_attrs(strides, padding, data_format, dilations),
                    name=name or "Conv3D")


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding, data_format="NDHWC",  # noqa: A002
                              dilations=(1, 1, 1, 1, 1), name=None):
    return apply_op("Conv3DBackpropFilterV2", [input, _sizes(filter_sizes), out_backprop],
                    _conv_attrs(strides, padding, data_format, dilations), name=name or "Conv3DBackpropFilterV2")


def conv3d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NDHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The transpose of ``conv3d``: ``filter`` is ``[d, h, w, output_channels, in_channels]``."""
    value = value if value is not None else input
    filter = filter if filter is not None else filters  # noqa: A001
    if value is None or filter is None or output_shape is None or strides is None:
        raise TypeError("conv3d_transpose needs value, filter, output_shape and strides")
    return apply_op("Conv3DBackpropInputV2", [_sizes(output_shape), filter, value],
                    _conv_attrs(strides, padding, data_format, dilations), name=name or "conv3d_transpose")


def _pool3d(op_type, input, ksize, strides, padding, data_format, name):  # noqa: A002
    data_format = data_format or "NDHWC"
    attrs = {"ksize": expand_spatial_3d(ksize, data_format, "ksize"),
             "strides": expand_spatial_3d(strides, data_format, "strides"), "padding": padding,
             "data_format": data_format}
    return apply_op(op_type, [convert_to_tensor(input)], attrs, name=name or op_type)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The maximum over each ``ksize`` window of a 5-D tensor."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """The mean over each ``ksize`` window; SAME padding's padded cells are not counted, as in TF."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)
