"""contrib.layers' separable and transposed 2-D convolutions (slim's ``separable_conv2d`` and ``conv2d_transpose``),
built on tf.layers' SeparableConv2D and Conv2DTranspose as TF 1.15's contrib builds them, under contrib's names:
``SeparableConv2d/depthwise_weights``, ``/pointwise_weights``, ``/biases`` and ``Conv2d_transpose/weights``,
``/biases``."""

from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.framework.variables import model_variable
from tensorweave.contrib.layers.initializers import xavier_initializer
from tensorweave.contrib.layers.layers import (
    _WEIGHTS_AND_BIASES, _add_layer_variables, _add_to_collections, _collections, _finish, _model_variable_getter,
)
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.layers import convolutional, core
from tensorweave.ops import depthwise_conv_ops, init_ops, nn_ops, variable_scope as vs

__all__ = ["conv2d_transpose", "convolution2d_transpose", "separable_conv2d", "separable_convolution2d"]

_SEPARABLE_NAMES = {"bias": "biases", "depthwise_kernel": "depthwise_weights",
                    "pointwise_kernel": "pointwise_weights"}


def _channels_last(data_format, who):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{who}: data_format has to be either NCHW or NHWC, got {data_format!r}")
    return "channels_first" if data_format == "NCHW" else "channels_last"


@add_arg_scope
def separable_convolution2d(inputs, num_outputs, kernel_size, depth_multiplier=1, stride=1, padding="SAME",
                            data_format="NHWC", rate=1, activation_fn=nn_ops.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=xavier_initializer(),
                            pointwise_initializer=None, weights_regularizer=None,
                            biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None, reuse=None,
                            variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """A depthwise convolution (``depth_multiplier`` filters per channel), then a 1x1 one to ``num_outputs``
    channels; with ``num_outputs=None`` only the depthwise step (MobileNet's), biases over its channels."""
    channels = _channels_last(data_format, "separable_conv2d")
    with vs.variable_scope(scope, "SeparableConv2d", [inputs], reuse=reuse,
                           custom_getter=_model_variable_getter(_SEPARABLE_NAMES)) as sc:
        inputs = convert_to_tensor(inputs)
        use_bias = bool(not normalizer_fn and biases_initializer)
        if num_outputs is not None:
            layer = convolutional.SeparableConv2D(
                num_outputs, kernel_size, stride, padding, channels, rate, depth_multiplier, None, use_bias,
                weights_initializer, pointwise_initializer or weights_initializer, biases_initializer,
                weights_regularizer, weights_regularizer, biases_regularizer, trainable=trainable, name=sc.name,
                dtype=inputs.dtype.base_dtype, _scope=sc, _reuse=reuse)
            outputs = layer(inputs)
            _add_to_collections(layer.depthwise_kernel, variables_collections, "weights")
            _add_to_collections(layer.pointwise_kernel, variables_collections, "weights")
            if layer.bias is not None:
                _add_to_collections(layer.bias, variables_collections, "biases")
        else:
            kh, kw = core._pair(kernel_size, "kernel_size")
            in_channels = inputs.shape.with_rank(4)[1 if channels == "channels_first" else 3].value
            if in_channels is None:
                raise ValueError(f"separable_conv2d: the channels of {inputs.name} must be known, got shape "
                                 f"{inputs.shape}")
            weights = model_variable("depthwise_weights", [kh, kw, in_channels, depth_multiplier],
                                     dtype=inputs.dtype.base_dtype, initializer=weights_initializer,
                                     regularizer=weights_regularizer, trainable=trainable,
                                     collections=_collections(variables_collections, "weights"))
            stride_h, stride_w = core._pair(stride, "stride")
            strides = [1, 1, stride_h, stride_w] if data_format == "NCHW" else [1, stride_h, stride_w, 1]
            outputs = depthwise_conv_ops.depthwise_conv2d(inputs, weights, strides, padding,
                                                          rate=list(core._pair(rate, "rate")),
                                                          data_format=data_format)
            if use_bias:
                biases = model_variable("biases", [in_channels * depth_multiplier], dtype=inputs.dtype.base_dtype,
                                        initializer=biases_initializer, regularizer=biases_regularizer,
                                        trainable=trainable, collections=_collections(variables_collections,
                                                                                      "biases"))
                outputs = nn_ops.bias_add(outputs, biases, data_format=data_format)
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections)


separable_conv2d = separable_convolution2d


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format="NHWC",
                            activation_fn=nn_ops.relu, normalizer_fn=None, normalizer_params=None,
                            weights_initializer=xavier_initializer(), weights_regularizer=None,
                            biases_initializer=init_ops.zeros_initializer(), biases_regularizer=None, reuse=None,
                            variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """The transpose of ``conv2d``: each input pixel spreads ``stride`` apart (kernel ``[kh, kw, num_outputs,
    in]``, variables ``Conv2d_transpose/weights`` and ``/biases``)."""
    channels = _channels_last(data_format, "conv2d_transpose")
    with vs.variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse,
                           custom_getter=_model_variable_getter(_WEIGHTS_AND_BIASES)) as sc:
        inputs = convert_to_tensor(inputs)
        layer = convolutional.Conv2DTranspose(
            num_outputs, kernel_size, stride, padding, channels, None, bool(not normalizer_fn and biases_initializer),
            weights_initializer, biases_initializer, weights_regularizer, biases_regularizer, trainable=trainable,
            name=sc.name, dtype=inputs.dtype.base_dtype, _scope=sc, _reuse=reuse)
        outputs = layer(inputs)
        _add_layer_variables(layer, variables_collections)
        return _finish(outputs, normalizer_fn, normalizer_params, activation_fn, outputs_collections)


conv2d_transpose = convolution2d_transpose
