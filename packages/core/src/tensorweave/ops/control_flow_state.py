"""ControlFlowState: the loops one ``tf.gradients`` call differentiates through, and zero gradients
that respect control flow (a zero for a dead branch must be dead when the branch is live, and a zero
inside a loop must exist in every backward iteration).
"""

import contextlib

from tensorweave import dtypes
from tensorweave.ops import array_ops, control_flow_ops as cf, fill_ops, shape_ops, state_ops
from tensorweave.ops.control_flow_context import (
    in_context, is_loop_exit, is_loop_switch, is_switch, while_context_of,
)
from tensorweave.ops.loop_grad_state import GradLoopState, on_loop_device


def is_trainable(tensor):
    """Outputs whose missing gradient is a zero: floating and complex tensors, and handles of variables
    (the zero of a handle has the shape and dtype of the variable's value)."""
    if tensor.dtype is dtypes.resource:
        return state_ops.handle_dtype(tensor) is not None
    return tensor.dtype.is_floating or tensor.dtype.is_complex


class ControlFlowState:
    def __init__(self, call_context):
        self.call_context = call_context
        self._map = {}  # forward WhileContext -> GradLoopState

    def grad_state_of(self, op, before):
        """The grad state whose backward loop builds ``op``'s gradient (``before``: its aggregation)."""
        if before and is_loop_exit(op):
            outer = op._control_flow_context.outer_context
            forward = outer.get_while_context() if outer is not None else None
        else:
            forward = while_context_of(op)
        return self._map.get(forward) if forward is not None else None

    @contextlib.contextmanager
    def grad_context_for(self, op, before):
        """Builds in the backward loop (and on the device) of ``op``'s loop, if it is in one."""
        state = self.grad_state_of(op, before)
        if state is None:
            yield
            return
        with on_loop_device(state.forward_context), state.grad_context.entered():
            yield

    def add_while_context(self, op, between_list, between):
        forward = while_context_of(op)
        if forward in self._map:
            return
        outer = forward.outer_context.get_while_context() if forward.outer_context is not None else None
        state = GradLoopState(forward, self._map.get(outer), self.call_context)
        self._map[forward] = state
        for loop_exit in state.forward_loop_exits:  # every exit takes part in the backward loop
            if loop_exit.op not in between:
                between.add(loop_exit.op)
                between_list.append(loop_exit.op)

    def process_unused_loop_exits(self, pending, ys_ops):
        """Exits no gradient reaches; they enter the backward loop with a zero once all exits are known."""
        ready = []
        for state in self._map.values():
            for y in state.forward_loop_exits:
                if pending[y.op] == 0:
                    state.pending_exits_count -= 1
                    if y.op not in ys_ops:
                        state.unused_exits.append(y)
                    if state.pending_exits_count == 0:
                        ready.extend(state.unused_exits)
            for e in state.forward_context.loop_enters:
                if pending[e.op] == 0:
                    pending[e.op] = 1
        return ready

    def exit_ready(self, exit_tensor, has_grad):
        """Records that a loop Exit's gradient is complete. Once all exits of its loop are, returns
        (exits with a gradient, exits without one); until then, two empty lists."""
        state = self.grad_state_of(exit_tensor.op, before=False)
        state.deferred_exits.append(exit_tensor)
        state.pending_exits_count -= 1
        if state.pending_exits_count:
            return [], []
        live = [y for y in state.deferred_exits if has_grad(y)]
        state.unused_exits.extend(y for y in state.deferred_exits if not has_grad(y))
        return live, list(state.unused_exits)

    def zeros_like_for_exit(self, val):
        """A zero gradient for an unused loop Exit, built where gradients() runs (or the outer backward loop)."""
        forward = val.op._control_flow_context
        outer = forward.outer_context.get_while_context() if forward.outer_context is not None else None
        outer_state = self._map.get(outer) if outer is not None else None
        if val.dtype is dtypes.resource:
            with outer_state.grad_context.entered() if outer_state else contextlib.nullcontext():
                return state_ops.zeros_like_value(val)
        if outer_state is None:
            if val.shape.is_fully_defined():
                return fill_ops.zeros(val.shape.as_list(), val.dtype)
            return fill_ops.zeros_like(val)
        with outer_state.grad_context.entered():
            if val.shape.is_fully_defined():
                return fill_ops.zeros(val.shape.as_list(), val.dtype)
        with in_context(val.graph, forward.outer_context):
            shape = shape_ops.shape(val)
        stack = outer_state.add_forward_accumulator(shape)
        with outer_state.grad_context.entered():
            return fill_ops.zeros(outer_state.add_backprop_accumulated_value(stack, shape), val.dtype)

    def zeros_like(self, op, index):
        """A zero gradient for output ``index`` of ``op``; call it in op's backward-loop context."""
        if is_loop_switch(op):
            return None
        state = self._map.get(while_context_of(op))
        if state is None:
            return zeros_like_outside_loops(op, index)
        op_ctx = op._control_flow_context
        val = op.outputs[index]
        dead_branch = is_switch(op)
        if val.dtype is dtypes.resource:  # the handle is loop-invariant: its variable's shape is read here
            result = state_ops.zeros_like_value(val)
            if dead_branch:
                result = cf.switch(result, state.saved_predicate(op_ctx.pred))[1 - op_ctx.branch]
            return result
        if val.shape.is_fully_defined():
            result = fill_ops.zeros(val.shape.as_list(), val.dtype)
            if dead_branch:
                result = cf.switch(result, state.saved_predicate(op_ctx.pred))[1 - op_ctx.branch]
            return result
        graph = op.graph
        if dead_branch:  # the shape of the value on the untaken side, computed where that side is live
            with in_context(graph, op_ctx.outer_context):
                val = cf.switch(op.inputs[0], op_ctx.pred)[1 - op_ctx.branch]
                shape = shape_ops.shape(val)
            val.op._control_flow_context = op_ctx
            shape.op._control_flow_context = op_ctx
        else:
            with in_context(graph, op_ctx):
                shape = shape_ops.shape(val)
        with in_context(graph, None):
            stack = state.add_forward_accumulator(shape, dead_branch=dead_branch)
        real_shape = state.add_backprop_accumulated_value(stack, shape, dead_branch)
        return fill_ops.zeros(real_shape, val.dtype)

    def post_processing(self):
        """A loop variable whose next value does not depend on its current one gets a zero gradient
        for every iteration after the first."""
        for state in self._map.values():
            for back_merge in state.switch_map.values():
                if back_merge.op.inputs[0] is back_merge.op.inputs[1]:
                    with on_loop_device(state.forward_context), state.grad_context.entered():
                        going = cf.switch(back_merge, state.grad_context.pivot)[1]
                        back_merge.op._update_input(1, cf.next_iteration(fill_ops.zeros_like(going)))


