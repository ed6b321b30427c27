"""2-D convolution and its two backward ops (TF's Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter)."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.flops import input_dims, num_elements
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value_as_shape
from tensorweave.ops import shape_ops
from tensorweave.ops.conv_family import wire_convolution
from tensorweave.ops.window_geometry import (
    channel_axis, expand_spatial, padding_attrs, spatial_axes, spatial_paddings, spatial_params, window_geometry)

DEFS = OpDefList()

__all__ = ["conv1d", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose"]

_CONV_ATTRS = ["T: {float16, float32, float64}", "strides: list(int)", "use_cudnn_on_gpu: bool = True",
               "padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []",
               "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "dilations: list(int) = [1, 1, 1, 1]"]


def _conv_flops(node):
    """Two operations per output element and filter tap (height x width x input channels)."""
    filt = input_dims(node, 1)
    if filt is None or len(filt) != 4:
        return None
    return 2 * num_elements(node.output_shapes[0]) * filt[0] * filt[1] * filt[2]


def _backprop_flops(node, filt):
    """Two operations per element of the incoming gradient and filter tap (9 taps when the filter is unknown)."""
    grad = input_dims(node, 2)
    if grad is None:
        return None
    taps = filt[0] * filt[1] * filt[2] if filt is not None and len(filt) == 4 else 9
    n = 1
    for d in grad:
        n *= d
    return 2 * n * taps


CONV2D = DEFS.define("Conv2D", inputs=["input: T", "filter: T"], outputs=["output: T"], attrs=_CONV_ATTRS,
                     flops_fn=_conv_flops, is_intra_op_parallel=True,
                     doc="Cross-correlates a 4-D input with a [height, width, in, out] filter.")
CONV2D_BACKPROP_INPUT = DEFS.define(
    "Conv2DBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"], outputs=["output: T"],
    attrs=_CONV_ATTRS, flops_fn=lambda node: _backprop_flops(node, input_dims(node, 1)), is_intra_op_parallel=True,
    doc="The gradient of Conv2D with respect to its input (a transposed convolution).")
CONV2D_BACKPROP_FILTER = DEFS.define(
    "Conv2DBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"], outputs=["output: T"],
    attrs=_CONV_ATTRS, flops_fn=lambda node: _backprop_flops(node, None), is_intra_op_parallel=True,
    doc="The gradient of Conv2D with respect to its filter.")


def conv_output_shape(input_shape, filter_shape, op):
    """The static output shape of a convolution of ``input_shape`` by ``filter_shape`` under ``op``'s attrs."""
    data_format = op.get_attr("data_format")
    x = tensor_shape.as_shape(input_shape).with_rank(4).as_list()
    f = tensor_shape.as_shape(filter_shape).with_rank(4).as_list()
    strides = spatial_params(op.get_attr("strides"), data_format, "strides")
    dilations = spatial_params(op.get_attr("dilations"), data_format, "dilations")
    paddings = spatial_paddings(op.get_attr("padding"), op.get_attr("explicit_paddings"), data_format)
    in_channels = x[channel_axis(data_format)]
    if in_channels is not None and f[2] is not None and in_channels != f[2]:
        raise ValueError(f"input depth {in_channels} does not match the filter's in_channels {f[2]} "
                         f"(filter shape is [height, width, in_channels, out_channels])")
    out = [x[0], None, None, None]
    out[channel_axis(data_format)] = f[3]
    for axis, window, stride, dilation, padding in zip(spatial_axes(data_format), f[:2], strides, dilations,
                                                       paddings):
        if x[axis] is not None and window is not None:
            out[axis] = window_geometry(x[axis], window, stride, dilation, padding)[0]
    return tensor_shape.TensorShape(out)


@CONV2D.set_shape_fn
def _conv2d_shape(op):
    return conv_output_shape(op.inputs[0].shape, op.inputs[1].shape, op)


wire_convolution(CONV2D, CONV2D_BACKPROP_INPUT, CONV2D_BACKPROP_FILTER, conv_output_shape, 4,
                 ("strides", "padding", "explicit_paddings", "data_format", "dilations"))


def _apply(op_type, inputs, attrs, name=None):
    return apply_op(op_type, inputs, attrs, name=name or op_type)


def _attrs(strides, padding, data_format, dilations):
    data_format = data_format or "NHWC"
    padding, explicit_paddings = padding_attrs(padding)
    return {"strides": expand_spatial(strides, data_format, "strides"), "padding": padding,
            "explicit_paddings": explicit_paddings, "data_format": data_format,
            "dilations": expand_spatial(dilations or 1, data_format, "dilations")}


