"""GradLoopState: what the gradient of one forward while loop adds to the graph.

The forward loop gets an iteration counter; the backward loop (a WhileContext with this grad state)
counts it down, so it runs the iterations in reverse. A forward value the backward pass needs is
pushed on a stack in every forward iteration and popped in the matching backward iteration. Control
edges keep the pushes (and pops) of one iteration before those of the next, however many iterations
run in parallel. Nested loops keep their counts on the outer loop's stacks.
"""

import contextlib

from tensorweave import dtypes
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_ops, comparison_ops, control_flow_ops as cf, fill_ops, math_ops, shape_ops, stack_ops, state_ops,
)
from tensorweave.ops.control_flow_context import create_outside_contexts, in_context, output_context
from tensorweave.ops.while_loop import WhileContext


@contextlib.contextmanager
def on_loop_device(forward_ctx):
    """Builds ops on the forward loop's device: a loop and its gradient loop run on one device."""
    graph = forward_ctx.graph
    with graph.device(None), graph.device(forward_ctx.pivot.op.device):
        yield


def loop_constant_enter_of(value):
    """The constant Enter ``value`` merely forwards (through Identity/Switch), or None."""
    op = value.op
    while op.type in ("Identity", "Switch"):
        op = op.inputs[0].op
    return op if op.type == "Enter" and op.get_attr("is_constant") else None


