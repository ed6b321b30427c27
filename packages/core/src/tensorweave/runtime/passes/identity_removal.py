"""Removal of needless identities: consumers of ``y = Identity(x)`` read ``x`` directly.

An identity is an op of one input whose OpDef says ``is_pass_through`` (Identity, StopGradient,
PreventGradient, a plugin's op so declared). It stays when it means something: it is fetched, it has
control inputs (``control_dependencies``), it is an explicit copy to another device, it has a colocation
request, it carries a resource handle, it reads a value the runtime moved between devices, or it touches
control flow (the pivots of ``cond`` and ``while_loop`` are identities of Switch outputs). ``Snapshot`` is
a copy, not an identity, and always stays.
"""

from tensorweave.runtime.passes.rules import _HANDLE_DTYPES, dedupe


def is_identity(op_def):
    """A pass-through op of exactly one tensor (IdentityN, of a list, and NoOp, of none, are not)."""
    args = op_def.input_args
    return op_def.is_pass_through and len(args) == 1 and not args[0].is_list and len(op_def.output_args) == 1


def _needless(node, data_consumers, control_consumers):
    if not is_identity(node.op_def) or node.control_inputs or "_class" in node.attrs:
        return False
    src, _ = node.inputs[0]
    moved = src.op_def.is_plumbing and not src.op_def.is_placeholder  # a feed's value is the graph's own
    if src.role is not None or moved or node.output_dtypes[0] in _HANDLE_DTYPES:
        return False
    if node.requested_device and node.requested_device != src.requested_device:
        return False
    return (all(c.role is None and not c.op_def.is_plumbing for c, _ in data_consumers) and
            all(c.role is None for c in control_consumers))


def remove_identities(graph, options=None):
    """Bypasses needless identities in place; returns how many were removed."""
    data, control = graph.consumers()
    doomed = []
    for node in graph.topological_order():
        readers, waiters = data.get(id(node), []), control.get(id(node), [])
        if not _needless(node, readers, waiters):
            continue
        src = node.inputs[0]
        for consumer, pos in readers:
            consumer.inputs[pos] = src
        for waiter in waiters:
            waiter.control_inputs = dedupe(src[0] if c is node else c for c in waiter.control_inputs)
        doomed.append(node)
    if doomed:
        graph.remove(doomed)
    return len(doomed)
