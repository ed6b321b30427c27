"""Gradients of the control-flow primitives; together they build the backward conds and loops.

A Switch's gradient is a Merge and a Merge's is a Switch. In a loop, an Exit's gradient is an Enter
into the backward loop and a loop variable's Enter gets an Exit; a loop invariant's Enter gets an
accumulation loop summing its gradient over the iterations. A loop Switch is visited twice: from its
Exit side (making the backward Merge) and from the body (closing the backward loop's back edge).
"""

from tensorweave import dtypes
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops as cf
from tensorweave.ops.control_flow_context import output_context


def _dense(grad):
    """Values crossing a loop boundary are dense tensors (the backward loop carries them)."""
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


@cf.SWITCH.set_gradient
def _switch_grad(op, *grads):
    op_ctx = op._control_flow_context
    grad_ctx = op.graph._get_control_flow_context()
    if op_ctx is not None and op_ctx.is_while_context():
        grad_state = grad_ctx.grad_state
        back_merge = grad_state.switch_map.get(op)
        if back_merge is not None:
            if grads[1] is not None:  # second visit, from the body: close the backward loop
                back_merge.op._update_input(1, cf.next_iteration(_dense(grads[1])))
            return [None, None]
        if grads[0] is not None:  # first visit, from the Exit
            back_merge = cf.merge([_dense(grads[0])] * 2, name="b_switch")[0]
            grad_state.switch_map[op] = back_merge
            return [back_merge, None]
        return [None, None]
    if op_ctx is not None and op_ctx.is_cond_context():
        untaken = grads[1 - op_ctx.branch]
        if untaken is None:
            if op.inputs[0].dtype is dtypes.resource and grads[op_ctx.branch] is not None:
                return [cf.merge([grads[op_ctx.branch]] * 2, name="cond_resource_grad")[0], None]
            return [None, None]
        return [cf.merge(list(grads), name="cond_grad")[0], None]
    false_grad = cf.switch(grads[0], op.inputs[1])[0]
    true_grad = cf.switch(grads[1], op.inputs[1])[1]
    return [cf.merge([false_grad, true_grad])[0], None]


@cf.MERGE.set_gradient
def _merge_grad(op, grad, _):
    op_ctx = output_context(op.inputs[0].op)
    grad_ctx = op.graph._get_control_flow_context()
    if op_ctx is not None and op_ctx.is_while_context():
        return list(cf.switch(grad, grad_ctx.pivot))
    if op_ctx is not None and op_ctx.is_cond_context():
        pred = op_ctx.pred
        if grad_ctx is not None and grad_ctx.grad_state is not None:
            pred = grad_ctx.grad_state.saved_predicate(pred)  # the forward loop's pred of this iteration
        return list(cf.switch(grad, pred, name="cond_grad"))
    from tensorweave.ops import comparison_ops
    return [cf.switch(grad, comparison_ops.equal(op.outputs[1], i))[1] for i in range(len(op.inputs))]


@cf.EXIT.set_gradient
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
        result = cf.enter(grad, grad_ctx.name, is_constant=False,
                          parallel_iterations=grad_ctx.parallel_iterations, name="b_exit")
    grad_ctx.loop_enters.append(result)
    return [result]


@cf.NEXT_ITERATION.set_gradient
def _next_iteration_grad(op, grad):
    return [grad]


@cf.ENTER.set_gradient
def _enter_grad(op, grad):
    grad_ctx = op.graph._get_control_flow_context()
    if grad_ctx is None or grad_ctx.grad_state is None or not grad_ctx.back_prop:
        return [grad]
    grad = _dense(grad)
    if op.get_attr("is_constant"):
        return [grad_ctx.grad_state.add_backprop_accumulator(op, grad)]
    result = cf.loop_exit(grad)
    grad_ctx.loop_exits.append(result)
    grad_ctx.exit_result([result])
    return [result]
