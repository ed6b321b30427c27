"""Ops the runtime's fusion passes make: several of the graph's ops run as one node, one kernel call. They have
no gradients: the passes run after differentiation.

_SumToShape (the broadcast-gradient fusion pass): ``Reshape(Sum(grad, BroadcastGradientArgs(shape,
Shape(grad))[0]), shape)``, the run-time half of a broadcasting op's gradient, as one node. A kernel for it must
give those kernels' result (``grad`` itself or a view of it when nothing is summed).

_FusedElementwise (the elementwise fusion pass): a tree of elementwise ops run as one node.

The node's inputs are the tree's outside inputs; its attrs list the original ops in evaluation order
(``fused_ops``, ``fused_names``: the user's op names, so errors and traces still name them), each one's
operands as registers (``fused_operands``: index < len(inputs) is that input, else the output of step
``index - len(inputs)``), attrs (``fused_attrs``: [name, value] pairs) and output dtype (``fused_dtypes``).
The last step is the node's output. A kernel for it must run every op that has a plain kernel on its
device type, with that kernel's results.
"""

from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import get_op_def
from tensorweave.framework.flops import num_elements
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList

DEFS = OpDefList()

SUM_TO_SHAPE = DEFS.define(
    "_SumToShape", inputs=["grad: T", "shape: Tshape"], outputs=["output: T"],
    attrs=["T: numeric", "Tshape: {int32, int64}", "fused_names: list(string)"], grad=NOT_DIFFERENTIABLE,
    doc="A broadcast gradient summed back to an input's shape (Shape, BroadcastGradientArgs, Sum and Reshape "
        "fused by the runtime; fused_names are the original ops)")


@SUM_TO_SHAPE.set_shape_fn
def _sum_to_shape_shape(op):
    rank = tensor_shape.dimension_value(op.inputs[1].shape.with_rank(1)[0])
    return tensor_shape.unknown_shape(rank)


def _fused_flops(node):
    """One operation per output element and fused op."""
    return num_elements(node.output_shapes[0]) * len(node.attrs.get("fused_ops", ()))


FUSED_ELEMENTWISE = DEFS.define(
    "_FusedElementwise", inputs=["inputs: Tin"], outputs=["output: T"],
    attrs=["Tin: list(type)", "T: type", "fused_ops: list(string)", "fused_names: list(string)",
           "fused_operands: value", "fused_attrs: value", "fused_dtypes: list(type)"], flops_fn=_fused_flops,
    doc="Elementwise ops fused into one kernel call by the runtime (see fused_ops)")


@FUSED_ELEMENTWISE.set_shape_fn
def _fused_elementwise_shape(op):
    shapes = [t.shape for t in op.inputs]
    for op_type, operands in zip(op.get_attr("fused_ops"), op.get_attr("fused_operands")):
        result_inputs = get_op_def(op_type).broadcast_inputs  # the operands whose broadcast shape is the result's
        chosen = [operands[i] for i in (range(len(operands)) if result_inputs is None else result_inputs)]
        shape = shapes[chosen[0]]
        try:
            for register in chosen[1:]:
                shape = common_shapes.broadcast_shapes(shape, shapes[register])
        except ValueError:
            shape = tensor_shape.TensorShape(None)
        shapes.append(shape)
    return shapes[-1]
