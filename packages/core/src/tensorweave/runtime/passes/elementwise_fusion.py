"""Elementwise fusion: a tree of elementwise ops becomes one ``_FusedElementwise`` node, so a step makes one
kernel call for it and its kernel can reuse the tree's temporaries instead of allocating one array per op.

A tree grows from its root (the op whose value leaves it) towards its inputs, taking a producer when its
OpDef says ``is_elementwise`` (a plugin's op too), it is pure, single-output, and every reader of its value
is already in the tree: no other op, no fetch, no control edge reads it. All ops of a tree have one device
request, no colocation, and the device type they would be placed on has a plain kernel for each of them and one for
``_FusedElementwise``. Control-flow ops never join a tree, so frames and deadness are those of the ops
it replaces. The fused node keeps the root's name, device request and source; its attrs name the
original ops (``runtime/fused_ops.py``). With memory planning on, an op that joins no tree gets a fused node of its
own when its output is known to be ALONE_MIN_BYTES or more: the fused kernel accepts ``out=``, so it can write
over a dying input (a loop's gradient accumulator, for one) where the op's plain kernel allocates.
"""

import heapq

from tensorweave import dtypes
from tensorweave.runtime.fused_ops import FUSED_ELEMENTWISE
from tensorweave.runtime.memory_plan import known_bytes
from tensorweave.runtime.passes.rules import ReplacementPlacement, dedupe, is_pure
from tensorweave.runtime.plan_graph import PlanNode

FUSED_OP = FUSED_ELEMENTWISE.name
MAX_STEPS = 64  # a longer chain is split into several fused nodes
ALONE_MIN_BYTES = 64 << 10  # a fused node costs a lone op about a microsecond: worth it where a buffer is saved
_NOT_VALUES = (dtypes.string, dtypes.resource, dtypes.variant)
_ROUNDED_PER_OP = (dtypes.bfloat16,)  # computed in float32 and rounded by each op's kernel (runtime/kernels.py)


def _candidate(node):
    if not node.op_def.is_elementwise or node.num_outputs != 1 or "_class" in node.attrs or not is_pure(node):
        return False
    kept_apart = _NOT_VALUES + _ROUNDED_PER_OP
    return node.output_dtypes[0] not in kept_apart and not any(t in kept_apart for t in node.input_dtypes())


def fuse_elementwise(graph, options):
    """Replaces trees of two or more elementwise ops (or one, large: see above) by fused nodes, in place; returns
    how many ops were fused."""
    device_mgr, registries = getattr(options, "device_mgr", None), getattr(options, "registries", None)
    if device_mgr is None or registries is None:
        return 0
    order = graph.topological_order()
    position = {id(n): i for i, n in enumerate(order)}
    data, control = graph.consumers()
    placement = ReplacementPlacement(device_mgr, registries, FUSED_ELEMENTWISE, dtypes.float32)
    kind = {id(n): placement.device_type(n) for n in order if _candidate(n)}
    kind = {k: t for k, t in kind.items() if t is not None}
    taken, trees = set(), []
    planning = getattr(options, "graph_options", None) is not None and options.graph_options.memory_planning_enabled()
    for root in reversed(order):
        if id(root) in kind and id(root) not in taken:
            tree = _grow(root, kind, taken, position, data, control)
            if len(tree) > 1 or planning and (known_bytes(root) or 0) >= ALONE_MIN_BYTES:
                trees.append(tree)
                taken.update(id(n) for n in tree)
    # producers' trees first, so a later tree reads the fused nodes before it; one removal for all trees
    fused = [_fuse(sorted(tree, key=lambda n: position[id(n)]), data, control) for tree in reversed(trees)]
    graph.remove([n for tree in trees for n in tree])
    for node in fused:
        graph.add(node)
    return sum(len(t) for t in trees)


def _grow(root, kind, taken, position, data, control):
    """The root and the producers that can join its tree, found from the root towards its inputs."""
    members = {id(root)}
    tree = [root]
    frontier = [(-position[id(src)], id(src), src) for src, _ in root.inputs]
    heapq.heapify(frontier)
    seen = set()
    while frontier and len(tree) < MAX_STEPS:
        _, key, node = heapq.heappop(frontier)  # latest first: its readers in the tree are decided
        if key in seen:
            continue
        seen.add(key)
        if (key not in kind or key in taken or kind[key] != kind[id(root)] or control.get(key) or
                node.requested_device != root.requested_device or
                any(id(reader) not in members for reader, _ in data.get(key, ()))):
            continue
        members.add(key)
        tree.append(node)
        for src, _ in node.inputs:
            heapq.heappush(frontier, (-position[id(src)], id(src), src))
    return tree


def _fuse(steps, data, control):
    """The fused node for ``steps`` (in evaluation order; the last is the root), with the root's readers
    rewired to it; the caller swaps it into the graph for the steps."""
    index = {id(n): i for i, n in enumerate(steps)}
    outside = _dedupe_edges((src, slot) for n in steps for src, slot in n.inputs if id(src) not in index)
    register = {(id(src), slot): r for r, (src, slot) in enumerate(outside)}
    operands = [[len(outside) + index[id(src)] if id(src) in index else register[(id(src), slot)]
                 for src, slot in n.inputs] for n in steps]
    root = steps[-1]
    attrs = {
        "Tin": [src.output_dtypes[slot] for src, slot in outside],
        "T": root.output_dtypes[0],
        "fused_ops": [n.op_type for n in steps],
        "fused_names": [n.source.name if n.source is not None else n.name for n in steps],
        "fused_operands": operands,
        "fused_attrs": [[[k, v] for k, v in sorted(n.attrs.items()) if not k.startswith("_")] for n in steps],
        "fused_dtypes": [n.output_dtypes[0] for n in steps],
    }
    fused = PlanNode(root.name, FUSED_OP, attrs, list(outside),
                     dedupe(c for n in steps for c in n.control_inputs), [root.output_dtypes[0]],
                     [root.output_shapes[0]], requested_device=root.requested_device, source=root.source,
                     op_def=FUSED_ELEMENTWISE)
    for reader, pos in data.get(id(root), ()):
        reader.inputs[pos] = (fused, 0)
    for waiter in control.get(id(root), ()):
        waiter.control_inputs = dedupe(fused if c is root else c for c in waiter.control_inputs)
    return fused


def _dedupe_edges(edges):
    """(node, slot) pairs in order without repeats."""
    seen, out = set(), []
    for src, slot in edges:
        if (id(src), slot) not in seen:
            seen.add((id(src), slot))
            out.append((src, slot))
    return out
