"""TF1's other convolution layers: Conv1D, Conv3D, Conv2DTranspose, Conv3DTranspose, SeparableConv1D and
SeparableConv2D (Conv2D is in ``core.py``), with Keras' variable names (``kernel``, ``bias``,
``depthwise_kernel``, ``pointwise_kernel``).

1-D layers run the 2-D ops on an inserted height of 1, as TF does; ``padding="causal"`` (1-D only) pads the start
of the sequence so each output sees only earlier steps.
"""

from tensorweave.framework import tensor_shape
from tensorweave.layers.core import Layer, _data_format
from tensorweave.ops import (
    concat_split_ops, conv3d_ops, conv_ops, depthwise_conv_ops, init_ops, nn_ops, pad_tile_ops, shape_ops,
)

__all__ = ["Conv1D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D", "conv1d",
           "conv2d_transpose", "conv3d", "conv3d_transpose", "separable_conv1d", "separable_conv2d"]


def _tuple(value, rank, what):
    values = (value,) * rank if isinstance(value, int) else tuple(value)
    if len(values) != rank or not all(int(v) == v and v > 0 for v in values):
        raise ValueError(f"{what} must be a positive int or a tuple of {rank} of them, got {value!r}")
    return tuple(int(v) for v in values)


def _padding(padding, rank):
    allowed = ("valid", "same", "causal") if rank == 1 else ("valid", "same")
    if padding.lower() not in allowed:
        raise ValueError(f"padding must be one of {allowed}, got {padding!r}")
    return padding.lower()


class _Conv(Layer):
    """What every convolution layer shares: arguments, the channel count, bias and activation."""

    def __init__(self, rank, filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                 bias_initializer, bias_regularizer, bias_constraint, trainable, name, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.rank = rank
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, rank, "kernel_size")
        self.strides = _tuple(strides, rank, "strides")
        self.padding = _padding(padding, rank)
        self.data_format = data_format
        self.channels_first = _data_format(data_format) == "NCHW"
        self.dilation_rate = _tuple(dilation_rate, rank, "dilation_rate")
        self.activation, self.use_bias = activation, use_bias
        self.bias_initializer, self.bias_regularizer, self.bias_constraint = (bias_initializer, bias_regularizer,
                                                                              bias_constraint)
        self.bias = None

    def _channels(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape).with_rank(self.rank + 2)
        channels = input_shape[1 if self.channels_first else -1].value
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs to `{type(self).__name__}` should be defined. "
                             f"Found shape {input_shape}.")
        return channels

    def _build_bias(self):
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _finish(self, outputs):
        if self.use_bias:
            if self.channels_first and outputs.shape.ndims != 4:
                outputs = outputs + shape_ops.reshape(self.bias, [1, self.filters] + [1] * self.rank)
            else:
                outputs = nn_ops.bias_add(outputs, self.bias, data_format="NCHW" if self.channels_first else "NHWC")
        return self.activation(outputs) if self.activation is not None else outputs

    def _causal_pad(self, inputs):
        """Pads (kernel - 1) * dilation steps before the sequence, for padding="causal"."""
        amount = self.dilation_rate[0] * (self.kernel_size[0] - 1)
        pads = [[0, 0], [0, 0], [amount, 0]] if self.channels_first else [[0, 0], [amount, 0], [0, 0]]
        return pad_tile_ops.pad(inputs, pads)

    def _op_padding(self):
        return "VALID" if self.padding == "causal" else self.padding.upper()


class Conv1D(_Conv):
    """1-D convolution with a ``(kernel_size, in_channels, filters)`` kernel, then bias and activation."""

    _base_name = "conv1d"

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, bias_regularizer, bias_constraint, trainable, name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.kernel_initializer, self.kernel_regularizer = kernel_initializer, kernel_regularizer
        self.kernel_constraint = kernel_constraint
        self.kernel = None

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", [self.kernel_size[0], self._channels(input_shape), self.filters],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self._build_bias()

    def call(self, inputs):
        if self.padding == "causal":
            inputs = self._causal_pad(inputs)
        outputs = conv_ops.conv1d(inputs, self.kernel, stride=self.strides[0], padding=self._op_padding(),
                                  data_format="NCW" if self.channels_first else "NWC",
                                  dilations=self.dilation_rate[0])
        return self._finish(outputs)


