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
    return out


def graph_def_from_json(data):
    return graph_def_from_doc(json.loads(data))
