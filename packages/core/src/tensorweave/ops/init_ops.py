"""Initializers: callables ``init(shape, dtype=None, partition_info=None) -> Tensor`` for get_variable.

TF1's classes (``tf.zeros_initializer()``, ``tf.glorot_uniform_initializer()``...) and the
``tf.initializers`` namespace. Random initializers pass their seed to the random ops, which combine it
with the graph seed, so ``tf.set_random_seed`` makes initial weights repeatable. Scaling initializers
use the full shape of a partitioned variable, so its shards match the unpartitioned variable's scale.
"""

import math
import types

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.ops import (
    array_ops, fill_ops, random_ops, reduction_ops, shape_ops, transpose_ops, unary_math_ops, variables,
)

__all__ = ["Constant", "GlorotNormal", "GlorotUniform", "Identity", "Ones", "Orthogonal", "RandomNormal",
           "RandomUniform", "TruncatedNormal", "UniformUnitScaling", "VarianceScaling", "Zeros",
           "constant_initializer", "glorot_normal_initializer", "glorot_uniform_initializer", "he_normal",
           "he_uniform", "identity_initializer", "initializers", "lecun_normal", "lecun_uniform",
           "ones_initializer", "orthogonal_initializer", "random_normal_initializer", "random_uniform_initializer",
           "truncated_normal_initializer", "uniform_unit_scaling_initializer", "variance_scaling_initializer",
           "zeros_initializer"]


def _floating(dtype, who):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{who} expects a floating point dtype, got {dtype.name}")
    return dtype


def _shape_list(shape):
    return tensor_shape.as_shape(shape).as_list()


