"""Python attr values to and from TensorFlow's AttrValue proto, guided by the attr's kind in the OpDef.

Graphs hold attrs as Python values (DType, TensorShape, numpy arrays, str, int, float, bool, lists); GraphDefs
hold them as AttrValue. Strings are str when they are UTF-8 (Tensorweave's ops compare with str), else bytes.
A function attr is written as TF writes one (NameAttrList): its name plus what the graph records of it.
Attrs of kind ``value`` (Python structures only Tensorweave-only ops hold) are written as tagged JSON text.
"""

import json

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.tensor_proto import make_tensor_proto, tensor_proto_to_array
from tensorweave.protos.framework import AttrValue

_LIST_FIELDS = ("s", "i", "f", "b", "type", "shape", "tensor", "func")
_REF_OFFSET = 100  # TF's DT_FLOAT_REF is DT_FLOAT + 100
_JSON_TAG = b"tensorweave-json:"


def _to_json(v):
    if isinstance(v, dtypes.DType):
        return {"$dtype": v.name}
    if isinstance(v, tensor_shape.TensorShape):
        return {"$shape": None if v.ndims is None else v.as_list()}
    if isinstance(v, (list, tuple)):
        return [_to_json(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _to_json(x) for k, x in v.items()}
    if isinstance(v, np.generic):
        return v.item()
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    raise TypeError(f"{v!r} has no GraphDef form")


def _from_json(v):
    if isinstance(v, list):
        return [_from_json(x) for x in v]
    if isinstance(v, dict):
        if "$dtype" in v:
            return dtypes.as_dtype(v["$dtype"])
        if "$shape" in v:
            return tensor_shape.TensorShape(v["$shape"])
        return {k: _from_json(x) for k, x in v.items()}
    return v


def _fill_shape(shape, out):
    shape = tensor_shape.as_shape(shape)
    out.SetInParent()
    if shape.ndims is None:
        out.unknown_rank = True
    else:
        for d in shape.as_list():
            out.dim.add(size=-1 if d is None else int(d))
    return out


def _fill_func(value, out):
    info = value.to_attr() if hasattr(value, "to_attr") else value
    if not isinstance(info, dict):
        info = {"name": str(info)}
    out.SetInParent()
    out.name = str(info.get("name", ""))
    for key, item in info.items():
        if key != "name":
            out.attr[key].CopyFrom(to_attr_value(item))
    return out


def to_attr_value(value, kind=None):
    """The AttrValue of Python ``value``; ``kind`` (the OpDef's, e.g. "float" or "list(shape)") settles
    ints that are floats, scalars that are tensors and None that is an unknown shape."""
    out = AttrValue()
    if kind == "value" and isinstance(value, (list, tuple, dict)) and not hasattr(value, "to_attr"):
        out.s = _JSON_TAG + json.dumps(_to_json(value)).encode("utf-8")
        return out
    if kind and kind.startswith("list(") and isinstance(value, (list, tuple)):
        _fill_list(value, out.list, kind[5:-1])
        return out
    if value is None:
        if kind == "shape":
            out.shape.unknown_rank = True
        return out
    if isinstance(value, dtypes.DType) or kind == "type":
        out.type = dtypes.as_dtype(value).as_datatype_enum
    elif isinstance(value, tensor_shape.TensorShape) or kind == "shape":
        _fill_shape(value, out.shape)
    elif isinstance(value, np.ndarray) or kind == "tensor":
        out.tensor.CopyFrom(make_tensor_proto(value))
    elif isinstance(value, (bool, np.bool_)):
        out.b = bool(value)
    elif kind == "float" and isinstance(value, (int, float, np.number)):
        out.f = float(value)
    elif isinstance(value, (int, np.integer)):
        out.i = int(value)
    elif isinstance(value, (float, np.floating)):
        out.f = float(value)
    elif isinstance(value, (bytes, str)):
        out.s = value.encode("utf-8") if isinstance(value, str) else value
    elif isinstance(value, (list, tuple)):
        _fill_list(value, out.list, None)
    elif isinstance(value, dict) or hasattr(value, "to_attr"):
        _fill_func(value, out.func)
    else:
        raise TypeError(f"attr value {value!r} ({type(value).__name__}) has no GraphDef form")
    return out


def _fill_list(values, out, kind):
    out.SetInParent()
    for item in values:
        single = to_attr_value(item, kind)
        field = single.WhichOneof("value")
        if field is None or field == "list":
            raise TypeError(f"list attr item {item!r} has no GraphDef form")
        target = getattr(out, field)
        if field in ("shape", "tensor", "func"):
            target.add().CopyFrom(getattr(single, field))
        else:
            target.append(getattr(single, field))


def _dtype(enum):
    return dtypes.as_dtype(enum - _REF_OFFSET if enum > _REF_OFFSET else enum)


def _shape(proto):
    if proto.unknown_rank:
        return tensor_shape.TensorShape(None)
    return tensor_shape.TensorShape([None if d.size < 0 else d.size for d in proto.dim])


def _text(raw, kind):
    if kind == "value" and raw.startswith(_JSON_TAG):
        return _from_json(json.loads(raw[len(_JSON_TAG):]))
    if kind in ("string", "list(string)") or kind is None or kind == "value":
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw
    return raw


def _func(proto):
    out = {"name": proto.name}
    out.update({k: from_attr_value(v) for k, v in proto.attr.items()})
    return out


def _scalar(field, raw, kind):
    if field == "type":
        return _dtype(raw)
    if field == "shape":
        return _shape(raw)
    if field == "tensor":
        return tensor_proto_to_array(raw)
    if field == "s":
        return _text(raw, kind)
    if field == "func":
        return _func(raw)
    if field == "i" and kind == "float":
        return float(raw)
    return raw


def from_attr_value(proto, kind=None):
    """The Python value of AttrValue ``proto`` (None when it holds nothing); ``kind`` as in to_attr_value."""
    field = proto.WhichOneof("value")
    if field is None:
        return [] if kind and kind.startswith("list(") else None
    if field == "list":
        inner = kind[5:-1] if kind and kind.startswith("list(") else None
        for name in _LIST_FIELDS:
            items = getattr(proto.list, name)
            if len(items):
                return [_scalar(name, item, inner) for item in items]
        return []
    if field == "placeholder":
        raise ValueError(f"attr placeholder {proto.placeholder!r} belongs to a function body; function libraries "
                         f"are not imported")
    return _scalar(field, getattr(proto, field), kind)
