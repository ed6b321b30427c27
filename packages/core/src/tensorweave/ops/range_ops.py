"""Range: the sequence start, start + delta, … up to (not including) limit, as ``tf.range``."""

import math

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import unary_math_ops

DEFS = OpDefList()

__all__ = ["range"]

RANGE = DEFS.define("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"], outputs=["output: Tidx"],
                    attrs=["Tidx: {float32, float64, int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                    doc="start, start + delta, … while short of limit.")

_LARGEST_FOLDED = 1 << 16


def range_size(start, limit, delta):
    """The number of elements of range(start, limit, delta); ValueError in TF's words for a bad delta."""
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if all(isinstance(v, (int, np.integer)) for v in (start, limit, delta)):
        return (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta))
    return int(math.ceil(abs((limit - start) / delta)))


@RANGE.set_shape_fn
def _range_shape(op):
    for t in op.inputs:
        t.shape.with_rank(0)
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return tensor_shape.TensorShape([None])
    return tensor_shape.TensorShape([range_size(*(v.item() for v in values))])


@RANGE.set_constant_fn
def _range_value(op, index):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values) or op.outputs[0].shape[0].value is None or \
            op.outputs[0].shape[0].value > _LARGEST_FOLDED:
        return None
    return np.arange(*(v.item() for v in values), dtype=op.outputs[0].dtype.as_numpy_dtype)


_WIDENING = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF's public name
    """[start, start + delta, …) short of limit; ``range(n)`` counts from 0. Without ``dtype``, the widest of
    the arguments' types (int32 < int64 < float32 < float64)."""
    if limit is None:
        start, limit = 0, start
    args = [convert_to_tensor(v, dtype=dtype, name=n) for v, n in ((start, "start"), (limit, "limit"),
                                                                     (delta, "delta"))]
    if dtype is None:
        for arg in args:
            if arg.dtype not in _WIDENING:
                raise TypeError(f"range: {arg.name} has dtype {arg.dtype.name}; range takes "
                                f"{', '.join(d.name for d in _WIDENING)}")
        widest = max((arg.dtype for arg in args), key=_WIDENING.index)
        args = [unary_math_ops.cast(arg, widest) for arg in args]
    return apply_op("Range", args, name=name or "range")
