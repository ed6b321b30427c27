"""Stacks that live for one step: how a forward loop hands per-iteration values to its backward loop.

``StackV2`` makes a stack in the step's container; ``StackPushV2`` pushes (and forwards) a value,
``StackPopV2`` pops the most recent one. Loop gradients order pushes and pops with control edges.
"""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.ops import array_ops

DEFS = OpDefList()

__all__ = []

DEFS.define("StackV2", inputs=["max_size: int32"], outputs=["handle: resource"],
            attrs=["elem_type: type", "stack_name: string = ''"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            shape_fn=common_shapes.scalar_shape,
            doc="A stack for this step; max_size < 0 means unbounded.")
DEFS.define("StackPushV2", inputs=["handle: resource", "elem: T"], outputs=["output: T"],
            attrs=["T: any", "swap_memory: bool = False"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            shape_fn=lambda op: op.inputs[1].shape, doc="Pushes elem and forwards it.")
DEFS.define("StackPopV2", inputs=["handle: resource"], outputs=["elem: elem_type"], attrs=["elem_type: type"],
            is_stateful=True, grad=NOT_DIFFERENTIABLE, shape_fn=lambda op: tensor_shape.TensorShape(None),
            doc="Pops the most recently pushed value.")
DEFS.define("StackCloseV2", inputs=["handle: resource"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Drops the stack's values.")


def stack(elem_type, max_size=-1, stack_name="", name=None):
    size = array_ops.constant(max_size, dtype=dtypes.int32, name="max_size")
    return apply_op("StackV2", [size], {"elem_type": dtypes.as_dtype(elem_type), "stack_name": stack_name},
                    name=name or "Stack")


def stack_push(handle, elem, swap_memory=False, name=None):
    return apply_op("StackPushV2", [handle, elem], {"swap_memory": swap_memory}, name=name or "StackPush")


def stack_pop(handle, elem_type, name=None):
    return apply_op("StackPopV2", [handle], {"elem_type": dtypes.as_dtype(elem_type)}, name=name or "StackPop")
