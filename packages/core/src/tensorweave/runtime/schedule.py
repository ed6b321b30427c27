"""Execution order with low peak memory: among the ops that are ready, run first the one that frees
the most bytes net of what it allocates (it is the last reader of large inputs and makes small
outputs). Computed once per plan; executors follow it, so a step pays nothing for it.
"""

import heapq


def memory_order(order, tensor_bytes):
    """A topological order of the nodes in ``order`` (itself topological; it breaks ties) that keeps
    fewer large tensors alive at once. ``tensor_bytes(node, slot)`` estimates an output's size."""
    count = len(order)
    position = {id(n): i for i, n in enumerate(order)}
    waiting = [0] * count
    consumers = [[] for _ in range(count)]
    reads = [()] * count  # per node: the distinct tensors (producer position, slot) it reads
    readers = {}  # tensor -> positions of the nodes reading it
    for i, node in enumerate(order):
        tensors, preds = set(), set()
        for src, slot in node.inputs:
            p = position.get(id(src))
            if p is None or src.role == "next_iteration" and node.role == "merge":
                continue
            tensors.add((p, slot))
            preds.add(p)
        for c in node.control_inputs:
            p = position.get(id(c))
            if p is not None:
                preds.add(p)
        reads[i] = tuple(tensors)
        for t in tensors:
            readers.setdefault(t, []).append(i)
        waiting[i] = len(preds)
        for p in preds:
            consumers[p].append(i)
    left = {t: len(r) for t, r in readers.items()}  # readers not yet run
    sizes = {}

    def size(t):
        b = sizes.get(t)
        if b is None:
            b = sizes[t] = tensor_bytes(order[t[0]], t[1])
        return b

    def score(i):  # bytes it allocates minus bytes it frees: lower first
        made = sum(size((i, s)) for s in range(len(order[i].output_dtypes)) if (i, s) in left)
        return made - sum(size(t) for t in reads[i] if left[t] == 1)

    current = [None] * count
    ready = []
    for i in range(count):
        if waiting[i] == 0:
            current[i] = entry = (score(i), i)
            ready.append(entry)
    heapq.heapify(ready)
    done = [False] * count
    out = []
    while ready:
        entry = heapq.heappop(ready)
        i = entry[1]
        if done[i] or current[i] is not entry:
            continue  # stale: the node's score improved since
        done[i] = True
        out.append(order[i])
        for t in reads[i]:
            left[t] -= 1
            if left[t] == 1:
                last = next(r for r in readers[t] if not done[r])
                if waiting[last] == 0:
                    current[last] = entry = (score(last), last)  # it now frees this tensor
                    heapq.heappush(ready, entry)
        for c in consumers[i]:
            waiting[c] -= 1
            if waiting[c] == 0:
                current[c] = entry = (score(c), c)
                heapq.heappush(ready, entry)
    if len(out) != count:
        return list(order)  # a cycle the caller's order already resolved (loops): keep it
    return out
