"""Removal of needless identities: consumers of ``y = Identity(x)`` read ``x`` directly.

An identity stays when it means something: it is fetched, it has control inputs
(``control_dependencies``), it is an explicit copy to another device, it has a colocation request, it
carries a resource handle, or it touches control flow (the pivots of ``cond`` and ``while_loop`` are
identities of Switch outputs). ``Snapshot`` is a copy, not an identity, and always stays.
"""

from tensorweave.runtime.passes.rules import RUNTIME_OPS, _HANDLE_DTYPES, dedupe

IDENTITY_OPS = frozenset(("Identity", "StopGradient", "PreventGradient"))


def _needless(node, data_consumers, control_consumers):
    if node.op_type not in IDENTITY_OPS or node.control_inputs or "_class" in node.attrs:
        return False
    src, _ = node.inputs[0]
    if src.role is not None or src.op_type in RUNTIME_OPS - {"_Arg"} or node.output_dtypes[0] in _HANDLE_DTYPES:
        return False
    if node.requested_device and node.requested_device != src.requested_device:
        return False
    return (all(c.role is None and c.op_type != "_Retval" for c, _ in data_consumers) and
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
