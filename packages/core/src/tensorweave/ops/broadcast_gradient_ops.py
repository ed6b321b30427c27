"""Summing a broadcast gradient back to an input's shape: the BroadcastGradientArgs op and ``unbroadcast``.

Every broadcasting op's gradient ends in ``unbroadcast(grad, input)``. When both shapes are known while
the graph is built, the axes are computed here in Python and only a Sum (and, if ranks differ by more
than dropped leading axes, a Reshape) is added; otherwise the axes come from BroadcastGradientArgs at run time.
"""

import numpy as np

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_util import constant_value, register_constant_evaluator

DEFS = OpDefList()

__all__ = []


def broadcast_reduction_axes(s0, s1):
    """(r0, r1): the axes of broadcast(s0, s1) to sum over to get gradients of shapes s0 and s1.

    Leading axes an input lacks are always listed; an axis where the input has 1 and the result does not
    is listed too. Incompatible shapes raise ValueError in TF's words.
    """
    s0, s1 = [int(d) for d in s0], [int(d) for d in s1]
    rank = max(len(s0), len(s1))
    p0, p1 = [1] * (rank - len(s0)) + s0, [1] * (rank - len(s1)) + s1
    r0, r1 = list(range(rank - len(s0))), list(range(rank - len(s1)))
    for axis, (a, b) in enumerate(zip(p0, p1)):
        if a != b and a != 1 and b != 1:
            raise ValueError(f"Incompatible shapes: {s0} vs. {s1}")
        out = b if a == 1 else a
        if axis >= rank - len(s0) and a == 1 and out != 1:
            r0.append(axis)
        if axis >= rank - len(s1) and b == 1 and out != 1:
            r1.append(axis)
    return r0, r1


BROADCAST_GRADIENT_ARGS = DEFS.define(
    "BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"], attrs=["T: {int32, int64}"],
    grad=NOT_DIFFERENTIABLE, doc="The axes to sum a broadcast gradient over, for each of two input shapes.")


@BROADCAST_GRADIENT_ARGS.set_shape_fn
def _broadcast_gradient_args_shape(op):
    for t in op.inputs:
        t.shape.with_rank(1)
    return [tensor_shape.TensorShape([None]), tensor_shape.TensorShape([None])]


@register_constant_evaluator("BroadcastGradientArgs")
def _broadcast_gradient_args_value(op, index):
    s0, s1 = (constant_value(t) for t in op.inputs)
    if s0 is None or s1 is None:
        return None
    return np.asarray(broadcast_reduction_axes(s0, s1)[index], dtype=op.outputs[index].dtype.as_numpy_dtype)


def broadcast_gradient_args(s0, s1, name=None):
    return apply_op("BroadcastGradientArgs", [s0, s1], name=name or "BroadcastGradientArgs")


def unbroadcast(grad, target):
    """``grad`` (shaped like a broadcast result) summed back to the shape of ``target``.

    Static when ``target``'s shape is fully known and the gradient's rank is known (a batch dimension
    may be unknown); dynamic (Shape, BroadcastGradientArgs) otherwise.
    """
    if grad is None:
        return None
    from tensorweave.ops import array_ops, reduction_ops
    grad_dims, target_shape = grad.shape.as_list() if grad.shape.ndims is not None else None, target.shape
    if grad_dims is not None and target_shape.is_fully_defined():
        target_dims = target_shape.as_list()
        if grad_dims == target_dims:
            return grad
        axes = _static_axes(target_dims, grad_dims)
        summed = reduction_ops.reduce_sum(_dense(grad), axes) if axes else _dense(grad)
        leading = len(grad_dims) - len(target_dims)
        if axes == list(range(leading)):
            return summed
        return array_ops.reshape(summed, target_dims)
    grad = _dense(grad)
    target_dims = array_ops.shape(target)
    axes, _ = broadcast_gradient_args(target_dims, array_ops.shape(grad))
    return array_ops.reshape(reduction_ops.reduce_sum(grad, axes), target_dims)


def _static_axes(target_dims, grad_dims):
    """Axes of a gradient (some dims may be unknown) to sum over for a fully known target shape."""
    leading = len(grad_dims) - len(target_dims)
    if leading < 0:
        raise ValueError(f"a gradient of shape {grad_dims} cannot be summed to the larger rank of {target_dims}")
    axes = list(range(leading))
    for axis, (t, g) in enumerate(zip(target_dims, grad_dims[leading:]), leading):
        if t == 1 and g != 1:
            axes.append(axis)
        elif t != 1 and g is not None and g != t:
            raise ValueError(f"a gradient of shape {grad_dims} does not broadcast from shape {target_dims}")
    return axes


def _dense(grad):
    if isinstance(grad, IndexedSlices):
        from tensorweave.framework.tensor_conversion import convert_to_tensor
        return convert_to_tensor(grad)
    return grad
