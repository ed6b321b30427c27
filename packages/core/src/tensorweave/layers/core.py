"""The base Layer and TF1's core layers: Dense, Conv2D, max and average pooling, Flatten and Dropout."""

import numpy as np

from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_ops, concat_split_ops, cond as cond_ops, conv_ops, init_ops, matmul_ops, nn_ops, pooling_ops, shape_ops,
    transpose_ops, variable_scope as vs,
)

__all__ = ["AveragePooling2D", "Conv2D", "Dense", "Dropout", "Flatten", "Layer", "MaxPooling2D", "average_pooling2d",
           "conv2d", "dense", "dropout", "flatten", "max_pooling2d"]


def _pair(value, what):
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) and v > 0 for v in pair):
        raise ValueError(f"{what} must be a positive int or a pair of them, got {value!r}")
    return tuple(int(v) for v in pair)


def _padding(padding):
    if padding.lower() not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    return padding.upper()


def _data_format(data_format):
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"data_format must be 'channels_last' or 'channels_first', got {data_format!r}")
    return "NHWC" if data_format == "channels_last" else "NCHW"


class Layer:
    """Base layer: ``build(input_shape)`` makes the variables once, ``call(inputs)`` makes the ops."""

    _base_name = "layer"

    def __init__(self, trainable=True, name=None, dtype=None, activity_regularizer=None, _reuse=None,
                 input_shape=None, batch_input_shape=None, batch_size=None, _scope=None):
        # input_shape, batch_input_shape and batch_size are TF1's for the first layer of a Keras model; a layer
        # called on a tensor takes that tensor's shape, in TF1 as here, so they are accepted and ignored
        self.trainable = trainable
        self._name = name
        self.dtype = dtype
        self.activity_regularizer = activity_regularizer
        self._reuse = _reuse
        self._scope = _scope  # a VariableScope to build in instead of a new one (contrib.layers passes its own)
        self.built = False
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._losses = []

    @property
    def name(self):
        return self._name if self._scope is None else self._scope.name.split("/")[-1]

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    @property
    def losses(self):
        return list(self._losses)

    def add_loss(self, loss):
        self._losses.append(loss)
        graph_mod.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=True,
                   constraint=None, partitioner=None):
        variable = vs.get_variable(name, shape=shape, dtype=dtype or self.dtype, initializer=initializer,
                                   regularizer=regularizer, trainable=trainable and self.trainable,
                                   constraint=constraint, partitioner=partitioner)
        shards = list(variable) if partitioner is not None else [variable]
        (self._trainable_weights if trainable and self.trainable else self._non_trainable_weights).extend(shards)
        return variable

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def _set_scope(self):
        if self._scope is None:
            if self._reuse:
                with vs.variable_scope(self._name or self._base_name) as scope:
                    self._scope = scope
            else:
                with vs.variable_scope(self._name, default_name=self._base_name) as scope:
                    self._scope = scope

    def __call__(self, inputs, *args, **kwargs):
        inputs = convert_to_tensor(inputs)
        if self.dtype is None:
            self.dtype = inputs.dtype
        self._set_scope()
        with vs.variable_scope(self._scope, reuse=self._reuse, auxiliary_name_scope=False) as scope:
            with graph_mod.name_scope(scope.original_name_scope):
                if not self.built:
                    self.build(inputs.shape)
                    self.built = True
                outputs = self.call(inputs, *args, **kwargs)
                if self.activity_regularizer is not None:
                    with graph_mod.name_scope("ActivityRegularizer"):
                        self.add_loss(self.activity_regularizer(outputs))
        return outputs

    def apply(self, inputs, *args, **kwargs):
        return self(inputs, *args, **kwargs)


