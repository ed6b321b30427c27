"""The white paper's placement heuristic: a simulated execution of the graph in topological order
that puts each op whose device is still open on the device where it would finish first, counting
the device's queue, the op's estimated or measured time there, and the transfers its inputs need.

An op leaves the device that holds most of its inputs only when another finishes it sooner by more
than ``MOVE_GAIN``, so cheap ops (constants, variable handles) never scatter across devices. A
constant free to go anywhere waits for its first consumer's choice and joins it.
"""

from tensorweave.runtime.cost_model import TRANSFER_SECONDS

MOVE_GAIN = 2 * TRANSFER_SECONDS


def simulate_placement(order, group_of, decided, open_groups, cost_model):
    """Fills ``decided`` (group index -> Device) for every group in ``open_groups`` (group index ->
    candidate devices, in preference order). ``group_of`` maps id(node) to its group index."""
    free = {}
    done = {}  # id(node) -> (simulated finish time, device)
    group_sizes = {}
    for group in group_of.values():
        group_sizes[group] = group_sizes.get(group, 0) + 1
    waiting = {}  # id(constant) -> constant, placed with its first consumer
    for node in order:
        group = group_of[id(node)]
        device = decided.get(group)
        if device is None and _follows_consumer(node, group_sizes[group]):
            waiting[id(node)] = node
            continue
        if device is None:
            device = decided[group] = _best(node, open_groups[group], done, free, cost_model)
        for src in [s for s, _ in node.inputs] + list(node.control_inputs):
            if id(src) in waiting:
                _settle(waiting.pop(id(src)), device, group_of, decided, open_groups, done, free, cost_model)
        end = _ready_time(node, device, done, free, cost_model) + cost_model.compute_seconds(node, device)
        free[device.name] = end
        done[id(node)] = (end, device)
    for node in waiting.values():  # nothing placed reads them (targets): the first candidate
        decided[group_of[id(node)]] = open_groups[group_of[id(node)]][0]
    return decided


def _follows_consumer(node, group_size):
    return group_size == 1 and not node.inputs and not node.control_inputs and node.op_type == "Const"


def _settle(node, device, group_of, decided, open_groups, done, free, cost_model):
    group = group_of[id(node)]
    candidates = open_groups[group]
    chosen = next((d for d in candidates if d.name == device.name), candidates[0])
    decided[group] = chosen
    end = free.get(chosen.name, 0.0) + cost_model.compute_seconds(node, chosen)
    free[chosen.name] = end
    done[id(node)] = (end, chosen)


def _ready_time(node, device, done, free, cost_model):
    t = free.get(device.name, 0.0)
    edges = [(src, slot) for src, slot in node.inputs] + [(c, None) for c in node.control_inputs]
    for src, slot in edges:
        info = done.get(id(src))
        if info is None:  # a loop's back edge: not simulated
            continue
        end, where = info
        if where.name != device.name:
            nbytes = 0 if slot is None else cost_model.tensor_bytes(src, slot)
            end += cost_model.transfer_seconds(nbytes, where, device)
        t = max(t, end)
    return t


def _best(node, candidates, done, free, cost_model):
    held = {}
    for src, slot in node.inputs:
        info = done.get(id(src))
        if info is not None:
            held[info[1].name] = held.get(info[1].name, 0) + cost_model.tensor_bytes(src, slot) + 1
    rank = {d.name: i for i, d in enumerate(candidates)}
    default = max(candidates, key=lambda d: (held.get(d.name, 0), -rank[d.name]))
    finish = {d.name: _ready_time(node, d, done, free, cost_model) + cost_model.compute_seconds(node, d)
              for d in candidates}
    best = min(candidates, key=lambda d: (finish[d.name], rank[d.name]))
    return best if finish[best.name] < finish[default.name] - MOVE_GAIN else default
