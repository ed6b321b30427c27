"""CPU kernels for shape ops: shape queries, reshapes (views, no copies), broadcasts and shape checks.

The size and axis rules are the core's (``tensorweave.ops.shape_ops``), so run-time errors read as the
ones raised while building.
"""

import math

import numpy as np

from tensorweave.extension import (KernelSet, broadcast_shape_values, check_reshape_target, expand_axis,
                                   squeeze_axes)

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"BroadcastArgs", "BroadcastTo", "EnsureShape", "ExpandDims", "Rank", "Reshape",
    "Shape", "ShapeN", "Size", "Squeeze"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


@KERNELS.register_build("Shape")
def _shape(node):
    """A closure, not keyword arguments bound per call: a loop's gradient asks for shapes thousands of times a step."""
    asarray, dtype = node.device.array_module.asarray, node.attrs["out_type"].as_numpy_dtype
    return lambda x: asarray(x.shape, dtype=dtype)


@KERNELS.register("ShapeN")
def _shape_n(*xs, out_type, xp):
    return [xp.asarray(x.shape, dtype=out_type.as_numpy_dtype) for x in xs]


@KERNELS.register("Size")
def _size(x, *, out_type, xp):
    return xp.asarray(x.size, dtype=out_type.as_numpy_dtype)


@KERNELS.register("Rank")
def _rank(x, *, xp):
    return xp.asarray(x.ndim, dtype=np.int32)


def reshape_dims(x_shape, target):
    """The concrete shape for reshaping ``x_shape`` to ``target`` (with one -1 inferred), or ValueError."""
    dims = [int(d) for d in target]
    check_reshape_target(dims)
    n = math.prod(x_shape)
    known = math.prod(d for d in dims if d != -1)
    if -1 in dims:
        if known == 0 or n % known:
            raise ValueError(f"Input to reshape is a tensor with {n} values (shape {list(x_shape)}), which cannot "
                             f"be reshaped to {dims}: the -1 size cannot be inferred")
        dims[dims.index(-1)] = n // known
    elif known != n:
        raise ValueError(f"Input to reshape is a tensor with {n} values (shape {list(x_shape)}), but the requested "
                         f"shape {dims} has {known}")
    return tuple(dims)


@KERNELS.register("Reshape")
def reshape(x, shape):
    if shape.ndim != 1:
        raise ValueError(f"the shape given to reshape must be a vector, got a tensor of shape {list(shape.shape)}")
    return x.reshape(reshape_dims(x.shape, shape.tolist()))


@KERNELS.register("ExpandDims")
def _expand_dims(x, dim):
    if dim.size != 1:
        raise ValueError(f"the axis of expand_dims must be a single integer, got {dim.tolist()}")
    axis = expand_axis(int(dim.reshape(-1)[0]), x.ndim)
    return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])


@KERNELS.register("Squeeze")
def _squeeze(x, *, squeeze_dims):
    gone = squeeze_axes(list(x.shape), squeeze_dims)
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in gone))


@KERNELS.register("BroadcastTo")
def _broadcast_to(x, shape, *, xp):
    target = tuple(int(d) for d in shape.tolist())
    try:
        return xp.array(xp.broadcast_to(x, target))
    except ValueError:
        raise ValueError(f"cannot broadcast a tensor of shape {list(x.shape)} to shape {list(target)}: each "
                         f"dimension of the input must equal the target's (aligned from the right) or be 1") from None


@KERNELS.register("BroadcastArgs")
def _broadcast_args(s0, s1, *, xp):
    return xp.asarray(broadcast_shape_values(s0.tolist(), s1.tolist()), dtype=s0.dtype)


@KERNELS.register("EnsureShape")
def _ensure_shape(x, *, shape):
    if not shape.admits(x.shape):
        raise ValueError(f"Shape of tensor {list(x.shape)} is not compatible with expected shape {shape}")
    return x
