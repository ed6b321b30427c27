"""Execution order with low peak memory: among the ops that are ready, run first the one that frees
the most bytes net of what it allocates (it is the last reader of large inputs and makes small
outputs). Computed once per plan; executors follow it, so a step pays nothing for it.
"""

import heapq


def memory_order(order, tensor_bytes):
    """A topological order of the nodes in ``order`` (itself topological; it breaks ties) that keeps
    fewer large tensors alive at once. ``tensor_bytes(node, slot)`` estimates an output's size."""
    position = {id(n): i for i, n in enumerate(order)}
    waiting = {}
    consumers = {}
    readers = {}  # (id(src), slot) -> distinct consumer nodes not yet run
    for node in order:
        preds = set()
        for src, slot in node.inputs:
            if not _back_edge(src, node):
                preds.add(id(src))
                readers.setdefault((id(src), slot), set()).add(id(node))
        for c in node.control_inputs:
            preds.add(id(c))
        preds &= position.keys()
        waiting[id(node)] = len(preds)
        for p in preds:
            consumers.setdefault(p, []).append(node)
    sizes = {}

    def size(src, slot):
        key = (id(src), slot)
        if key not in sizes:
            sizes[key] = tensor_bytes(src, slot)
        return sizes[key]

    def score(node):
        freed = sum(size(src, slot) for src, slot in {(s, i) for s, i in node.inputs}
                    if readers.get((id(src), slot)) == {id(node)})
        made = sum(size(node, s) for s in range(node.num_outputs))
        return made - freed  # lower first

    by_id = {id(n): n for n in order}
    current = {}
    ready = []

    def push(node):
        current[id(node)] = entry = (score(node), position[id(node)], node)
        heapq.heappush(ready, entry)

    for n in order:
        if waiting[id(n)] == 0:
            push(n)
    out = []
    done = set()
    while ready:
        entry = heapq.heappop(ready)
        node = entry[2]
        if id(node) in done or current[id(node)] is not entry:
            continue  # a stale entry: the node's score improved since
        done.add(id(node))
        out.append(node)
        for src, slot in node.inputs:
            left = readers.get((id(src), slot))
            if left is None:
                continue
            left.discard(id(node))
            if len(left) == 1:
                (last,) = left
                if waiting[last] == 0 and last not in done:
                    push(by_id[last])  # it now frees this tensor: its score improved
        for consumer in consumers.get(id(node), ()):
            waiting[id(consumer)] -= 1
            if waiting[id(consumer)] == 0:
                push(consumer)
    if len(out) != len(order):
        return list(order)  # a cycle the caller's order already resolved (loops): keep it
    return out


def _back_edge(src, node):
    return src.role == "next_iteration" and node.role == "merge"
