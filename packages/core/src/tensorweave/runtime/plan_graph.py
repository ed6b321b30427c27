"""PlanGraph: the runtime's own copy of the sub-graph one ``Session.run`` signature needs.

Passes, the placer and the partitioner rewrite a PlanGraph; the user's Graph is never changed.
"""

import itertools

from tensorweave.framework.apply_op import get_op_def
from tensorweave.framework.graph_io import GraphDef, encode_attrs


class PlanNode:
    """One node: an op type with attrs, data inputs as (node, output index), control inputs, a device."""

    __slots__ = ("name", "op_type", "op_def", "attrs", "inputs", "control_inputs", "requested_device",
                 "device", "output_dtypes", "output_shapes", "source", "index")

    def __init__(self, name, op_type, attrs, inputs, control_inputs, output_dtypes, output_shapes=None,
                 requested_device="", source=None, op_def=None):
        self.name = name
        self.op_type = op_type
        self.op_def = op_def or get_op_def(op_type)
        self.attrs = attrs
        self.inputs = inputs
        self.control_inputs = control_inputs
        self.output_dtypes = output_dtypes
        self.output_shapes = output_shapes or [None] * len(output_dtypes)
        self.requested_device = requested_device
        self.device = None  # full device name once placed
        self.source = source  # the user's Operation, for error messages
        self.index = -1

    @property
    def num_outputs(self):
        return len(self.output_dtypes)

    @property
    def is_stateful(self):
        return self.op_def.is_stateful

    @property
    def role(self):
        return self.op_def.executor_role

    def input_dtypes(self):
        return [src.output_dtypes[i] for src, i in self.inputs]

    def where(self):
        return self.source.where() if self.source is not None else "<runtime>"

    def __repr__(self):
        return f"<PlanNode {self.name} ({self.op_type}) on {self.device or self.requested_device or '?'}>"


class PlanGraph:
    """A list of PlanNodes with helpers to find consumers and rewrite edges."""

    def __init__(self, nodes=()):
        self.nodes = list(nodes)
        self._names = {n.name for n in self.nodes}

    def add(self, node):
        if node.name in self._names:
            node.name = self.unique_name(node.name)
        self._names.add(node.name)
        self.nodes.append(node)
        return node

    def unique_name(self, base):
        name, i = base, 1
        while name in self._names:
            name = f"{base}_{i}"
            i += 1
        return name

    def remove(self, doomed):
        doomed = set(map(id, doomed))
        self.nodes = [n for n in self.nodes if id(n) not in doomed]
        self._names = {n.name for n in self.nodes}

    def consumers(self):
        """node id -> list of (consumer, input position) for data edges, plus control consumers."""
        data, control = {}, {}
        for n in self.nodes:
            for pos, (src, _) in enumerate(n.inputs):
                data.setdefault(id(src), []).append((n, pos))
            for c in n.control_inputs:
                control.setdefault(id(c), []).append(n)
        return data, control

    def by_name(self):
        return {n.name: n for n in self.nodes}

    def topological_order(self):
        """Nodes in an order where inputs come first; NextIteration→Merge back edges are ignored.

        Raises ValueError naming the nodes of a cycle that is not a loop built from control-flow ops.
        """
        outs = {id(n): [] for n in self.nodes}
        indeg = {}
        for n in self.nodes:
            back_edges_possible = n.role == "merge"
            count = 0
            for p in itertools.chain((s for s, _ in n.inputs), n.control_inputs):
                if back_edges_possible and p.role == "next_iteration":
                    continue
                count += 1
                outs[id(p)].append(n)
            indeg[id(n)] = count
        ready = [n for n in self.nodes if indeg[id(n)] == 0]
        order = []
        while ready:
            n = ready.pop()
            order.append(n)
            for m in reversed(outs[id(n)]):
                indeg[id(m)] -= 1
                if indeg[id(m)] == 0:
                    ready.append(m)
        if len(order) != len(self.nodes):
            stuck = [n.name for n in self.nodes if indeg[id(n)] > 0]
            raise ValueError("the graph has a cycle that is not a while loop built from Enter/Merge/Switch/"
                             f"NextIteration/Exit: {', '.join(stuck[:10])}" + (" ..." if len(stuck) > 10 else ""))
        return order

    def __len__(self):
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def as_graph_def(self, nodes=None):
        """A GraphDef of ``nodes`` (default: all) with their devices; attrs holding callables are left out."""
        out = GraphDef()
        for n in self.nodes if nodes is None else nodes:
            node = out.node.add(name=n.name, op=n.op_type, device=n.device or n.requested_device or "")
            node.input.extend([f"{s.name}:{i}" for s, i in n.inputs] + [f"^{c.name}" for c in n.control_inputs])
            encode_attrs(node, n.attrs, n.op_def, strict=False)
        return out

    def describe(self):
        """One line per node, for inspecting a graph before and after a pass."""
        lines = []
        for n in self.nodes:
            ins = [f"{s.name}:{i}" for s, i in n.inputs] + [f"^{c.name}" for c in n.control_inputs]
            lines.append(f"{n.name} = {n.op_type}({', '.join(ins)})" + (f" @{n.device}" if n.device else ""))
        return "\n".join(lines)
