"""The placer: assigns every node of a PlanGraph to a device.

It honours explicit device requests (partial specs allowed), colocation groups (``colocate_with``,
and every op that uses a resource sits with the resource), kernel availability per device and
dtype, soft placement, and earlier placements of stateful ops. A loop's Enter and NextIteration sit
with their Merge and an Exit with its Switch (the partitioner carries the rest of a loop across
devices). Among the devices of the preferred type that remain, the cost model's simulated execution
chooses (``placement_sim``); without a cost model, the first of them.
"""

import sys

from tensorweave import dtypes, errors
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.runtime.kernels import find_kernel_def, no_kernel_error
from tensorweave.runtime.placement_sim import simulate_placement
from tensorweave.runtime.plan_graph import PlanNode

_ANYWHERE = ("arg", "retval", "switch", "merge", "enter", "exit", "next_iteration", "loop_cond")


class _UnionFind:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while self.parent.get(x, x) != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def colocation_groups(graph):
    """Lists of nodes that must share a device."""
    uf = _UnionFind()
    for n in graph.nodes:
        uf.find(id(n))
        for group in n.attrs.get("_class", ()):
            uf.union(id(n), ("loc", group))
        uf.union(id(n), ("loc", f"loc:@{n.name}"))
        for src, slot in n.inputs:
            if src.output_dtypes[slot] is dtypes.resource and n.role not in _ANYWHERE:
                uf.union(id(n), id(src))
            if _loop_bound(src, n):
                uf.union(id(n), id(src))
    groups = {}
    for n in graph.nodes:
        groups.setdefault(uf.find(id(n)), []).append(n)
    return list(groups.values())


def _loop_bound(src, dst):
    """Edges of a loop that must not cross devices: an Enter's value exists only in iteration 0, a
    NextIteration feeds the next iteration of its Merge, and an Exit's value only in the last one."""
    if src.role == "enter" and not src.attrs.get("is_constant", False):
        return True
    return (src.role, dst.role) in (("next_iteration", "merge"), ("switch", "exit"))


def has_kernel(registries, node, device_type):
    if node.role in _ANYWHERE or node.op_type in ("_Arg", "_Retval"):
        return True
    return find_kernel_def(registries, node, device_type) is not None


def place(graph, device_mgr, registries, config=None, sticky=None, cost_model=None, order=None):
    """Sets ``node.device`` for every node. ``sticky`` maps op names to earlier devices (kept).

    With a ``cost_model``, groups that could go on several devices are placed by simulated
    execution over ``order`` (a topological order of the graph).
    """
    sticky = {} if sticky is None else sticky
    soft = bool(config and config.allow_soft_placement)
    host = device_mgr.host_device()
    groups = colocation_groups(graph)
    partners = _GraphPartners(sticky) if len({d.device_type for d in device_mgr.devices}) > 1 else None
    decided, open_groups = {}, {}
    for index, group in enumerate(groups):
        if all(n.op_type in ("_Arg", "_Retval") for n in group):
            decided[index] = host
            continue
        candidates = _candidates(group, device_mgr, registries, soft, partners.of(group) if partners else ())
        previous = [sticky[n.name] for n in group if n.name in sticky]
        chosen = next((d for d in candidates if d.name in previous), None)
        if chosen is None and previous:
            raise _moved_state_error(group, sticky, previous[0], device_mgr, registries)
        if chosen is None and (cost_model is None or len(candidates) == 1):
            chosen = candidates[0]
        if chosen is None:
            open_groups[index] = candidates
        else:
            decided[index] = chosen
    if open_groups:
        group_of = {id(n): index for index, group in enumerate(groups) for n in group}
        simulate_placement(order or graph.topological_order(), group_of, decided, open_groups, cost_model)
    for index, group in enumerate(groups):
        device = decided[index]
        for n in group:
            n.device = device.name if device is not None else ""
            if n.is_stateful:
                sticky[n.name] = n.device
    if config is not None and config.log_device_placement:
        log_placement(graph)


