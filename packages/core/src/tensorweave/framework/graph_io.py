"""GraphDef / NodeDef: a serializable description of a graph, and importing one back.

The byte form (``SerializeToString``) is JSON; tensorboard-lite converts it to TensorBoard's protobuf.
"""

import base64
import json

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape

FORMAT = "tensorweave.GraphDef/1"


class NodeDef:
    __slots__ = ("name", "op", "input", "device", "attr")

    def __init__(self, name, op, input=(), device="", attr=None):  # noqa: A002 - TF's field name
        self.name = name
        self.op = op
        self.input = list(input)
        self.device = device
        self.attr = dict(attr or {})

    def __repr__(self):
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input})"

    def __eq__(self, other):
        return isinstance(other, NodeDef) and _encode_node(self) == _encode_node(other)


class GraphDef:
    def __init__(self, node=(), versions=None):
        self.node = list(node)
        self.versions = versions or {"producer": 1}

    def SerializeToString(self):  # noqa: N802 - TF's method name
        return json.dumps({"format": FORMAT, "versions": self.versions,
                           "node": [_encode_node(n) for n in self.node]}).encode()

    def ParseFromString(self, data):  # noqa: N802
        doc = json.loads(data)
        if doc.get("format") != FORMAT:
            raise ValueError(f"not a serialized tensorweave GraphDef (format {doc.get('format')!r})")
        self.versions = doc.get("versions", {})
        self.node = [_decode_node(n) for n in doc["node"]]
        return self

    @classmethod
    def FromString(cls, data):  # noqa: N802
        return cls().ParseFromString(data)

    def __eq__(self, other):
        return isinstance(other, GraphDef) and self.SerializeToString() == other.SerializeToString()

    def __repr__(self):
        return f"<GraphDef with {len(self.node)} nodes>"


def node_def_of(op, add_shapes=False):
    inputs = [t.name if t.value_index else t.op.name for t in op.inputs]
    inputs += [f"^{c.name}" for c in op.control_inputs]
    attr = dict(op._attrs)
    if add_shapes:
        attr["_output_shapes"] = [t.shape for t in op.outputs]
    return NodeDef(op.name, op.type, inputs, op.device, attr)


def graph_to_graph_def(graph, add_shapes=False):
    return GraphDef([node_def_of(op, add_shapes) for op in graph.get_operations()])


def _encode_value(v):
    if isinstance(v, dtypes.DType):
        return {"type": v.name}
    if isinstance(v, tensor_shape.TensorShape):
        return {"shape": None if v.ndims is None else v.as_list()}
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "O":
            items = [x.decode("latin-1") if isinstance(x, bytes) else str(x) for x in v.reshape(-1)]
            return {"tensor": {"dtype": "string", "shape": list(v.shape), "strings": items}}
        return {"tensor": {"dtype": dtypes.as_dtype(v.dtype).name, "shape": list(v.shape),
                           "data": base64.b64encode(np.ascontiguousarray(v).tobytes()).decode()}}
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, (list, tuple)):
        return {"list": [_encode_value(x) for x in v]}
    if isinstance(v, (bool, int, float, str)) or v is None:
        return {"v": v}
    if hasattr(v, "to_attr"):
        return {"func": v.to_attr()}
    raise TypeError(f"attr value {v!r} cannot be serialized")


def _decode_value(d):
    if "type" in d:
        return dtypes.as_dtype(d["type"])
    if "shape" in d:
        return tensor_shape.TensorShape(d["shape"])
    if "tensor" in d:
        t = d["tensor"]
        if t["dtype"] == "string":
            return np.array([s.encode("latin-1") for s in t["strings"]], dtype=object).reshape(t["shape"])
        dt = dtypes.as_dtype(t["dtype"]).as_numpy_dtype
        return np.frombuffer(base64.b64decode(t["data"]), dtype=dt).reshape(t["shape"]).copy()
    if "bytes" in d:
        return base64.b64decode(d["bytes"])
    if "list" in d:
        return [_decode_value(x) for x in d["list"]]
    if "func" in d:
        return d["func"]
    return d["v"]


def _encode_node(n):
    return {"name": n.name, "op": n.op, "input": n.input, "device": n.device,
            "attr": {k: _encode_value(v) for k, v in sorted(n.attr.items())}}


def _decode_node(d):
    return NodeDef(d["name"], d["op"], d["input"], d.get("device", ""),
                   {k: _decode_value(v) for k, v in d.get("attr", {}).items()})


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None):
    """Adds the nodes of ``graph_def`` to the default graph under scope ``name`` ('import' by default).

    ``input_map`` maps names in ``graph_def`` ('x:0' or 'x') to existing tensors, and control inputs
    ('^x') to existing operations; ``return_elements`` names tensors or ops to return.
    """
    from tensorweave.framework.apply_op import get_op_def
    from tensorweave.framework.graph import get_default_graph

    graph = get_default_graph()
    input_map = {k if k.startswith("^") else _canon(k): v for k, v in (input_map or {}).items()}
    created = {}
    back_edges = []  # (Merge op, input index, NextIteration name): loops are closed once all ops exist
    pending = list(graph_def.node)
    by_name = {n.name: n for n in pending}
    order = _topo_order(pending, by_name)
    prefix = "import" if name is None else name
    with graph.name_scope(prefix) if prefix else _nullcontext():
        for node in order:
            op_def = get_op_def(node.op)
            inputs, controls = [], []
            for ref in node.input:
                if ref.startswith("^"):
                    controls.append(input_map[ref] if ref in input_map else created[ref[1:]])
                    continue
                key = _canon(ref)
                if key in input_map:
                    inputs.append(input_map[key])
                    continue
                src, idx = key.rsplit(":", 1)
                if src in created:
                    inputs.append(created[src].outputs[int(idx)])
                elif node.op == "Merge" and by_name.get(src) is not None and by_name[src].op == "NextIteration":
                    back_edges.append((node.name, len(inputs), src))
                    inputs.append(None)
                else:
                    raise ValueError(f"import_graph_def: node {node.name!r} reads {ref!r}, which is "
                                     + ("not in the GraphDef" if src not in by_name else
                                        "on a cycle that is not a while loop (only NextIteration may feed a Merge "
                                        "back)"))
            if any(t is None for t in inputs):  # a loop Merge: its Enter input stands in until NextIteration exists
                stand_in = next(t for t in inputs if t is not None)
                inputs = [stand_in if t is None else t for t in inputs]
            attrs = {k: v for k, v in node.attr.items() if k != "_output_shapes"}
            from tensorweave.framework.apply_op import _output_dtypes
            op = graph.create_op(op_def, inputs, attrs, _output_dtypes(op_def, attrs), node.name)
            if node.device:
                op._set_device(node.device)
            for c in controls:
                op._add_control_input(c)
            if op_def.shape_fn is not None:
                shapes = op_def.shape_fn(op)
                if isinstance(shapes, tensor_shape.TensorShape):
                    shapes = [shapes]
                for t, s in zip(op.outputs, shapes or []):
                    if s is not None:
                        t._shape = tensor_shape.as_shape(s)
            if "_output_shapes" in node.attr:
                for t, s in zip(op.outputs, node.attr["_output_shapes"]):
                    t.set_shape(s)
            created[node.name] = op
    for merge_name, index, src in back_edges:
        created[merge_name]._update_input(index, created[src].outputs[0])
    if return_elements is None:
        return None
    out = []
    for ref in return_elements:
        if ":" in ref:
            src, idx = ref.rsplit(":", 1)
            out.append(created[src].outputs[int(idx)])
        else:
            out.append(created[ref])
    return out


def _canon(ref):
    return ref if ":" in ref else f"{ref}:0"


def _topo_order(nodes, by_name):
    order, state = [], {}

    def visit(n):
        stack = [(n, False)]
        while stack:
            node, done = stack.pop()
            if done:
                state[node.name] = 2
                order.append(node)
                continue
            if state.get(node.name):
                continue
            state[node.name] = 1
            stack.append((node, True))
            for ref in node.input:
                src = ref[1:] if ref.startswith("^") else ref.rsplit(":", 1)[0]
                if src in by_name and not state.get(src):
                    if by_name[src].op == "NextIteration":
                        continue
                    stack.append((by_name[src], False))

    for n in nodes:
        visit(n)
    return order


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
