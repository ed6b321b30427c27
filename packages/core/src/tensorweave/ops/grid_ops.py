"""Evenly spaced values and coordinate grids: LinSpace (``tf.linspace``) and ``meshgrid``."""

import numpy as np

from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import concat_split_ops, shape_ops

DEFS = OpDefList()

__all__ = ["linspace", "lin_space", "meshgrid"]

LIN_SPACE = DEFS.define("LinSpace", inputs=["start: T", "stop: T", "num: Tidx"], outputs=["output: T"],
                        attrs=["T: {float32, float64}", "Tidx: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                        doc="num evenly spaced values from start to stop, both included.")


@LIN_SPACE.set_shape_fn
def _lin_space_shape(op):
    for t in op.inputs:
        t.shape.with_rank(0)
    num = constant_value(op.inputs[2])
    if num is not None and int(num) <= 0:
        raise ValueError(f"LinSpace {op.name!r}: requires num > 0, got {int(num)}")
    return tensor_shape.TensorShape([None if num is None else int(num)])


@LIN_SPACE.set_constant_fn
def _lin_space_value(op, index):
    values = [constant_value(t) for t in op.inputs]
    if any(v is None for v in values) or int(values[2]) > 1 << 16:
        return None
    return np.linspace(values[0], values[1], int(values[2])).astype(op.outputs[0].dtype.as_numpy_dtype)


def linspace(start, stop, num, name=None):
    """``num`` evenly spaced values from ``start`` to ``stop``, both included (num=1 gives [start])."""
    with graph_mod.name_scope(name, "LinSpace", [start, stop, num]) as scope:
        start = convert_to_tensor(start, name="start")
        stop = convert_to_tensor(stop, dtype=start.dtype, name="stop")
        return apply_op("LinSpace", [start, stop, num], name=scope)


lin_space = linspace


def meshgrid(*args, **kwargs):
    """Coordinate grids of N 1-D tensors: output i holds args[i] along its own axis, repeated along the others.

    ``indexing='xy'`` (the default, Cartesian) swaps the first two axes, so for sizes (M, N) the outputs are
    [N, M]; ``'ij'`` (matrix) keeps them [M, N]."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"meshgrid() got unexpected keyword arguments: {', '.join(sorted(kwargs))}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    with graph_mod.name_scope(name, "meshgrid", list(args)):
        vectors = [shape_ops.reshape(convert_to_tensor(x, name="x"), [-1]) for x in args]
        axes = list(range(len(vectors)))
        if indexing == "xy" and len(vectors) > 1:
            axes[0], axes[1] = 1, 0
        sizes = [None] * len(vectors)
        for vector, axis in zip(vectors, axes):
            sizes[axis] = vector.shape[0].value if vector.shape[0].value is not None else shape_ops.size(vector)
        full = sizes if all(isinstance(s, int) for s in sizes) else concat_split_ops.stack(sizes)
        outputs = []
        for vector, axis in zip(vectors, axes):
            along = [1] * len(vectors)
            along[axis] = -1
            outputs.append(shape_ops.broadcast_to(shape_ops.reshape(vector, along), full))
        return outputs