def log_placement(graph):
    """TF1's ``log_device_placement`` lines: ``<op name>: (<op type>): <device>``, on stderr."""
    for n in graph.nodes:
        if n.op_type not in ("_Arg", "_Retval"):
            print(f"{n.name}: ({n.op_type}): {n.device}", file=sys.stderr)


def log_transfers(parts, device_mgr):
    """One ``log_device_placement`` line per cross-device edge the partitioner made: its _Recv, both devices
    and how the value moves (``host to device`` and back copy between memories; host to host hands it over)."""
    for nodes in parts.values():
        for n in nodes:
            if n.op_type != "_Recv":
                continue
            kinds = []
            for name in (n.attrs["send_device"], n.device):
                try:
                    kinds.append("host" if device_mgr.lookup(name).is_host else "device")
                except (errors.InvalidArgumentError, ValueError):
                    kinds.append("remote")
            print(f"{n.name}: (_Recv): {n.device} <- {n.attrs['send_device']} ({kinds[0]} to {kinds[1]})",
                  file=sys.stderr)


class _GraphPartners:
    """Ops of the user's graph outside this run that will share a device with state placed for the first time.

    TF places the whole graph at once, so a variable lands where every op colocated with it has a kernel. A plan
    here holds only what one run needs, and state stays where its first run put it: a queue colocated with
    ``global_step`` (SyncReplicasOptimizer's token queue) would find it, in a later run, on a GPU where the queue
    has no kernel. So a group holding new state also weighs its partners in the whole graph: ops colocated with
    it (transitively) and ops that use its resources."""

    def __init__(self, sticky):
        self._sticky = sticky
        self._indexes = {}

    def of(self, group):
        fresh = [n.source for n in group if n.is_stateful and n.name not in self._sticky and n.source is not None]
        if not fresh:
            return ()
        by_location, users = self._index(fresh[0].graph)
        in_group = {n.name for n in group}
        found, pending = {}, list(fresh)
        while pending:
            op = pending.pop()
            for other in [*(o for loc in op.colocation_groups() for o in by_location.get(loc, ())),
                          *by_location.get(f"loc:@{op.name}", ()), *users.get(op.name, ())]:
                if other.name not in found and other.name not in in_group:
                    found[other.name] = other
                    pending.append(other)
        return [_kernel_probe(op) for op in found.values()]

    def _index(self, graph):
        """{colocation name: ops in that group}, {op name: ops using its resource outputs}, for one graph."""
        index = self._indexes.get(id(graph))
        if index is None:
            by_location, users = {}, {}
            for op in graph.get_operations():
                for loc in op.colocation_groups():
                    by_location.setdefault(loc, []).append(op)
                if op.op_def.executor_role not in _ANYWHERE:
                    for t in op.inputs:
                        if t.dtype is dtypes.resource:
                            users.setdefault(t.op.name, []).append(op)
            index = self._indexes[id(graph)] = (by_location, users)
        return index


def _kernel_probe(op):
    """A PlanNode of ``op`` with what kernel lookup reads (type, attrs, role), for ``has_kernel``."""
    return PlanNode(op.name, op.type, dict(op.attrs), [], [], [t.dtype for t in op.outputs], source=op,
                    op_def=op.op_def)