def zeros_like_outside_loops(op, index):
    """A zero gradient for an output of ``op``; for a cond Switch, live exactly when that side is, so that
    merged with the taken side's gradient it gives a live gradient whichever branch runs."""
    val = op.outputs[index]
    ctx = op._control_flow_context
    if is_switch(op) and ctx is not None and ctx.is_cond_context():
        side = cf.switch(op.inputs[0], ctx.pred)[1 - ctx.branch]
        pivot = array_ops.identity(side)
        with op.graph.control_dependencies([pivot]):
            if val.dtype is dtypes.resource:
                return state_ops.zeros_like_value(side)
            return fill_ops.zeros(shape_ops.shape(side), dtype=val.dtype)
    return _zeros_like(val)


def _zeros_like(val):
    return state_ops.zeros_like_value(val) if val.dtype is dtypes.resource else fill_ops.zeros_like(val)


def maybe_create(between_list, between, call_context):
    """A ControlFlowState when the ops between xs and ys include while-loop exits, else None."""
    state = None
    for op in between_list:  # grows while iterating: every exit of a differentiated loop joins
        if is_loop_exit(op) and op._control_flow_context.back_prop and op._control_flow_context.grad_state is None:
            state = state or ControlFlowState(call_context)
            state.add_while_context(op, between_list, between)
    return state
