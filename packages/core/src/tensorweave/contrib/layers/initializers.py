"""contrib.layers' initializers: ``xavier_initializer`` and contrib's own ``variance_scaling_initializer``, whose
formulas differ from core TF's VarianceScaling (a ``factor`` on FAN_IN/FAN_OUT/FAN_AVG; its normal draws are
truncated at two standard deviations with stddev sqrt(1.3 * factor / n), not rescaled by 0.8796)."""

import math

from tensorweave import dtypes
from tensorweave.ops import random_ops
from tensorweave.ops.init_ops import Initializer, _fans, _shape_list

__all__ = ["variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d"]


class _ContribVarianceScaling(Initializer):
    def __init__(self, factor, mode, uniform, seed, dtype):
        self.factor, self.mode, self.uniform, self.seed = factor, mode, uniform, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtypes.as_dtype(dtype or self.dtype)
        shape = _shape_list(partition_info.full_shape if partition_info is not None else shape)
        fan_in, fan_out = (float(f) for f in _fans(shape))
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)
        return random_ops.truncated_normal(shape, 0.0, math.sqrt(1.3 * self.factor / n), dtype, seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode, "uniform": self.uniform, "seed": self.seed,
                "dtype": self.dtype.name}


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=dtypes.float32):
    """Draws with variance ``factor / n`` (n = fan-in, fan-out or their mean): the default is He's initializer."""
    if not dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    return _ContribVarianceScaling(factor, mode, uniform, seed, dtype)


def xavier_initializer(uniform=True, seed=None, dtype=dtypes.float32):
    """Glorot's initializer: uniform in ±sqrt(6 / (fan_in + fan_out)), or a truncated normal of that variance."""
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform, seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer
