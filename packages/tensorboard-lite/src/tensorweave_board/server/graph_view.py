"""A dataflow graph grouped by name scope, served one scope at a time (scopes start collapsed and open
on demand, so big graphs stay fast).

An op belongs to the scope its name is in ('dense/MatMul' is in 'dense'); an op whose name is also a
scope ('dense/kernel', with 'dense/kernel/read' under it) sits inside that scope. Each edge is drawn once,
between the two children of the deepest scope holding both ends, and counted there.
"""

from collections import Counter, defaultdict


def _source(ref):
    control = ref.startswith("^")
    name = ref[1:] if control else ref
    if ":" in name:
        name = name.rsplit(":", 1)[0]
    return name, control


class GraphView:
    def __init__(self, graph_def, devices=None):
        """``devices`` maps op names to the devices that ran them (from run metadata), for ops that were
        not placed by name in the graph."""
        devices = devices or {}
        self.ops = {}
        for node in graph_def.node:
            device = node.device or devices.get(node.name, "")
            self.ops[node.name] = {"name": node.name, "op": node.op, "device": device, "inputs": list(node.input)}
        prefixes = set()
        for name in self.ops:
            parts = name.split("/")
            prefixes.update("/".join(parts[:i]) for i in range(1, len(parts)))
        self.scope_of = {name: name if name in prefixes else name.rpartition("/")[0] for name in self.ops}
        self.children = defaultdict(set)
        self.op_count = Counter()
        self.device_count = defaultdict(Counter)
        for name, scope in self.scope_of.items():
            self._register_scope(scope)
            self.children[scope].add(("op", name))
            for s in self._ancestors(scope):
                self.op_count[s] += 1
                self.device_count[s][self.ops[name]["device"]] += 1
        self.edges = defaultdict(Counter)
        for name, op in self.ops.items():
            for ref in op["inputs"]:
                src, control = _source(ref)
                if src in self.ops and src != name:
                    self._add_edge(src, name, control)
        self.devices = sorted({op["device"] for op in self.ops.values()})

    def _register_scope(self, scope):
        while scope:
            parent = scope.rpartition("/")[0]
            self.children[parent].add(("scope", scope))
            scope = parent

    @staticmethod
    def _ancestors(scope):
        out = [""]
        parts = scope.split("/") if scope else []
        out += ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        return out

    def _child_in(self, scope, name):
        """The child of ``scope`` that holds op ``name`` (an op named like its scope has the id 'name/')."""
        if name == scope:
            return name + "/"
        if self.scope_of[name] == scope:
            return name
        rest = name[len(scope) + 1:] if scope else name
        return (scope + "/" if scope else "") + rest.split("/")[0]

    def _add_edge(self, src, dst, control):
        a, b = self._ancestors(self.scope_of[src]), self._ancestors(self.scope_of[dst])
        common = ""
        for x, y in zip(a, b):
            if x != y:
                break
            common = x
        cs, cd = self._child_in(common, src), self._child_in(common, dst)
        if cs != cd:
            self.edges[common][(cs, cd, control)] += 1

    def scope(self, path=""):
        """The children of scope ``path`` (ops and sub-scopes, with sizes and devices), and the edges
        between them."""
        if path and path not in self.children:
            raise KeyError(path)
        nodes = []
        for kind, name in sorted(self.children.get(path, ()), key=lambda kn: kn[1]):
            label = name[len(path) + 1:] if path else name
            if kind == "op" and name == path:
                label = name.rpartition("/")[2]
            if kind == "op":
                op = self.ops[name]
                nodes.append({"id": name + "/" if name == path else name, "kind": "op", "label": label,
                              "op": op["op"], "device": op["device"], "inputs": op["inputs"]})
            else:
                devices = self.device_count[name]
                nodes.append({"id": name, "kind": "scope", "label": label, "count": self.op_count[name],
                              "device": devices.most_common(1)[0][0], "devices": dict(devices)})
        edges = [{"source": s, "target": t, "control": c, "count": n}
                 for (s, t, c), n in sorted(self.edges.get(path, {}).items())]
        return {"scope": path, "nodes": nodes, "edges": edges, "devices": self.devices,
                "total_ops": len(self.ops)}