def _deconv_length(size, kernel, stride, dilation, padding, output_padding):
    """Keras' deconv_output_length: the input length a convolution would map to ``size``."""
    if size is None:
        return None
    kernel = (kernel - 1) * dilation + 1
    if output_padding is None:
        return size * stride + max(kernel - stride, 0) if padding == "valid" else size * stride
    pad = kernel // 2 if padding == "same" else 0
    return (size - 1) * stride + kernel - 2 * pad + output_padding


class _ConvTranspose(_Conv):
    """The transpose of a convolution ("deconvolution"), kernel ``kernel_size + (filters, in_channels)``: each
    input cell spreads ``strides`` apart over the output."""

    def __init__(self, rank, filters, kernel_size, strides, padding, data_format, activation, use_bias,
                 kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                 kernel_constraint, bias_constraint, trainable, name, output_padding, dilation_rate, **kwargs):
        super().__init__(rank, filters, kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, bias_constraint, trainable, name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.output_padding = None if output_padding is None else _tuple(output_padding, rank, "output_padding")
        if self.output_padding is not None and any(p >= s for p, s in zip(self.output_padding, self.strides)):
            raise ValueError(f"{type(self).__name__}: output_padding {self.output_padding} must be smaller than the "
                             f"strides {self.strides}")
        self.kernel_initializer, self.kernel_regularizer = kernel_initializer, kernel_regularizer
        self.kernel_constraint = kernel_constraint
        self.kernel = None

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [self.filters, self._channels(input_shape)],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self._build_bias()

    def call(self, inputs):
        first = 2 if self.channels_first else 1
        dynamic = shape_ops.shape(inputs)
        static = inputs.shape.with_rank(self.rank + 2).as_list()
        paddings = self.output_padding or (None,) * self.rank
        sizes = [_deconv_length(static[first + i] if static[first + i] is not None else dynamic[first + i],
                                self.kernel_size[i], self.strides[i], self.dilation_rate[i], self.padding,
                                paddings[i]) for i in range(self.rank)]
        shape = [dynamic[0], self.filters, *sizes] if self.channels_first else [dynamic[0], *sizes, self.filters]
        transpose = conv_ops.conv2d_transpose if self.rank == 2 else conv3d_ops.conv3d_transpose
        fmt = {(2, False): "NHWC", (2, True): "NCHW", (3, False): "NDHWC", (3, True): "NCDHW"}[
            (self.rank, self.channels_first)]
        outputs = transpose(inputs, self.kernel, concat_split_ops.stack(shape), strides=list(self.strides),
                            padding=self.padding.upper(), data_format=fmt, dilations=list(self.dilation_rate))
        known = [s if isinstance(s, int) else None for s in sizes]
        outputs.set_shape([static[0], self.filters, *known] if self.channels_first else
                          [static[0], *known, self.filters])
        return self._finish(outputs)


class Conv2DTranspose(_ConvTranspose):
    _base_name = "conv2d_transpose"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 output_padding=None, dilation_rate=(1, 1), **kwargs):
        # TF1's positional order; output_padding and dilation_rate are Keras' later keywords
        super().__init__(2, filters, kernel_size, strides, padding, data_format, activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, trainable, name, output_padding,
                         dilation_rate, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    _base_name = "conv3d_transpose"

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                 activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 output_padding=None, dilation_rate=(1, 1, 1), **kwargs):
        super().__init__(3, filters, kernel_size, strides, padding, data_format, activation, use_bias,
                         kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         activity_regularizer, kernel_constraint, bias_constraint, trainable, name, output_padding,
                         dilation_rate, **kwargs)