class Dense(Layer):
    """``activation(inputs @ kernel + bias)``; inputs of rank > 2 are multiplied along their last axis."""

    _base_name = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        if int(units) < 1:
            raise ValueError(f"Dense needs a positive number of units, got {units}")
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.kernel = self.bias = None

    def build(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        if input_shape.ndims is None or input_shape.ndims < 2 or input_shape[-1].value is None:
            raise ValueError(f"The last dimension of the inputs to `Dense` should be defined, and the inputs of "
                             f"rank 2 or more. Found shape {input_shape}.")
        self.kernel = self.add_weight("kernel", [input_shape[-1].value, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def call(self, inputs):
        rank = inputs.shape.ndims
        if rank == 2:
            outputs = matmul_ops.matmul(inputs, self.kernel)
        else:
            flat = shape_ops.reshape(inputs, [-1, self.kernel.shape[0].value])
            outer = shape_ops.shape(inputs)[:-1]
            outputs = shape_ops.reshape(matmul_ops.matmul(flat, self.kernel),
                                        concat_split_ops.concat([outer, np.array([self.units], np.int32)], 0))
            outputs.set_shape(inputs.shape[:-1].concatenate([self.units]))
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        return self.activation(outputs) if self.activation is not None else outputs


class Conv2D(Layer):
    """2-D convolution with a ``kernel_size + (in_channels, filters)`` kernel, then bias and activation."""

    _base_name = "conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.activation, self.use_bias = activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.kernel = self.bias = None

    def _spatial(self, pair):
        return [1, *pair, 1] if self.data_format == "NHWC" else [1, 1, *pair]

    def build(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape).with_rank(4)
        channels = input_shape[-1 if self.data_format == "NHWC" else 1].value
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs to `Conv2D` should be defined. Found shape "
                             f"{input_shape}.")
        self.kernel = self.add_weight("kernel", list(self.kernel_size) + [channels, self.filters],
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def call(self, inputs):
        outputs = conv_ops.conv2d(inputs, self.kernel, strides=self._spatial(self.strides), padding=self.padding,
                                  data_format=self.data_format, dilations=self._spatial(self.dilation_rate))
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias, data_format=self.data_format)
        return self.activation(outputs) if self.activation is not None else outputs


class _Pooling2D(Layer):
    _op = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = _pair(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        spatial = (lambda p: [1, *p, 1]) if self.data_format == "NHWC" else (lambda p: [1, 1, *p])
        return getattr(pooling_ops, self._op)(inputs, ksize=spatial(self.pool_size), strides=spatial(self.strides),
                                              padding=self.padding, data_format=self.data_format)


class MaxPooling2D(_Pooling2D):
    _base_name = "max_pooling2d"
    _op = "max_pool"


class AveragePooling2D(_Pooling2D):
    _base_name = "average_pooling2d"
    _op = "avg_pool"


class Flatten(Layer):
    """[batch, ...] -> [batch, prod(...)] (channels_first inputs are first moved to channels_last order)."""

    _base_name = "flatten"

    def __init__(self, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = data_format or "channels_last"
        _data_format(self.data_format)

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.shape.ndims and inputs.shape.ndims > 2:
            inputs = transpose_ops.transpose(inputs, [0] + list(range(2, inputs.shape.ndims)) + [1])
        rest = inputs.shape[1:]
        if rest.is_fully_defined():
            return shape_ops.reshape(inputs, [-1, int(np.prod(rest.as_list(), dtype=np.int64))])
        return shape_ops.reshape(inputs, concat_split_ops.stack([shape_ops.shape(inputs)[0], -1]))


class Dropout(Layer):
    """Drops each element with probability ``rate`` (scaling the rest) when ``training``; identity otherwise."""

    _base_name = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"dropout rate must be in [0, 1), got {rate}")
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs, training=False):

        def dropped():
            return nn_ops.dropout(inputs, noise_shape=self.noise_shape, seed=self.seed, rate=self.rate)
        static = training if isinstance(training, (bool, np.bool_)) else constant_value(training)
        if static is not None:
            return dropped() if bool(static) else array_ops.identity(inputs)
        return cond_ops.cond(training, dropped, lambda: array_ops.identity(inputs))


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
          reuse=None):
    """A fully connected layer: ``activation(inputs @ kernel + bias)``; variables ``<name>/kernel``, ``/bias``."""
    return Dense(units, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name,
                 _reuse=reuse)(inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    """A 2-D convolution layer; variables ``<name>/kernel`` ([kh, kw, in, filters]) and ``<name>/bias``."""
    return Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                  kernel_constraint, bias_constraint, trainable, name, _reuse=reuse)(inputs)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling2D(pool_size, strides, padding, data_format, name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling2D(pool_size, strides, padding, data_format, name)(inputs)


def flatten(inputs, name=None, data_format="channels_last"):
    return Flatten(data_format=data_format, name=name)(inputs)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """TF1's tf.layers.dropout: only drops when ``training`` (a bool or a bool tensor) is true."""
    return Dropout(rate, noise_shape, seed, name)(inputs, training=training)
