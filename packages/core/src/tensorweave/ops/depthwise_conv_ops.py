"""Depthwise 2-D convolution (TF's DepthwiseConv2dNative and its two backward ops), and the convolutions built on
it and on Conv2D: ``depthwise_conv2d``, ``separable_conv2d`` and ``atrous_conv2d``.

A depthwise filter is ``[h, w, in_channels, multiplier]``: each input channel ``c`` is convolved with its own
``multiplier`` filters, giving output channels ``c * multiplier + m`` (TF's order).
"""

from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.flops import input_dims, num_elements
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import conv_ops, convolution_ops
from tensorweave.ops.conv_family import wire_convolution

DEFS = OpDefList()

__all__ = ["atrous_conv2d", "atrous_conv2d_transpose", "depthwise_conv2d", "depthwise_conv2d_backprop_filter", "depthwise_conv2d_backprop_input",
           "depthwise_conv2d_native", "depthwise_conv2d_native_backprop_filter",
           "depthwise_conv2d_native_backprop_input", "separable_conv2d"]

_ATTRS = ["T: {float16, float32, float64}", "strides: list(int)", "padding: {'SAME', 'VALID', 'EXPLICIT'}",
          "explicit_paddings: list(int) = []", "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
          "dilations: list(int) = [1, 1, 1, 1]"]


def _flops(node):
    """Two operations per output element and filter tap (height x width)."""
    filt = input_dims(node, 1)
    if filt is None or len(filt) != 4:
        return None
    return 2 * num_elements(node.output_shapes[0]) * filt[0] * filt[1]


DEPTHWISE = DEFS.define("DepthwiseConv2dNative", inputs=["input: T", "filter: T"], outputs=["output: T"],
                        attrs=_ATTRS, flops_fn=_flops, is_intra_op_parallel=True,
                        doc="Convolves each input channel with its own [h, w] filters ([h, w, in, multiplier]).")
DEPTHWISE_BACKPROP_INPUT = DEFS.define(
    "DepthwiseConv2dNativeBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=_ATTRS, is_intra_op_parallel=True,
    doc="The gradient of DepthwiseConv2dNative with respect to its input.")
DEPTHWISE_BACKPROP_FILTER = DEFS.define(
    "DepthwiseConv2dNativeBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"], attrs=_ATTRS, is_intra_op_parallel=True,
    doc="The gradient of DepthwiseConv2dNative with respect to its filter.")


def depthwise_output_shape(input_shape, filter_shape, op):
    """Conv2D's output shape for a filter with ``in * multiplier`` output channels."""
    f = tensor_shape.as_shape(filter_shape).with_rank(4).as_list()
    out_channels = f[2] * f[3] if f[2] is not None and f[3] is not None else None
    return conv_ops.conv_output_shape(input_shape, f[:3] + [out_channels], op)


@DEPTHWISE.set_shape_fn
def _depthwise_shape(op):
    return depthwise_output_shape(op.inputs[0].shape, op.inputs[1].shape, op)


wire_convolution(DEPTHWISE, DEPTHWISE_BACKPROP_INPUT, DEPTHWISE_BACKPROP_FILTER, depthwise_output_shape, 4,
                 ("strides", "padding", "explicit_paddings", "data_format", "dilations"))


def _apply(op_type, inputs, attrs, name=None):
    return apply_op(op_type, inputs, attrs, name=name or op_type)


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC", dilations=(1, 1, 1, 1),  # noqa: A002
                            name=None):
    """TF's raw depthwise op: ``filter`` is ``[h, w, in, multiplier]``, the output has ``in * multiplier``
    channels; ``padding`` may also be 4 [before, after] pairs, as in conv2d."""
    return _apply("DepthwiseConv2dNative", [input, filter], conv_ops._attrs(strides, padding, data_format, dilations),
                  name or "DepthwiseConv2dNative")


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                                           data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    return _apply("DepthwiseConv2dNativeBackpropInput", [conv_ops._sizes(input_sizes), filter, out_backprop],
                  conv_ops._attrs(strides, padding, data_format, dilations), name)


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                                            data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    return _apply("DepthwiseConv2dNativeBackpropFilter", [input, conv_ops._sizes(filter_sizes), out_backprop],
                  conv_ops._attrs(strides, padding, data_format, dilations), name)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input  # TF1's tf.nn has both names
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def _rate(rate, dilations):
    """TF1's ``rate`` (2 ints or one) and TF2's ``dilations`` are two names for the same spatial dilation."""
    if rate is not None and dilations is not None:
        raise ValueError("pass only one of rate= and dilations=")
    rate = rate if rate is not None else dilations
    if rate is None:
        return 1
    rate = [int(r) for r in ([rate] if isinstance(rate, int) else rate)]
    if any(r < 1 for r in rate):
        raise ValueError(f"rate (dilation) must be positive, got {rate}")
    return rate


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,  # noqa: A002
                     dilations=None):
    """Depthwise 2-D convolution, TF1's ``tf.nn.depthwise_conv2d``: ``rate`` dilates the filter (op "depthwise"
    under the ``name`` scope, as TF names it)."""
    with graph_mod.name_scope(name, "depthwise", [input, filter]) as scope:
        return _apply("DepthwiseConv2dNative", [input, filter],
                      conv_ops._attrs(strides, padding, data_format, _rate(rate, dilations)), scope)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None, dilations=None):
    """A depthwise convolution (``strides``, ``rate``) followed by a 1x1 convolution with ``pointwise_filter``
    (``[1, 1, in * multiplier, out]``), as TF1's ``tf.nn.separable_conv2d``."""
    with graph_mod.name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        depthwise_filter = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        p = pointwise_filter.shape.with_rank(4).as_list()
        d = depthwise_filter.shape.with_rank(4).as_list()
        if p[0] not in (1, None) or p[1] not in (1, None):
            raise ValueError(f"separable_conv2d: pointwise_filter must be [1, 1, in * multiplier, out], got shape {p}")
        if None not in (p[2], d[2], d[3]) and p[2] != d[2] * d[3]:
            raise ValueError(f"separable_conv2d: pointwise_filter's in_channels {p[2]} must be the depthwise "
                             f"output's channels {d[2]} * {d[3]} = {d[2] * d[3]}")
        depthwise = _apply("DepthwiseConv2dNative", [input, depthwise_filter],
                           conv_ops._attrs(strides, padding, data_format, _rate(rate, dilations)), "depthwise")
        return _apply("Conv2D", [depthwise, pointwise_filter], conv_ops._attrs(1, "VALID", data_format, 1),
                      scope)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """Dilated ("atrous") 2-D convolution with stride 1: ``convolution`` with ``dilation_rate=[rate, rate]``, which
    TF1 builds from SpaceToBatchND, a plain Conv2D and BatchToSpaceND."""
    if not isinstance(rate, int) or rate < 1:
        raise ValueError(f"atrous_conv2d: rate must be a positive int, got {rate!r}")
    return convolution_ops.convolution(value, filters, padding, dilation_rate=[rate, rate], name=name)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """The transpose of ``atrous_conv2d`` (``filters`` ``[h, w, out_channels, in_channels]``): conv2d_transpose
    with ``dilations=rate`` and stride 1."""
    if not isinstance(rate, int) or rate < 1:
        raise ValueError(f"atrous_conv2d_transpose: rate must be a positive int, got {rate!r}")
    with graph_mod.name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]) as scope:
        return conv_ops.conv2d_transpose(value, filters, output_shape, [1, 1, 1, 1], padding,
                                         dilations=[1, rate, rate, 1], name=scope)