class Conv3D(_Conv):
    """3-D convolution with a ``kernel_size + (in_channels, filters)`` kernel, then bias and activation."""

    _base_name = "conv3d"

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1, 1), activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(3, filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         bias_initializer, bias_regularizer, bias_constraint, trainable, name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.kernel_initializer, self.kernel_regularizer = kernel_initializer, kernel_regularizer
        self.kernel_constraint = kernel_constraint
        self.kernel = None

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [self._channels(input_shape), self.filters],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self._build_bias()

    def call(self, inputs):
        fmt = "NCDHW" if self.channels_first else "NDHWC"
        outputs = conv3d_ops.conv3d(inputs, self.kernel, strides=list(self.strides), padding=self.padding.upper(),
                                    data_format=fmt, dilations=list(self.dilation_rate))
        return self._finish(outputs)


class _SeparableConv(_Conv):
    """A depthwise convolution (``depth_multiplier`` filters per input channel) then a 1x1 pointwise one."""

    def __init__(self, rank, filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                 activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                 depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                 depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, **kwargs):
        super().__init__(rank, filters, kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, bias_constraint, trainable, name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer, self.pointwise_initializer = depthwise_initializer, pointwise_initializer
        self.depthwise_regularizer, self.pointwise_regularizer = depthwise_regularizer, pointwise_regularizer
        self.depthwise_constraint, self.pointwise_constraint = depthwise_constraint, pointwise_constraint
        self.depthwise_kernel = self.pointwise_kernel = None

    def build(self, input_shape):
        channels = self._channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", list(self.kernel_size) + [channels, self.depth_multiplier],
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1] * self.rank + [channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self._build_bias()

    def call(self, inputs):
        depthwise, pointwise = self.depthwise_kernel, self.pointwise_kernel
        strides, dilations = self.strides, self.dilation_rate
        fmt = "NCHW" if self.channels_first else "NHWC"
        if self.padding == "causal":
            inputs = self._causal_pad(inputs)
        if self.rank == 1:  # as TF: a height of 1 before the width
            spatial = 2 if self.channels_first else 1
            inputs = shape_ops.expand_dims(inputs, spatial)
            depthwise, pointwise = shape_ops.expand_dims(depthwise, 0), shape_ops.expand_dims(pointwise, 0)
            strides, dilations = (1,) + strides, (1,) + dilations
        full_strides = [1, 1, *strides] if self.channels_first else [1, *strides, 1]
        outputs = depthwise_conv_ops.separable_conv2d(inputs, depthwise, pointwise, full_strides,
                                                      self._op_padding(), rate=list(dilations), data_format=fmt)
        if self.rank == 1:
            outputs = shape_ops.squeeze(outputs, [spatial])
        return self._finish(outputs)


class SeparableConv2D(_SeparableConv):
    _base_name = "separable_conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer=None, pointwise_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                         activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                         depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                         depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, **kwargs)


class SeparableConv1D(_SeparableConv):
    _base_name = "separable_conv1d"

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=init_ops.zeros_initializer(),
                 depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                         activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                         depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                         depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, **kwargs)


def _layer_function(cls, doc):
    """TF1's functional form of ``cls``: ``f(inputs, *args, name=None, reuse=None, **kwargs)``."""
    def function(inputs, *args, name=None, reuse=None, **kwargs):
        return cls(*args, name=name, _reuse=reuse, **kwargs)(inputs)
    function.__name__ = function.__qualname__ = doc.split("`")[1]
    function.__doc__ = doc
    return function


conv1d = _layer_function(Conv1D, "`conv1d`: a Conv1D layer applied to ``inputs``; variables ``<name>/kernel``, "
                                 "``/bias``.")
conv2d_transpose = _layer_function(Conv2DTranspose, "`conv2d_transpose`: a Conv2DTranspose layer applied to "
                                                    "``inputs``; kernel ``[kh, kw, filters, in]``.")
conv3d = _layer_function(Conv3D, "`conv3d`: a Conv3D layer applied to ``inputs``; kernel ``[kd, kh, kw, in, "
                                 "filters]``.")
conv3d_transpose = _layer_function(Conv3DTranspose, "`conv3d_transpose`: a Conv3DTranspose layer applied to "
                                                    "``inputs``; kernel ``[kd, kh, kw, filters, in]``.")
separable_conv1d = _layer_function(SeparableConv1D, "`separable_conv1d`: a SeparableConv1D layer applied to "
                                                    "``inputs``.")
separable_conv2d = _layer_function(SeparableConv2D, "`separable_conv2d`: a SeparableConv2D layer applied to "
                                                    "``inputs``; variables ``depthwise_kernel``, "
                                                    "``pointwise_kernel``, ``bias``.")
