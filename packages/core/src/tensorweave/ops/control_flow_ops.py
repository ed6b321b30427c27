"""Control flow: the primitives of dynamic control flow and grouping ops; cond, case and while_loop.

Switch, Merge, Enter, Exit, NextIteration and LoopCond are implemented by the dataflow executor
itself (``executor_role``); ``cond`` (ops/cond.py) and ``while_loop`` (ops/while_loop.py) are built
from them, and so are their gradients (ops/control_flow_grad.py).
"""

import builtins

from tensorweave.framework import graph as graph_mod
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = ["no_op", "group", "tuple", "cond", "case", "while_loop", "with_dependencies"]

DEFS.define("NoOp", grad=NOT_DIFFERENTIABLE, is_pass_through=True,  # hands on nothing, so it costs nothing
            doc="Does nothing; useful as a target with control inputs.")
DEFS.define("ControlTrigger", grad=NOT_DIFFERENTIABLE,
            doc="Does nothing, and is live even when its control inputs are dead: a scheduling barrier "
                "for loop-gradient stacks.")

# The primitives of dynamic control flow; the executors implement them (executor_role), no kernels.
SWITCH = DEFS.define("Switch", inputs=["data: T", "pred: bool"], outputs=["output_false: T", "output_true: T"],
                     attrs=["T: any"], executor_role="switch",
                     doc="Forwards data to output_true if pred else output_false; the other output is dead.")
MERGE = DEFS.define("Merge", inputs=["inputs: N * T"], outputs=["output: T", "value_index: int32"],
                    attrs=["T: any", "N: int >= 1"], executor_role="merge",
                    doc="Forwards the first live input and its index.")
ENTER = DEFS.define("Enter", inputs=["data: T"], outputs=["output: T"],
                    attrs=["T: any", "frame_name: string", "is_constant: bool = False",
                           "parallel_iterations: int = 10"], executor_role="enter",
                    doc="Moves a value into the child frame frame_name (every iteration if is_constant).")
EXIT = DEFS.define("Exit", inputs=["data: T"], outputs=["output: T"], attrs=["T: any"], executor_role="exit",
                   doc="Moves a value from a loop frame to its parent frame.")
NEXT_ITERATION = DEFS.define("NextIteration", inputs=["data: T"], outputs=["output: T"], attrs=["T: any"],
                             executor_role="next_iteration", doc="Moves a value to the next iteration.")
LOOP_COND = DEFS.define("LoopCond", inputs=["input: bool"], outputs=["output: bool"],
                        executor_role="loop_cond", grad=NOT_DIFFERENTIABLE,
                        doc="The loop predicate; forwards its input.")


def _forwarded_shape(op):
    return op.inputs[0].shape


for _def in (ENTER, EXIT, NEXT_ITERATION):
    _def.shape_fn = _forwarded_shape


@SWITCH.set_shape_fn
def _switch_shape(op):
    if op.inputs[1].shape.ndims not in (None, 0):
        raise ValueError(f"the predicate of a Switch must be a scalar, but it has shape {op.inputs[1].shape}")
    return [op.inputs[0].shape, op.inputs[0].shape]


@MERGE.set_shape_fn
def _merge_shape(op):
    """The most specific shape every input is compatible with."""
    shape = op.inputs[0].shape
    for t in op.inputs[1:]:
        if shape.ndims is None or t.shape.ndims != shape.ndims:
            shape = tensor_shape.TensorShape(None)
            break
        shape = shape.most_specific_compatible_shape(t.shape)
    return [shape, tensor_shape.TensorShape([])]


@LOOP_COND.set_shape_fn
def _loop_cond_shape(op):
    if op.inputs[0].shape.ndims not in (None, 0):
        raise ValueError(f"the loop condition must be a scalar, but it has shape {op.inputs[0].shape}")
    return tensor_shape.TensorShape([])


