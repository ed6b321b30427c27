"""Reads the JSON GraphDefs earlier Tensorweave versions wrote (``tensorweave.GraphDef/1``) into TF's
GraphDef proto, so old files still load; only TF's form is written now."""

import base64
import json

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.attr_value import to_attr_value
from tensorweave.protos.framework import GraphDef

FORMAT = "tensorweave.GraphDef/1"


def is_json(data):
    return data.lstrip()[:1] == b"{"


def _value(d):
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
        return [_value(x) for x in d["list"]]
    if "func" in d:
        return d["func"]
    return d["v"]


def graph_def_from_doc(doc):
    """The GraphDef of a decoded JSON document (also the ``graph_def`` of an old JSON meta graph)."""
    if doc.get("format") != FORMAT:
        raise ValueError(f"not a serialized Tensorweave GraphDef (format {doc.get('format')!r})")
    out = GraphDef()
    out.versions.producer = int(doc.get("versions", {}).get("producer", 1))
    for n in doc["node"]:
        node = out.node.add(name=n["name"], op=n["op"], device=n.get("device", ""))
        node.input.extend(n["input"])
        for key, value in n.get("attr", {}).items():
            node.attr[key].CopyFrom(to_attr_value(_value(value)))
        if node.op == "MergeV2Checkpoints" and "N" in node.attr:
            _pack_merge_prefixes(out, node)
    return out


def _pack_merge_prefixes(graph_def, node):
    """Earlier versions' MergeV2Checkpoints took N prefixes; TF's (and now Tensorweave's) takes one vector."""
    count = node.attr["N"].i
    del node.attr["N"]
    data = [i for i in node.input if not i.startswith("^")]
    controls = [i for i in node.input if i.startswith("^")]
    pack = graph_def.node.add(name=f"{node.name}/checkpoint_prefixes", op="Pack", device=node.device)
    pack.input.extend(data[:count])
    pack.attr["N"].i = count
    pack.attr["T"].type = dtypes.string.as_datatype_enum
    pack.attr["axis"].i = 0
    del node.input[:]
    node.input.extend([pack.name, *data[count:], *controls])


def graph_def_from_json(data):
    return graph_def_from_doc(json.loads(data))