class Initializer:
    """Base class: an initializer is called with the shape (and dtype) of the variable it fills."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise TypeError(f"{type(self).__name__} is an abstract initializer; use a concrete one")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Zeros(Initializer):
    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return fill_ops.zeros(shape, dtypes.as_dtype(dtype or self.dtype))

    def get_config(self):
        return {"dtype": self.dtype.name}


class Ones(Zeros):
    def __call__(self, shape, dtype=None, partition_info=None):
        return fill_ops.ones(shape, dtypes.as_dtype(dtype or self.dtype))


class Constant(Initializer):
    """A constant value: a scalar fills the shape; a list is padded with its last element (TF1).

    For a shard of a partitioned variable, a value with as many elements as the full variable is sliced,
    so the shards together hold the value.
    """

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self.verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = dtypes.as_dtype(dtype or self.dtype)
        value = self.value
        if partition_info is not None:
            full = np.asarray(value)
            if full.size == int(np.prod(partition_info.full_shape)) and full.size > 1:
                full = full.reshape(partition_info.full_shape)
                start = partition_info.var_offset
                value = full[tuple(slice(o, o + n) for o, n in zip(start, _shape_list(shape)))]
        verify = self.verify_shape if verify_shape is None else verify_shape
        return array_ops.constant(value, dtype=dtype, shape=shape, verify_shape=verify)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name, "verify_shape": self.verify_shape}


class RandomUniform(Initializer):
    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(shape, self.minval, self.maxval, dtypes.as_dtype(dtype or self.dtype),
                                         seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed, "dtype": self.dtype.name}


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _floating(dtype, "RandomNormal")

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(shape, self.mean, self.stddev, _floating(dtype or self.dtype, "RandomNormal"),
                                        seed=self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed, "dtype": self.dtype.name}


class TruncatedNormal(RandomNormal):
    """Normal draws, redrawn when more than two standard deviations from the mean."""

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _floating(dtype or self.dtype, "TruncatedNormal")
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype, seed=self.seed)


def _fans(shape):
    """(fan_in, fan_out) of a weight shape: dense [in, out]; conv [..., in, out] times the receptive field."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive_field = int(np.prod(shape[:-2]))
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class VarianceScaling(Initializer):
    """Draws with variance ``scale / n``, n the fan-in, fan-out or their mean (TF1's formulas)."""

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("normal", "uniform", "truncated_normal", "untruncated_normal")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError(f"`scale` must be a positive float, got {scale}")
        if mode not in self._MODES:
            raise ValueError(f"Invalid `mode` argument {mode!r}: expected one of {self._MODES}")
        distribution = distribution.lower()
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(f"Invalid `distribution` argument {distribution!r}: expected one of "
                             f"{self._DISTRIBUTIONS}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _floating(dtype, "VarianceScaling")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _floating(dtype or self.dtype, "VarianceScaling")
        shape = _shape_list(shape)
        fan_in, fan_out = _fans(partition_info.full_shape if partition_info is not None else shape)
        divisor = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, divisor)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / 0.87962566103423978  # the stddev of a unit normal truncated at 2
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed,
                "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Uniform in ±sqrt(6 / (fan_in + fan_out)): the default initializer of get_variable."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class UniformUnitScaling(Initializer):
    """Uniform in ±sqrt(3 / input_size) * factor, input_size the product of all but the last dimension."""

    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        self.factor, self.seed = factor, seed
        self.dtype = _floating(dtype, "UniformUnitScaling")

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _shape_list(shape)
        scale_shape = partition_info.full_shape if partition_info is not None else shape
        input_size = max(float(np.prod(scale_shape[:-1])), 1.0)
        limit = math.sqrt(3.0 / input_size) * self.factor
        return random_ops.random_uniform(shape, -limit, limit, _floating(dtype or self.dtype, "UniformUnitScaling"),
                                         seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix from the QR decomposition of normal draws, times ``gain``."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain, self.seed = gain, seed
        self.dtype = _floating(dtype, "Orthogonal")

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _floating(dtype or self.dtype, "Orthogonal")
        shape = _shape_list(shape)
        if len(shape) < 2:
            raise ValueError(f"the orthogonal initializer needs a shape of rank 2 or more, got {shape}")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        flat = (cols, rows) if rows < cols else (rows, cols)
        from tensorweave.ops import linalg_ops  # on first use: start-up time
        q, r = linalg_ops.qr(random_ops.random_normal(flat, dtype=dtype, seed=self.seed))
        diagonal = reduction_ops.reduce_sum(r * np.eye(flat[1], dtype=dtype.as_numpy_dtype), axis=0)
        q = q * unary_math_ops.sign(diagonal)  # makes the decomposition unique, so q is uniformly distributed
        if rows < cols:
            q = transpose_ops.transpose(q)
        return self.gain * shape_ops.reshape(q, shape)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D variables only; a shard gets its block of it)."""

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        self.gain = gain
        self.dtype = _floating(dtype, "Identity")

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _shape_list(shape)
        full = partition_info.full_shape if partition_info is not None else shape
        if len(full) != 2:
            raise ValueError(f"the identity initializer needs a 2-D shape, got {full}")
        eye = np.eye(*full) * self.gain
        if partition_info is not None:
            eye = eye[tuple(slice(o, o + n) for o, n in zip(partition_info.var_offset, shape))]
        return array_ops.constant(eye, dtype=_floating(dtype or self.dtype, "Identity"))

    def get_config(self):
        return {"gain": self.gain, "dtype": self.dtype.name}


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
orthogonal_initializer = Orthogonal
identity_initializer = Identity
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def _variables_initializer(var_list=None, name="init"):
    return variables.variables_initializer(variables.global_variables() if var_list is None else var_list, name)


def _local_variables_initializer():
    return variables.local_variables_initializer()


initializers = types.ModuleType("tensorweave.initializers", "``tf.initializers``: TF1's initializer names.")
initializers.__dict__.update(
    zeros=Zeros, ones=Ones, constant=Constant, random_uniform=RandomUniform, random_normal=RandomNormal,
    truncated_normal=TruncatedNormal, uniform_unit_scaling=UniformUnitScaling, variance_scaling=VarianceScaling,
    orthogonal=Orthogonal, identity=Identity, glorot_uniform=GlorotUniform, glorot_normal=GlorotNormal,
    he_normal=he_normal, he_uniform=he_uniform, lecun_normal=lecun_normal, lecun_uniform=lecun_uniform,
    variables=_variables_initializer, global_variables=lambda: _variables_initializer(),
    local_variables=_local_variables_initializer)
