"""Partial execution: copy only the ops the fetches need, cut at fed tensors, into a PlanGraph."""

from tensorweave import errors
from tensorweave.runtime.plan_graph import PlanGraph, PlanNode


def build_plan_graph(fetch_tensors, target_ops, feed_tensors):
    """Returns (plan graph, arg nodes in feed order, retval nodes in fetch order).

    Fed tensors become ``_Arg`` nodes (their producers run only if something else needs them);
    fetched tensors feed ``_Retval`` nodes. A control dependency on a fed Placeholder waits for its feed.
    """
    fed = {(t.op, t.value_index): i for i, t in enumerate(feed_tensors)}
    needed = []
    seen = set()
    stack = [t.op for t in fetch_tensors if (t.op, t.value_index) not in fed] + list(target_ops)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        needed.append(op)
        for t in op.inputs:
            if (t.op, t.value_index) not in fed and t.op not in seen:
                stack.append(t.op)
        for c in op.control_inputs:
            if c not in seen and not _is_fed_placeholder(c, fed):
                stack.append(c)
    _check_placeholders(needed)
    graph = PlanGraph()
    args = []
    for i, t in enumerate(feed_tensors):
        node = PlanNode(f"_arg_{_safe(t.name)}", "_Arg", {"index": i, "T": t.dtype}, [], [], [t.dtype],
                        [t.shape], source=t.op)
        args.append(graph.add(node))
    copies = {}
    for op in sorted(needed, key=lambda o: o._id):
        copies[op] = graph.add(PlanNode(op.name, op.type, dict(op._attrs), [], [],
                                        [t.dtype for t in op.outputs], [t.shape for t in op.outputs],
                                        requested_device=op.device, source=op, op_def=op.op_def))
    for op, node in copies.items():
        for t in op.inputs:
            key = (t.op, t.value_index)
            node.inputs.append((args[fed[key]], 0) if key in fed else (copies[t.op], t.value_index))
        node.control_inputs = [args[fed[(c, 0)]] if _is_fed_placeholder(c, fed) else copies[c]
                               for c in op.control_inputs]
    retvals = []
    for i, t in enumerate(fetch_tensors):
        key = (t.op, t.value_index)
        src = (args[fed[key]], 0) if key in fed else (copies[t.op], t.value_index)
        retvals.append(graph.add(PlanNode(f"_retval_{_safe(t.name)}", "_Retval", {"index": i, "T": t.dtype},
                                          [src], [], [], source=t.op)))
    return graph, args, retvals


def _is_fed_placeholder(op, fed):
    return op.op_def.is_placeholder and (op, 0) in fed


def _safe(name):
    return name.replace(":", "_")


def _check_placeholders(ops):
    for op in ops:
        if op.op_def.is_placeholder and not op.inputs and op._control_flow_context is None:  # no default value
            shape = op.outputs[0].shape
            shape_text = "" if shape.ndims is None else f" and shape {shape.as_list()}".replace("None", "?")
            raise errors.InvalidArgumentError(
                None, op, f"You must feed a value for placeholder tensor {op.name!r} with dtype "
                          f"{op.outputs[0].dtype.name}{shape_text} (created at {op.where()}); "
                          f"pass it in feed_dict={{{op.name}: value}}")
