"""``tf.layers.BatchNormalization`` / ``batch_normalization``: TF1's batch normalization layer.

When training it normalizes with the batch's moments and makes two update ops for the moving mean and
variance (``moving -= (moving - batch) * (1 - momentum)``), added to ``GraphKeys.UPDATE_OPS``: run them
with the train op (``with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))``), as in
TF1. Otherwise it uses the moving statistics. ``training`` may be a Python bool or a bool tensor. As TF1's
fused path (4-D inputs normalized over the channel axis), the moving variance of 4-D inputs is updated
with Bessel's correction n/(n-1); the batch itself is normalized with the plain batch variance.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.layers.core import Layer
from tensorweave.ops import cond as cond_ops, init_ops, math_ops, normalization_ops, shape_ops, unary_math_ops

__all__ = ["BatchNormalization", "batch_normalization"]


class BatchNormalization(Layer):
    """Normalizes over every axis but ``axis`` (the features), then scales by gamma and shifts by beta."""

    _base_name = "batch_normalization"

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=init_ops.zeros_initializer(), gamma_initializer=init_ops.ones_initializer(),
                 moving_mean_initializer=init_ops.zeros_initializer(),
                 moving_variance_initializer=init_ops.ones_initializer(), beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, renorm=False,
                 renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        # TF1's arguments for batch renormalization, ghost batches and adjusted moments: refused unless left at
        # their defaults (renorm_clipping and renorm_momentum only matter with renorm)
        for argument, value in (("renorm", renorm), ("virtual_batch_size", virtual_batch_size),
                                ("adjustment", adjustment)):
            if value not in (False, None):
                raise ValueError(f"BatchNormalization({argument}={value!r}) is not supported; leave {argument} "
                                 f"at its default")
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise ValueError(f"BatchNormalization normalizes with one feature axis, got axis={axis!r}")
            axis = axis[0]
        self.axis, self.momentum, self.epsilon = int(axis), float(momentum), float(epsilon)
        self.center, self.scale, self.fused = center, scale, fused
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        self.moving_mean_initializer, self.moving_variance_initializer = (moving_mean_initializer,
                                                                          moving_variance_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.beta = self.gamma = self.moving_mean = self.moving_variance = None
        self.updates = []

    def build(self, input_shape):
        input_shape = tensor_shape.as_shape(input_shape)
        if input_shape.ndims is None:
            raise ValueError("BatchNormalization needs inputs of known rank")
        ndims = input_shape.ndims
        if not -ndims <= self.axis < ndims:
            raise ValueError(f"BatchNormalization: axis {self.axis} is out of range for inputs of rank {ndims}")
        self.axis %= ndims
        channels = input_shape[self.axis].value
        if channels is None:
            raise ValueError(f"BatchNormalization: the size of axis {self.axis} of the inputs must be known, "
                             f"got shape {input_shape}")
        param_dtype = dtypes.float32 if self.dtype in (dtypes.float16, None) else self.dtype
        if self.scale:
            self.gamma = self.add_weight("gamma", [channels], param_dtype, self.gamma_initializer,
                                         self.gamma_regularizer, constraint=self.gamma_constraint)
        if self.center:
            self.beta = self.add_weight("beta", [channels], param_dtype, self.beta_initializer, self.beta_regularizer,
                                        constraint=self.beta_constraint)
        self.moving_mean = self.add_weight("moving_mean", [channels], param_dtype, self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", [channels], param_dtype,
                                               self.moving_variance_initializer, trainable=False)

    def call(self, inputs, training=False):
        ndims = inputs.shape.ndims
        reduce_axes = [i for i in range(ndims) if i != self.axis]
        shape = [1] * ndims
        shape[self.axis] = -1

        def as_param(v):
            return None if v is None else unary_math_ops.cast(shape_ops.reshape(v, shape), inputs.dtype)

        def normalize(mean, variance):
            return normalization_ops.batch_normalization(inputs, mean, variance, as_param(self.beta),
                                                         as_param(self.gamma), self.epsilon)

        def with_moving():
            return normalize(as_param(self.moving_mean), as_param(self.moving_variance))

        if training is False:
            return with_moving()
        mean, variance = normalization_ops.moments(inputs, reduce_axes, keep_dims=True)
        if training is True:
            outputs = normalize(mean, variance)
        else:
            outputs = cond_ops.cond(convert_to_tensor(training, dtypes.bool), lambda: normalize(mean, variance),
                                    with_moving)
        batch_mean = unary_math_ops.cast(shape_ops.reshape(mean, [-1]), self.moving_mean.dtype)
        batch_variance = unary_math_ops.cast(shape_ops.reshape(variance, [-1]), self.moving_variance.dtype)
        if ndims == 4 and self.axis in (1, 3) and self.fused is not False:  # TF1's fused path
            count = unary_math_ops.cast(shape_ops.size(inputs), batch_variance.dtype) / float(
                self.moving_variance.shape[0].value)
            batch_variance = batch_variance * count / math_ops.maximum(count - 1.0, 1.0)
        decay = 1.0 - self.momentum
        if training is not True:  # a bool tensor: nothing moves when it is false
            rate, dtype = decay, self.moving_mean.dtype
            decay = cond_ops.cond(convert_to_tensor(training, dtypes.bool), lambda: convert_to_tensor(rate, dtype),
                                  lambda: convert_to_tensor(0.0, dtype))
        self.updates = []
        for scope, moving, batch in (("AssignMovingAvg", self.moving_mean, batch_mean),
                                     ("AssignMovingAvg_1", self.moving_variance, batch_variance)):
            with graph_mod.name_scope(scope):
                self.updates.append(moving.assign_sub((moving - batch) * decay, read_value=False))
        for update in self.updates:
            graph_mod.add_to_collection(GraphKeys.UPDATE_OPS, update)
        return outputs


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=init_ops.zeros_initializer(), gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(), beta_regularizer=None,
                        gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, training=False,
                        trainable=True, name=None, reuse=None, renorm=False, renorm_clipping=None,
                        renorm_momentum=0.99, fused=None, virtual_batch_size=None, adjustment=None):
    """TF1's ``tf.layers.batch_normalization``; its moving-average updates go to ``GraphKeys.UPDATE_OPS``."""
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, beta_initializer, gamma_initializer,
                               moving_mean_initializer, moving_variance_initializer, beta_regularizer,
                               gamma_regularizer, beta_constraint, gamma_constraint, renorm, renorm_clipping,
                               renorm_momentum, fused, trainable, virtual_batch_size, adjustment, name,
                               _reuse=reuse)
    return layer(inputs, training=training)