def _candidates(group, device_mgr, registries, soft, partners=()):
    """The devices of the preferred type that satisfy the group's requests and have its kernels (and, where the
    group holds new state, its partners' kernels too when some device type has them all)."""
    spec = DeviceSpec()
    explicit = None
    for n in group:
        if not n.requested_device:
            continue
        req = DeviceSpec.from_string(n.requested_device)
        if not spec.is_compatible_with(req):
            if not soft:
                raise errors.InvalidArgumentError(None, n.source, (
                    f"cannot colocate op {_describe(n)} requested on {n.requested_device!r} with "
                    f"{_describe(explicit)} requested on {explicit.requested_device!r}: they are in one colocation "
                    f"group (colocate_with, a shared resource, or a loop's Enter/Merge/NextIteration or "
                    f"Switch/Exit). Make the requests agree, or set "
                    f"allow_soft_placement=True."))
            continue
        spec.merge_from(req)
        explicit = explicit or n
    devices = device_mgr.matching(spec)
    type_ok = {}

    def runs_on(device):
        ok = type_ok.get(device.device_type)
        if ok is None:
            ok = type_ok[device.device_type] = all(has_kernel(registries, n, device.device_type) for n in group)
        return ok

    def partners_run_on(device):
        return all(has_kernel(registries, p, device.device_type) for p in partners)

    # devices come in priority order
    preferred = next((d for d in devices if runs_on(d) and partners_run_on(d)), None) if partners else None
    preferred = preferred or next((d for d in devices if runs_on(d)), None)
    if preferred is not None:
        return [d for d in devices if d.device_type == preferred.device_type]
    everywhere = [d for d in device_mgr.matching(DeviceSpec(spec.job, spec.replica, spec.task)) if runs_on(d)]
    if soft and everywhere:
        return everywhere
    if not devices and explicit is not None:
        with_kernel = ", ".join(d.name for d in everywhere) or "none"
        raise errors.InvalidArgumentError(None, explicit.source, (
            f"cannot assign a device for operation {_describe(explicit)}: it was explicitly "
            f"requested on {explicit.requested_device!r}, but no such device exists here. Devices: "
            f"{', '.join(device_mgr.names()) or 'none'}. Devices with a kernel for it: {with_kernel}. "
            f"Change the tf.device() scope, or set ConfigProto(allow_soft_placement=True). "
            f"Op created at {explicit.where()}."))
    missing = next(n for n in group if not any(has_kernel(registries, n, d.device_type) for d in devices)) \
        if devices else group[0]
    if explicit is not None and everywhere:
        raise errors.InvalidArgumentError(None, missing.source, (
            f"cannot assign a device for operation {_describe(missing)}: the requested device "
            f"{spec.to_string()!r} has no kernel for it"
            + (f" (with dtypes {_type_attrs(missing)})" if _type_attrs(missing) else "")
            + f". Devices with a kernel for it: {', '.join(d.name for d in everywhere)}. Change the "
            f"tf.device() scope or set ConfigProto(allow_soft_placement=True). Op created at {missing.where()}."))
    raise no_kernel_error(registries, missing, device_mgr)


def _moved_state_error(group, sticky, device_name, device_mgr, registries):
    """A stateful op keeps the device an earlier run gave it (its state lives there): say what cannot follow."""
    held = next(n for n in group if sticky.get(n.name) == device_name)
    device = next((d for d in device_mgr.devices if d.name == device_name), None)
    lacking = [n for n in group if device is not None and not has_kernel(registries, n, device.device_type)]
    why = (f"{_describe(lacking[0])}, colocated with it, has no {device.device_type} kernel" if lacking else
           "this run's device requests for its colocation group exclude that device")
    return errors.InvalidArgumentError(None, held.source, (
        f"cannot place {_describe(held)} on another device than {device_name}, where an earlier run of this "
        f"session placed it and its state lives: {why}. Pin the group with tf.device() before the first run "
        f"(e.g. on the CPU), or avoid the op. Op created at {held.where()}."))


def _describe(node):
    """The user's op name and type (a node the passes made, such as a folded constant, names its origin)."""
    source = node.source
    if source is not None and source.name != node.name:
        return f"{source.name!r} ({source.type}; computed as {node.name!r})"
    return f"{node.name!r} ({node.op_type})"


def _type_attrs(node):
    return {k: v.name for k, v in node.attrs.items() if isinstance(v, dtypes.DType)}
