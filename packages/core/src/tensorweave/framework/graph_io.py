"""GraphDef / NodeDef: a serializable description of a graph (importing one back: importer.py).

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
