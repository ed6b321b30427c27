"""ControlFlowContext: where an op sits in the nesting of cond branches and while loops.

``Graph.create_op`` hands every new op to the current context (``add_op``). A context makes the op's
external inputs available inside it (through a Switch for a cond branch, a constant Enter for a
loop) and gives input-less ops a control edge from its pivot, so they run only when it runs. These
are the rules of TF's dynamic control flow (Yu et al., EuroSys 2018).
"""

import contextlib

from tensorweave.framework import graph as graph_mod


class ControlFlowContext:
    """Base of CondContext and WhileContext: known values and the enter/exit protocol."""

    def __init__(self):
        self.graph = graph_mod.get_default_graph()
        self.outer_context = self.graph._get_control_flow_context()
        self.values = set()  # tensors that are valid inside this context
        self.external_values = {}  # outer tensor -> the tensor standing for it inside

    def entered(self):
        """Builds ops in this context for the duration of a ``with`` block."""
        return in_context(self.graph, self)

    # ---- kinds ---------------------------------------------------------------------------
    def is_while_context(self):
        return False

    def is_cond_context(self):
        return False

    def get_while_context(self):
        return self.outer_context.get_while_context() if self.outer_context is not None else None

    @property
    def grad_state(self):
        return None

    @property
    def back_prop(self):
        return self.outer_context.back_prop if self.outer_context is not None else True

    def add_name(self, tensor):
        self.values.add(tensor)

    def add_inner_op(self, op):
        """Called when ``op`` was added to a context nested in this one."""
        if self.outer_context is not None:
            self.outer_context.add_inner_op(op)

    def exit_result(self, tensors):
        """Makes ``tensors`` (results leaving this context) known to the outer context."""
        if self.outer_context is not None:
            for t in tensors:
                self.outer_context.add_name(t)

    def remove_external_control_edges(self, op):
        """Drops control inputs that come from outside the enclosing loop; returns (kept, dropped)."""
        while_ctx = self.get_while_context()
        if while_ctx is None:
            return list(op.control_inputs), []
        internal, external = [], []
        for c in op.control_inputs:
            ctx = output_context(c)
            if ctx is not None and ctx.get_while_context() is while_ctx:
                internal.append(c)
            else:
                external.append(c)
        if external:
            op._remove_all_control_inputs()
            op._add_control_inputs(internal)
        return internal, external


@contextlib.contextmanager
def in_context(graph, ctx):
    """Builds ops in ``ctx`` (None: outside every cond and loop) for the duration of the block."""
    saved = graph._get_control_flow_context()
    graph._set_control_flow_context(ctx)
    try:
        yield ctx
    finally:
        graph._set_control_flow_context(saved)


def create_outside_contexts(build, ctx):
    """Runs ``build`` with no current context and no control dependencies, then assigns its op to ``ctx``.

    Used for the Switch and Enter ops a context inserts for itself, which must not be rewritten again.
    """
    with in_context(ctx.graph, None), ctx.graph.control_dependencies(None):
        result = build()
    op = getattr(result, "op", result)
    op._control_flow_context = ctx
    if ctx.outer_context is not None:
        ctx.outer_context.add_inner_op(op)
    return result


def replace_value(old, new):
    """Makes ``new``, which now stands for the op output ``old`` (a subclass instance swapped in after the
    op was built), known wherever ``old`` is; else a consumer in the same branch would treat it as external."""
    ctx = old.op._control_flow_context
    while ctx is not None:
        if old in ctx.values:
            ctx.values.add(new)
        ctx = ctx.outer_context


# ---- questions about ops ---------------------------------------------------------------------
def output_context(op):
    """The context an op's outputs live in: an Exit's outputs live outside its loop."""
    ctx = op._control_flow_context
    if ctx is not None and op.type == "Exit":
        return ctx.outer_context
    return ctx


def while_context_of(op):
    ctx = op._control_flow_context
    return ctx.get_while_context() if ctx is not None else None


def is_switch(op):
    return op.type == "Switch"


def is_loop_exit(op):
    return op.type == "Exit"


def is_loop_switch(op):
    """A Switch of a while loop (not of a cond branch)."""
    ctx = op._control_flow_context
    return is_switch(op) and ctx is not None and ctx.is_while_context()


def is_loop_constant_enter(op):
    return op.type == "Enter" and op.get_attr("is_constant")


def is_in_context(op, ctx):
    """Whether ``op`` sits in ``ctx`` or in a context nested inside it."""
    inner = op._control_flow_context
    while inner is not None:
        if inner is ctx:
            return True
        inner = inner.outer_context
    return ctx is None


def enclosing_control_pivot(ctx):
    """The nearest control pivot of ``ctx`` or its outer contexts, or None at the top level."""
    while ctx is not None:
        pivot = ctx.get_control_pivot()
        if pivot is not None:
            return pivot
        ctx = ctx.outer_context
    return None
