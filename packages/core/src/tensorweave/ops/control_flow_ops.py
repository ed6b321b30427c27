"""Control flow: the primitives of dynamic control flow with their gradients, and grouping ops.

Switch, Merge, Enter, Exit, NextIteration and LoopCond are implemented by the dataflow executor
itself (``executor_role``); ``cond`` and ``case`` (ops/cond.py) and ``while_loop`` (ops/while_loop.py)
are built from them, and so are their gradients, from the primitives' gradients at the end of this module.
"""

import builtins

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import comparison_ops
from tensorweave.ops.array_ops import identity
from tensorweave.ops.control_flow_context import output_context

DEFS = OpDefList()

__all__ = ["no_op", "group", "tuple", "with_dependencies"]

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
    deps = [t for t in tensors if t is not None] + list(control_inputs or [])
    gate = group(*deps, name=(name or "tuple") + "/control_dependency")
    out = []
    with graph_mod.get_default_graph().control_dependencies([gate]):
        for t in tensors:
            out.append(None if t is None else identity(t))
    return out


def with_dependencies(dependencies, output_tensor, name=None):
    """``output_tensor``, available only after every op in ``dependencies`` has run."""
    with graph_mod.get_default_graph().control_dependencies(list(dependencies)):
        if isinstance(output_tensor, IndexedSlices):
            return IndexedSlices(identity(output_tensor.values, name=name), output_tensor.indices,
                                 output_tensor.dense_shape)
        return identity(output_tensor, name=name or "control_dependency")


def register_kernels(registrar):
    registrar.add_kernel("NoOp", lambda: None, device_type="*")
    registrar.add_kernel("ControlTrigger", lambda: None, device_type="*")


# ---- gradients of the primitives ------------------------------------------------------------------------------------
# Together they build the backward conds and loops. A Switch's gradient is a Merge and a Merge's is a Switch. In a
# loop, an Exit's gradient is an Enter into the backward loop and a loop variable's Enter gets an Exit; a loop
# invariant's Enter gets an accumulation loop summing its gradient over the iterations. A loop Switch is visited
# twice: from its Exit side (making the backward Merge) and from the body (closing the backward loop's back edge).
def _dense(grad):
    """Values crossing a loop boundary are dense tensors (the backward loop carries them)."""
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


@SWITCH.set_gradient
def _switch_grad(op, *grads):
    op_ctx = op._control_flow_context
    grad_ctx = op.graph._get_control_flow_context()
    if op_ctx is not None and op_ctx.is_while_context():
        grad_state = grad_ctx.grad_state
        back_merge = grad_state.switch_map.get(op)
        if back_merge is not None:
            if grads[1] is not None:  # second visit, from the body: close the backward loop
                back_merge.op._update_input(1, next_iteration(_dense(grads[1])))
            return [None, None]
        if grads[0] is not None:  # first visit, from the Exit
            back_merge = merge([_dense(grads[0])] * 2, name="b_switch")[0]
            grad_state.switch_map[op] = back_merge
            return [back_merge, None]
        return [None, None]
    if op_ctx is not None and op_ctx.is_cond_context():
        untaken = grads[1 - op_ctx.branch]
        if untaken is None:
            if op.inputs[0].dtype is dtypes.resource and grads[op_ctx.branch] is not None:
                return [merge([grads[op_ctx.branch]] * 2, name="cond_resource_grad")[0], None]
            return [None, None]
        return [merge(list(grads), name="cond_grad")[0], None]
    false_grad = switch(grads[0], op.inputs[1])[0]
    true_grad = switch(grads[1], op.inputs[1])[1]
    return [merge([false_grad, true_grad])[0], None]


@MERGE.set_gradient
def _merge_grad(op, grad, _):
    op_ctx = output_context(op.inputs[0].op)
    grad_ctx = op.graph._get_control_flow_context()
    if op_ctx is not None and op_ctx.is_while_context():
        return list(switch(grad, grad_ctx.pivot))
    if op_ctx is not None and op_ctx.is_cond_context():
        pred = op_ctx.pred
        if grad_ctx is not None and grad_ctx.grad_state is not None:
            pred = grad_ctx.grad_state.saved_predicate(pred)  # the forward loop's pred of this iteration
        return list(switch(grad, pred, name="cond_grad"))
    return [switch(grad, comparison_ops.equal(op.outputs[1], i))[1] for i in range(len(op.inputs))]


@EXIT.set_gradient
def _exit_grad(op, grad):
    grad_ctx = op.graph._get_control_flow_context()
    if not op._control_flow_context.back_prop:
        return [None]
    if op._control_flow_context.grad_state is not None:
        raise TypeError(f"second-order gradients through while loops are not supported (op {op.name!r} belongs "
                        f"to the backward loop of a gradient)")
    grad = _dense(grad)
    grad_ctx.add_name(grad)
    with grad_ctx.entered():
        result = enter(grad, grad_ctx.name, is_constant=False,
                          parallel_iterations=grad_ctx.parallel_iterations, name="b_exit")
    grad_ctx.loop_enters.append(result)
    return [result]


@NEXT_ITERATION.set_gradient
def _next_iteration_grad(op, grad):
    return [grad]


@ENTER.set_gradient
def _enter_grad(op, grad):
    grad_ctx = op.graph._get_control_flow_context()
    if grad_ctx is None or grad_ctx.grad_state is None or not grad_ctx.back_prop:
        return [grad]
    grad = _dense(grad)
    if op.get_attr("is_constant"):
        return [grad_ctx.grad_state.add_backprop_accumulator(op, grad)]
    result = loop_exit(grad)
    grad_ctx.loop_exits.append(result)
    grad_ctx.exit_result([result])
    return [result]
