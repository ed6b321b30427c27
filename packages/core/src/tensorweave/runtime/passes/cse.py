"""Common subexpression elimination: two pure nodes with the same op, attrs, inputs, control inputs
and device request compute the same value, so consumers of the second read the first.

Stateful and random ops are never merged (two ``random_uniform`` calls must differ); nor are
control-flow ops, feeds and fetches.
"""

from tensorweave.runtime.passes.rules import attr_key, dedupe, is_pure


def node_key(node):
    inputs = [(id(src), slot) for src, slot in node.inputs]
    if node.op_def.is_commutative and len(inputs) == 2:
        inputs.sort()
    return (node.op_type, node.requested_device, tuple(sorted((k, attr_key(v)) for k, v in node.attrs.items())),
            tuple(inputs), frozenset(id(c) for c in node.control_inputs))


def eliminate_common_subexpressions(graph, options=None):
    """Merges equivalent pure nodes in place; returns how many nodes were removed."""
    representative = {}
    first_with_key = {}
    doomed = []
    for node in graph.topological_order():
        if representative:
            node.inputs = [(representative.get(id(src), src), slot) for src, slot in node.inputs]
            node.control_inputs = dedupe(representative.get(id(c), c) for c in node.control_inputs)
        if not is_pure(node):
            continue
        first = first_with_key.setdefault(node_key(node), node)
        if first is not node:
            representative[id(node)] = first
            doomed.append(node)
    if doomed:
        graph.remove(doomed)
    return len(doomed)