def _pick(name, value, alias, alias_name):
    if value is not None and alias is not None:
        raise ValueError(f"pass only one of {name}= and {alias_name}=")
    return value if value is not None else alias


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002 - TF's names
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """2-D convolution (cross-correlation) of a 4-D ``input`` with a ``[h, w, in, out]`` filter.

    ``strides`` and ``dilations`` follow ``data_format``; SAME padding puts the odd pixel bottom/right, as TF;
    ``padding`` may also be 4 [before, after] pairs in ``data_format``'s order (only height and width nonzero).
    """
    filter = _pick("filter", filter, filters, "filters")  # noqa: A001
    if filter is None or strides is None or padding is None:
        raise TypeError("conv2d needs input, filter, strides and padding")
    return _apply("Conv2D", [input, filter], _attrs(strides, padding, data_format, dilations), name or "Conv2D")


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None, data_format=None,
           name=None, input=None, dilations=None):  # noqa: A002
    """1-D convolution of a [batch, width, in] ("NWC") or [batch, in, width] ("NCW") tensor by a
    [width, in, out] filter: a conv2d over a height of 1, as TF does it."""
    value = _pick("value", value, input, "input")
    if value is None or filters is None or stride is None or padding is None:
        raise TypeError("conv1d needs value, filters, stride and padding")
    if not isinstance(padding, str):
        raise TypeError(f"conv1d: padding must be 'SAME' or 'VALID' (TF's conv1d takes no explicit padding; pad "
                        f"with tf.pad, or use conv2d), got {padding!r}")
    data_format = data_format or "NWC"
    if data_format not in ("NWC", "NCW", "NHWC", "NCHW"):
        raise ValueError(f"conv1d: data_format must be 'NWC' or 'NCW', got {data_format!r}")
    channels_first = data_format in ("NCW", "NCHW")
    stride, dilation = (_width_entry(v, channels_first, what) for v, what in
                        ((stride, "stride"), (dilations or 1, "dilations")))
    with graph_mod.name_scope(name, "conv1d", [value, filters]):
        spatial = 2 if channels_first else 1
        value = shape_ops.expand_dims(value, spatial)
        filters = shape_ops.expand_dims(filters, 0)
        fmt = "NCHW" if channels_first else "NHWC"
        result = _apply("Conv2D", [value, filters], _attrs([1, stride], padding, fmt, [1, dilation]))
        return shape_ops.squeeze(result, [spatial])


def _width_entry(value, channels_first, what):
    """conv1d's stride/dilation: an int, [w], or 3 ints in the data format's order."""
    if isinstance(value, int):
        return value
    value = [int(v) for v in value]
    if len(value) == 1:
        return value[0]
    if len(value) == 3:
        return value[2 if channels_first else 1]
    raise ValueError(f"conv1d: {what} must be an int or a list of 1 or 3 ints, got {value}")


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,  # noqa: A002
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1), name=None,
                          filters=None):
    """The gradient of ``conv2d`` with respect to an input of shape ``input_sizes``."""
    filter = _pick("filter", filter, filters, "filters")  # noqa: A001
    return _apply("Conv2DBackpropInput", [_sizes(input_sizes), filter, out_backprop],
                  _attrs(strides, padding, data_format, dilations), name or "Conv2DBackpropInput")


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                           data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of ``conv2d`` with respect to a filter of shape ``filter_sizes``."""
    return _apply("Conv2DBackpropFilter", [input, _sizes(filter_sizes), out_backprop],
                  _attrs(strides, padding, data_format, dilations), name or "Conv2DBackpropFilter")


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The transpose of ``conv2d`` ("deconvolution"): maps ``value`` to a tensor of ``output_shape``.

    ``filter`` is ``[h, w, output_channels, in_channels]``: the filter of the conv2d being transposed.
    """
    value = _pick("value", value, input, "input")
    filter = _pick("filter", filter, filters, "filters")  # noqa: A001
    if value is None or filter is None or output_shape is None or strides is None:
        raise TypeError("conv2d_transpose needs value, filter, output_shape and strides")
    value, filter = convert_to_tensor(value), convert_to_tensor(filter)  # noqa: A001
    output_shape = _sizes(output_shape)
    known = constant_value_as_shape(output_shape)
    axis = channel_axis(data_format or "NHWC")
    in_channels = value.shape.with_rank(4)[axis].value
    f = filter.shape.with_rank(4).as_list()
    if in_channels is not None and f[3] is not None and in_channels != f[3]:
        raise ValueError(f"conv2d_transpose: input channels {in_channels} of value do not match the filter's last "
                         f"dimension {f[3]} (filter is [height, width, output_channels, in_channels])")
    if known.ndims == 4 and known[axis].value is not None and f[2] is not None and known[axis].value != f[2]:
        raise ValueError(f"conv2d_transpose: output_shape has {known[axis].value} channels but the filter has "
                         f"{f[2]} output channels")
    return _apply("Conv2DBackpropInput", [output_shape, filter, value],
                  _attrs(strides, padding, data_format, dilations), name or "conv2d_transpose")


def _sizes(sizes):
    return convert_to_tensor(sizes, dtype=dtypes.int32) if not hasattr(sizes, "op") else sizes