# ---- wrappers of the primitives (used by the builders and their gradients) ------------------------
def switch(data, pred, name=None):
    """(output_false, output_true): ``data`` on the side ``pred`` selects, a dead tensor on the other."""
    if isinstance(data, IndexedSlices):
        values = apply_op("Switch", [data.values, pred], name=name or "Switch")
        indices = apply_op("Switch", [data.indices, pred], name="indices")
        shapes = [None, None] if data.dense_shape is None else apply_op(
            "Switch", [data.dense_shape, pred], name="dense_shape")
        return builtins.tuple(IndexedSlices(values[i], indices[i], shapes[i]) for i in (0, 1))
    return builtins.tuple(apply_op("Switch", [data, pred], name=name or "Switch"))


def merge(inputs, name=None):
    """(output, value_index): the first live input and its position."""
    if all(isinstance(x, IndexedSlices) for x in inputs):
        values, index = apply_op("Merge", [[x.values for x in inputs]], name=name or "Merge")
        indices = apply_op("Merge", [[x.indices for x in inputs]], name="indices")[0]
        shape = None if inputs[0].dense_shape is None else apply_op(
            "Merge", [[x.dense_shape for x in inputs]], name="dense_shape")[0]
        return IndexedSlices(values, indices, shape), index
    inputs = [convert_to_tensor(x) for x in inputs]  # a mix of slices and dense tensors merges densely
    return builtins.tuple(apply_op("Merge", [inputs], name=name or "Merge"))


def enter(data, frame_name, is_constant=False, parallel_iterations=10, name=None):
    return apply_op("Enter", [data], {"frame_name": frame_name, "is_constant": is_constant,
                                      "parallel_iterations": parallel_iterations}, name=name or "Enter")


def loop_exit(data, name=None):
    return apply_op("Exit", [data], name=name or "Exit")


def next_iteration(data, name=None):
    return apply_op("NextIteration", [data], name=name or "NextIteration")


def loop_cond(pred, name=None):
    return apply_op("LoopCond", [pred], name=name or "LoopCond")


def control_trigger(name=None):
    return apply_op("ControlTrigger", [], name=name or "ControlTrigger")


# ---- grouping -----------------------------------------------------------------------------------
def no_op(name=None):
    return apply_op("NoOp", [], name=name or "NoOp")


def group(*inputs, name=None):
    """An op that runs after all ``inputs`` (ops or tensors) have run."""
    flat = []
    for x in inputs:
        flat.extend(x if isinstance(x, (list, builtins.tuple)) else [x])
    ops = []
    for x in flat:
        if hasattr(x, "_as_graph_element"):
            x = x._as_graph_element()
        op = x.op if isinstance(x, Tensor) else x
        if op is not None and op not in ops:
            ops.append(op)
    with graph_mod.get_default_graph().control_dependencies(ops):
        return no_op(name=name or "group_deps")


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF's name
    """Tensors equal to ``tensors`` that are available only after all of them (and control_inputs) are."""
    from tensorweave.ops.array_ops import identity
    deps = [t for t in tensors if t is not None] + list(control_inputs or [])
    gate = group(*deps, name=(name or "tuple") + "/control_dependency")
    out = []
    with graph_mod.get_default_graph().control_dependencies([gate]):
        for t in tensors:
            out.append(None if t is None else identity(t))
    return out


def with_dependencies(dependencies, output_tensor, name=None):
    """``output_tensor``, available only after every op in ``dependencies`` has run."""
    from tensorweave.ops.array_ops import identity
    with graph_mod.get_default_graph().control_dependencies(list(dependencies)):
        if isinstance(output_tensor, IndexedSlices):
            return IndexedSlices(identity(output_tensor.values, name=name), output_tensor.indices,
                                 output_tensor.dense_shape)
        return identity(output_tensor, name=name or "control_dependency")


def register_kernels(registrar):
    registrar.add_kernel("NoOp", lambda: None, device_type="*")
    registrar.add_kernel("ControlTrigger", lambda: None, device_type="*")


from tensorweave.ops import control_flow_grad  # noqa: E402,F401 - attaches the primitives' gradients
from tensorweave.ops.cond import case, cond  # noqa: E402
from tensorweave.ops.while_loop import while_loop  # noqa: E402
