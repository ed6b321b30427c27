"""The wiring every convolution shares with its two backward ops (Conv2D, DepthwiseConv2dNative, Conv3D): the
backward ops' shape functions, which check out_backprop against the forward op's output shape, and the three
gradients, each op's gradient being built from the other two. One function serves them all."""

from tensorweave import dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.tensor_util import constant_value_as_shape
from tensorweave.ops import shape_ops

__all__ = ["attrs_of", "shape_of", "wire_convolution"]


def attrs_of(op, names):
    """The named attrs of ``op``, to give the ops its gradient builds."""
    return {k: op.get_attr(k) for k in names}


def shape_of(t):
    return shape_ops.shape(t, out_type=dtypes.int32)


def wire_convolution(forward, backprop_input, backprop_filter, output_shape, rank, attr_names):
    """Sets the shape functions of ``backprop_input``/``backprop_filter`` (OpDefs whose first/second input is the
    size of their output) and the gradients of all three OpDefs. ``output_shape(input_shape, filter_shape, op)``
    is the forward op's static output shape; ``rank`` the input's rank; ``attr_names`` the attrs they share."""
    fwd, bin_, bfil = forward.name, backprop_input.name, backprop_filter.name

    def check(op, input_shape, filter_shape, out_backprop):
        want = output_shape(input_shape, filter_shape, op)
        if not want.is_compatible_with(out_backprop.shape):
            raise ValueError(f"{op.type} {op.name!r}: out_backprop has shape {out_backprop.shape}, but {fwd} of an "
                             f"input of shape {input_shape} by a filter of shape {filter_shape} gives {want}")

    @backprop_input.set_shape_fn
    def _backprop_input_shape(op):
        input_shape = constant_value_as_shape(op.inputs[0]).with_rank(rank)
        check(op, input_shape, op.inputs[1].shape, op.inputs[2])
        return input_shape

    @backprop_filter.set_shape_fn
    def _backprop_filter_shape(op):
        filter_shape = constant_value_as_shape(op.inputs[1]).with_rank(rank)
        check(op, op.inputs[0].shape, filter_shape, op.inputs[2])
        return filter_shape

    def apply(op_type, inputs, op):
        return apply_op(op_type, inputs, attrs_of(op, attr_names), name=op_type)

    @forward.set_gradient
    def _forward_grad(op, grad):
        x, w = op.inputs
        return [apply(bin_, [shape_of(x), w, grad], op), apply(bfil, [x, shape_of(w), grad], op)]

    @backprop_input.set_gradient
    def _backprop_input_grad(op, grad):
        _, w, dy = op.inputs
        return [None, apply(bfil, [grad, shape_of(w), dy], op), apply(fwd, [grad, w], op)]

    @backprop_filter.set_gradient
    def _backprop_filter_grad(op, grad):
        x, _, dy = op.inputs
        return [apply(bin_, [shape_of(x), grad, dy], op), None, apply(fwd, [x, grad], op)]