class GradLoopState:
    def __init__(self, forward_ctx, outer_grad_state, call_context):
        self.forward_context = forward_ctx
        self.outer_grad_state = outer_grad_state
        self.call_context = call_context  # the context tf.gradients was called in; stacks live there
        self.history_map = {}  # forward tensor -> its value in the current backward iteration
        self.switch_map = {}  # forward loop Switch -> the backward loop's Merge
        self.unused_exits = []
        self.deferred_exits = []
        self.forward_loop_exits = list(forward_ctx.loop_exits)
        self.pending_exits_count = len(self.forward_loop_exits)
        self._forward_sync = None
        self._grad_sync = None
        graph = forward_ctx.graph
        with on_loop_device(forward_ctx):
            self._build_counters(graph, forward_ctx, outer_grad_state)

    def _build_counters(self, graph, forward_ctx, outer_grad_state):
        outer_forward = outer_grad_state.forward_context if outer_grad_state else forward_ctx.outer_context
        with in_context(graph, outer_forward):
            count, self.forward_index = self._add_forward_loop_counter()
        outer_grad = outer_grad_state.grad_context if outer_grad_state else outer_forward
        if outer_grad_state is not None:
            outer_forward.add_name(count)
            history_count = outer_grad_state.add_forward_accumulator(count)
        with in_context(graph, outer_grad):
            self.grad_context = WhileContext(graph.unique_name(forward_ctx.name.rstrip("/") + "_grad"),
                                             forward_ctx.parallel_iterations, forward_ctx.back_prop,
                                             forward_ctx.swap_memory, forward_ctx.maximum_iterations, grad_state=self)
            if outer_grad_state is not None:
                count = outer_grad_state.add_backprop_accumulated_value(history_count, count)
            self.grad_index = self._add_backprop_loop_counter(count)

    # ---- the two counters ----------------------------------------------------------------------
    def _add_forward_loop_counter(self):
        """A loop variable counting the forward iterations; returns (its Exit, its NextIteration)."""
        ctx = self.forward_context
        zero = array_ops.constant(0, name="f_count")
        if self.outer_grad_state is not None:
            # the i-th run of this inner loop pushes before the (i+1)-th does
            zero.op._add_control_input(self.outer_grad_state.forward_index.op.inputs[0].op)
        with ctx.entered():
            count = _loop_variable(ctx, zero, "f_count")
            done, going = cf.switch(count, ctx.pivot)
            following = cf.next_iteration(math_ops.add(going, 1), name="f_count")
            total = _close_loop_variable(ctx, count, following, done, "f_count")
        ctx.exit_result([total])
        return total, following

    def _add_backprop_loop_counter(self, count):
        """The backward loop's control: counts ``count`` down to zero; returns its NextIteration."""
        ctx = self.grad_context
        one = array_ops.constant(1, name="b_count")
        with ctx.entered():
            remaining = _loop_variable(ctx, count, "b_count")
            ctx.pivot_for_pred = remaining
            ctx.pivot = cf.loop_cond(comparison_ops.greater_equal(remaining, one), name="b_count")
            done, going = cf.switch(remaining, ctx.pivot)
            index = math_ops.subtract(going, one)
            ctx.pivot_for_body = index
            following = cf.next_iteration(index, name="b_count")
            final = _close_loop_variable(ctx, remaining, following, done, "b_count")
            if self.outer_grad_state is not None:
                # the i-th backward run of this inner loop pops before the (i+1)-th does
                self.outer_grad_state.grad_sync._add_control_input(final.op)
        ctx.exit_result([final])
        return following

    @property
    def forward_sync(self):
        """Orders pushes inside conds of the forward loop before the next iteration's."""
        if self._forward_sync is None:
            self._forward_sync = create_outside_contexts(lambda: cf.control_trigger(name="f_sync"),
                                                         self.forward_context)
            self.forward_index.op._add_control_input(self._forward_sync)
        return self._forward_sync

    @property
    def grad_sync(self):
        """Orders the pops of a backward iteration before the next backward iteration starts."""
        if self._grad_sync is None:
            self._grad_sync = create_outside_contexts(lambda: cf.control_trigger(name="b_sync"), self.grad_context)
            self.grad_index.op._add_control_input(self._grad_sync)
        return self._grad_sync

    # ---- saving forward values -------------------------------------------------------------------
    def add_forward_accumulator(self, value, dead_branch=False):
        """Pushes ``value`` in every forward iteration; returns the stack."""
        graph = value.graph
        with in_context(graph, self.call_context), graph.control_dependencies(None), graph.colocate_with(value.op):
            stack = stack_ops.stack(value.dtype, name="f_acc")
        with in_context(graph, None):
            entered_stack = self.forward_context.add_value(stack)
        value_ctx = output_context(value.op)
        if value_ctx is self.forward_context:
            with value_ctx.entered():
                push = stack_ops.stack_push(entered_stack, value)
            self.forward_index.op._add_control_input(push.op)
        else:
            if value_ctx is None or not value_ctx.is_cond_context():
                raise TypeError(f"internal error: cannot save {value.name} for the gradient of loop "
                                f"{self.forward_context.name!r}: it is not computed in that loop")
            if dead_branch:  # a zero for the untaken side of a Switch, pushed where the branch is dead
                with value_ctx.outer_context.entered():
                    push = stack_ops.stack_push(entered_stack, value)
                push.op._control_flow_context = value_ctx
            else:
                with value_ctx.entered():
                    push = stack_ops.stack_push(entered_stack, value)
            self.forward_sync._add_control_input(push.op)
        push.op._add_control_input(self.forward_index.op.inputs[0].op)
        return stack

    def add_backprop_accumulated_value(self, stack, value, dead_branch=False):
        """Pops the value ``value`` had in the forward iteration matching this backward iteration."""
        graph = value.graph
        cond_ctx = None
        ctx = value.op._control_flow_context
        while ctx is not None and ctx is not stack.op._control_flow_context:
            if ctx.is_cond_context():
                cond_ctx = ctx
                break
            ctx = ctx.outer_context
        with graph.control_dependencies(None), self.grad_context.entered():
            if cond_ctx is not None:  # popped only in iterations where the forward branch pushed
                pred = self._known_predicate(cond_ctx.pred)
                branch = 1 - cond_ctx.branch if dead_branch else cond_ctx.branch
                stack = cf.switch(stack, pred)[branch]
            pop = stack_ops.stack_pop(stack, value.dtype)
        pop._shape = value.shape
        if self.grad_context.parallel_iterations > 1:
            self.grad_sync._add_control_input(pop.op)
        return pop

    def _known_predicate(self, pred):
        state = self
        while state is not None:
            real = state.history_map.get(pred)
            if real is not None:
                return real
            state = state.outer_grad_state
        return pred

    def saved_predicate(self, pred):
        """The value a forward cond's predicate had in the matching forward iteration."""
        real = self.history_map.get(pred)
        if real is None:
            real = self.add_backprop_accumulated_value(self.add_forward_accumulator(pred), pred)
            self.history_map[pred] = real
        return real

    def get_real_value(self, value):
        """The backward-loop stand-in for a forward-loop tensor: a popped value, a cloned constant,
        or (for a loop invariant) the invariant itself."""
        real = self.history_map.get(value)
        if real is not None:
            return real
        current, state, stack = value, self, None
        while True:
            enter_op = loop_constant_enter_of(current)
            if enter_op is not None:
                current = enter_op.inputs[0]
                state = state.outer_grad_state
                if state is None:
                    real = self.grad_context.add_value(current)
                    break
            elif current.op.type == "Const":
                real = array_ops.constant(constant_value(current), dtype=current.dtype)
                break
            else:
                stack = state.add_forward_accumulator(current)
                break
        if real is None:
            real = state.add_backprop_accumulated_value(stack, current)
            if state is not self:
                real = self.grad_context.add_value(real)
        self.history_map[value] = real
        return real

    # ---- accumulating the gradient of a loop invariant -------------------------------------------
    def add_backprop_accumulator(self, enter_op, grad):
        """Sums ``grad`` over the backward iterations: the gradient of a tensor captured by the loop."""
        ctx = self.grad_context
        with in_context(ctx.graph, ctx.outer_context):
            if grad.shape.is_fully_defined():
                start = fill_ops.zeros(grad.shape.as_list(), grad.dtype, name="b_acc")
            else:
                start = fill_ops.zeros(_value_shape(enter_op.inputs[0]), grad.dtype, name="b_acc")
        with ctx.entered():
            total = _loop_variable(ctx, start, "b_acc")
            done, going = cf.switch(total, ctx.pivot)
            result = _close_loop_variable(ctx, total, cf.next_iteration(math_ops.add(going, grad)), done, "b_acc")
        ctx.exit_result([result])
        return result


def _loop_variable(ctx, value, name):
    """``value`` entered into ``ctx`` as a loop variable: its Merge, whose second input ``_close_loop_variable``
    sets to the NextIteration."""
    start = create_outside_contexts(lambda: cf.enter(value, ctx.name, False, ctx.parallel_iterations, name=name), ctx)
    ctx.loop_enters.append(start)
    return cf.merge([start, start], name=name)[0]


def _close_loop_variable(ctx, merged, following, done, name):
    """Feeds ``following`` (a NextIteration) back into the loop variable's Merge; returns its Exit of ``done``."""
    merged.op._update_input(1, following)
    final = cf.loop_exit(done, name=name)
    ctx.loop_exits.append(final)
    return final


def _value_shape(value):
    """The run-time shape of a captured value (the variable's shape for a resource handle)."""
    if value.dtype is dtypes.resource:
        return state_ops.variable_shape(value)
    return shape_ops.shape(value)
