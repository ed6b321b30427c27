"""Control flow: NoOp and grouping now; Switch/Merge/Enter/Exit/NextIteration, cond and while_loop."""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor import Tensor

DEFS = OpDefList()

__all__ = ["no_op", "group", "tuple"]

DEFS.define("NoOp", grad=NOT_DIFFERENTIABLE, doc="Does nothing; useful as a target with control inputs.")

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


def no_op(name=None):
    return apply_op("NoOp", [], name=name or "NoOp")


def group(*inputs, name=None):
    """An op that runs after all ``inputs`` (ops or tensors) have run."""
    flat = []
    for x in inputs:
        flat.extend(x if isinstance(x, (list, tuple)) else [x])
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


def register_kernels(registrar):
    registrar.add_kernel("NoOp", lambda: None, device_type="*")
