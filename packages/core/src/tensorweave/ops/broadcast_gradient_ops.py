"""Summing a broadcast gradient back to an input's shape: the BroadcastGradientArgs op and ``unbroadcast``.

Every broadcasting op's gradient ends in ``unbroadcast(grad, input, *other_inputs)``. When the shapes
known while building decide it (the usual case, unknown batch sizes included), the axes are computed here
in Python and only Sum ops are added; otherwise BroadcastGradientArgs computes them at run time.
"""

import numpy as np

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import reduction_ops, shape_ops

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


@BROADCAST_GRADIENT_ARGS.set_constant_fn
def _broadcast_gradient_args_value(op, index):
    s0, s1 = (constant_value(t) for t in op.inputs)
    if s0 is None or s1 is None:
        return None
    return np.asarray(broadcast_reduction_axes(s0, s1)[index], dtype=op.outputs[index].dtype.as_numpy_dtype)


def broadcast_gradient_args(s0, s1, name=None):
    return apply_op("BroadcastGradientArgs", [s0, s1], name=name or "BroadcastGradientArgs")


def unbroadcast(grad, target, *partners):
    """``grad`` of a broadcast of ``target`` with ``partners`` (tensors or shapes), summed back to ``target``'s shape.

    The axes are found while building when ranks are known and no axis where ``target``'s size is unknown
    can be enlarged by a partner; then only Sum ops are added (size-1 axes keep their dimension). Otherwise
    Shape, BroadcastGradientArgs, Sum and Reshape find and apply them at run time.
    """
    if grad is None:
        return None
    axes = _static_axes(grad.shape, target.shape, [tensor_shape.as_shape(getattr(p, "shape", p)) for p in partners])
    if axes is None:
        grad = _dense(grad)
        target_dims = shape_ops.shape(target)
        summed_axes, _ = broadcast_gradient_args(target_dims, shape_ops.shape(grad))
        return shape_ops.reshape(reduction_ops.reduce_sum(grad, summed_axes), target_dims)
    leading, inner = axes
    if not leading and not inner:
        return grad
    grad = _dense(grad)
    if inner:
        grad = reduction_ops.reduce_sum(grad, inner, keepdims=True)
    if leading:
        grad = reduction_ops.reduce_sum(grad, leading)
    return grad


def _static_axes(grad_shape, target_shape, partner_shapes):
    """(leading axes, size-1 axes) to sum a gradient over, or None if only the run time can tell."""
    if grad_shape.ndims is None or target_shape.ndims is None:
        return None
    grad_dims, target_dims = grad_shape.as_list(), target_shape.as_list()
    leading = len(grad_dims) - len(target_dims)
    if leading < 0:
        raise ValueError(f"a gradient of shape {grad_shape} cannot be summed to the larger rank of {target_shape}")
    inner = []
    for axis, (t, g) in enumerate(zip(target_dims, grad_dims[leading:]), leading):
        if t == 1 and g != 1:
            inner.append(axis)
        elif t is None and not all(_cannot_enlarge(p, axis, len(grad_dims)) for p in partner_shapes):
            return None
        elif t not in (1, None) and g is not None and g != t:
            raise ValueError(f"a gradient of shape {grad_shape} does not broadcast from shape {target_shape}")
    return list(range(leading)), inner


def _cannot_enlarge(partner, axis, rank):
    """True if ``partner`` lacks ``axis`` of a rank-``rank`` broadcast or has size 1 there."""
    if partner.ndims is None:
        return False
    index = axis - (rank - partner.ndims)
    return index < 0 or partner.as_list()[index] == 1


def _dense(grad):
    if isinstance(grad, IndexedSlices):
        return convert_to_tensor(grad)
    return grad
