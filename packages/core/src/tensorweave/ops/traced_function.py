"""Functions traced into the graph, for ops that call a function per element (the dataset transformations).

The Python function is called once, with a placeholder per argument, inside a FunctionContext: the same
mechanism that builds a while loop's body or a cond branch (``Graph.create_op`` hands every new op to the
context). Tensors the function uses from outside are *captured*: the context gives each a placeholder inside,
and the op calling the function takes the outer tensor as an input, so a captured value is read when that op
runs (for a dataset, when its iterator is initialized), as in TF. Loops and conds built inside the function
nest in its context. ``tensorweave.runtime.function_runner`` runs a traced function as a plan of the same graph.
"""

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops
from tensorweave.ops.control_flow_context import ControlFlowContext, create_outside_contexts, in_context, is_in_context

__all__ = []

FUNCTION_DEVICE = "/device:CPU:0"  # dataset functions run on the host, as TF's


class FunctionContext(ControlFlowContext):
    """The context of one traced function: values made inside are its own; outer ones are captured."""

    def __init__(self, name):
        super().__init__()
        self.outer_context = None  # a function body is not inside the loop or cond that builds it
        self.name = name
        self.captured = []  # outer tensors, in capture order
        self.capture_args = []  # the placeholder standing for each inside

    def get_control_pivot(self):
        return None

    def add_value(self, val):
        if val in self.values or is_in_context(val.op, self):
            return self.external_values.get(val, val)
        inner = create_outside_contexts(
            lambda: array_ops.placeholder(val.dtype, val.shape, name=f"capture_{len(self.captured)}"), self)
        self.captured.append(val)
        self.capture_args.append(inner)
        self.values.update([val, inner])
        self.external_values[val] = inner
        return inner

    def add_op(self, op):
        for index, x in enumerate(list(op.inputs)):
            real = self.add_value(x)
            if real is not x:
                op._update_input(index, real)
        kept = [c for c in op.control_inputs if is_in_context(c, self)]
        if len(kept) != len(op.control_inputs):  # a function cannot wait for its caller's ops (TF ignores them)
            op._remove_all_control_inputs()
            op._add_control_inputs(kept)
        self.values.update(op.outputs)


class TracedFunction:
    """A function traced into the graph: the placeholders of its arguments and captures, and its outputs.

    ``captured`` are the outer tensors the calling op must take as inputs, in the order of ``capture_args``.
    """

    def __init__(self, name, args, capture_args, captured, outputs):
        self.name = name
        self.args = list(args)
        self.capture_args = list(capture_args)
        self.captured = list(captured)
        self.outputs = list(outputs)

    @classmethod
    def of_graph(cls, name, outputs):
        """A function of no arguments computing existing tensors of the graph (a one-shot iterator's dataset
        factory: the dataset's own ops, run once when the iterator starts instead of in every step)."""
        return cls(name, [], [], [], outputs)

    @property
    def inputs(self):
        """What a call feeds: the arguments, then the captures."""
        return self.args + self.capture_args

    @property
    def output_dtypes(self):
        return [t.dtype for t in self.outputs]

    @property
    def output_shapes(self):
        return [t.shape for t in self.outputs]

    def to_attr(self):
        """How a GraphDef records it: tensor names (an imported graph cannot call it again)."""
        return {"name": self.name, "args": [t.name for t in self.args],
                "captures": [t.name for t in self.capture_args], "outputs": [t.name for t in self.outputs]}

    def __repr__(self):
        return f"<TracedFunction {self.name}: {len(self.args)} args, {len(self.captured)} captures, " \
               f"{len(self.outputs)} outputs>"


def trace(fn, dtypes, shapes, name):
    """Calls ``fn(*placeholders)`` (one per dtype and shape) inside a new FunctionContext.

    ``fn`` returns a flat list of tensors (or values convertible to tensors); each output is an op of the
    function (an outer tensor returned as it is gets an Identity inside, so it is captured).
    """
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name) as scope, graph.control_dependencies(None), graph.device(None), \
            graph.device(FUNCTION_DEVICE):
        ctx = FunctionContext(scope.rstrip("/"))
        with in_context(graph, ctx):
            args = [array_ops.placeholder(dtype, shape, name=f"arg_{i}") for i, (dtype, shape) in
                    enumerate(zip(dtypes, shapes))]
            ctx.values.update(args)
            outputs = []
            for value in fn(*args):
                t = convert_to_tensor(value)
                if not is_in_context(t.op, ctx):
                    t = array_ops.identity(t)
                outputs.append(t)
    return TracedFunction(ctx.name, args, ctx.capture_args, ctx.captured, outputs)
