"""TF1's 1-D and 3-D pooling layers (2-D ones are in ``core.py``). 1-D pooling over a [batch, steps, channels]
(or channels_first) sequence runs as 2-D pooling over an inserted axis of size 1, as TF does."""

from tensorweave.layers.core import Layer, _data_format, _padding
from tensorweave.layers.convolutional import _tuple
from tensorweave.ops import conv3d_ops, pooling_ops, shape_ops

__all__ = ["AveragePooling1D", "AveragePooling3D", "MaxPooling1D", "MaxPooling3D", "average_pooling1d",
           "average_pooling3d", "max_pooling1d", "max_pooling3d"]


def _size(value, what):
    value = value[0] if isinstance(value, (list, tuple)) and len(value) == 1 else value
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive int (or a tuple of one), got {value!r}")
    return value


class _Pooling1D(Layer):
    _op = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _size(pool_size, "pool_size")
        self.strides = _size(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = data_format
        self.channels_first = _data_format(data_format) == "NCHW"

    def call(self, inputs):
        inputs.shape.with_rank(3)
        axis = 3 if self.channels_first else 2  # [N, W, 1, C] or [N, C, W, 1], as Keras
        fmt = "NCHW" if self.channels_first else "NHWC"
        window = [1, 1, self.pool_size, 1] if self.channels_first else [1, self.pool_size, 1, 1]
        strides = [1, 1, self.strides, 1] if self.channels_first else [1, self.strides, 1, 1]
        outputs = getattr(pooling_ops, self._op)(shape_ops.expand_dims(inputs, axis), ksize=window, strides=strides,
                                                 padding=self.padding, data_format=fmt)
        return shape_ops.squeeze(outputs, [axis])


class MaxPooling1D(_Pooling1D):
    _base_name = "max_pooling1d"
    _op = "max_pool"


class AveragePooling1D(_Pooling1D):
    _base_name = "average_pooling1d"
    _op = "avg_pool"


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling1D(pool_size, strides, padding, data_format, name)(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling1D(pool_size, strides, padding, data_format, name)(inputs)


class _Pooling3D(Layer):
    _op = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _tuple(pool_size, 3, "pool_size")
        self.strides = _tuple(strides, 3, "strides")
        self.padding = _padding(padding)
        self.data_format = data_format
        self.channels_first = _data_format(data_format) == "NCHW"

    def call(self, inputs):
        return getattr(conv3d_ops, self._op)(inputs, self.pool_size, self.strides, self.padding,
                                             data_format="NCDHW" if self.channels_first else "NDHWC")


class MaxPooling3D(_Pooling3D):
    _base_name = "max_pooling3d"
    _op = "max_pool3d"


class AveragePooling3D(_Pooling3D):
    _base_name = "average_pooling3d"
    _op = "avg_pool3d"


def max_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling3D(pool_size, strides, padding, data_format, name)(inputs)


def average_pooling3d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling3D(pool_size, strides, padding, data_format, name)(inputs)
