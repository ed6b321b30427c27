"""GraphDef / NodeDef / AttrValue: TensorFlow's protos (protos/framework.py), so the bytes are TF's own.

A graph's ops become NodeDefs here (importing them back: importer.py); op types and attrs that differ from
TF's are renamed by tf_op_table. ``parse_graph_def`` reads any GraphDef a user has: binary, text, or the
JSON form earlier Tensorweave versions wrote.
"""

from google.protobuf import message, text_format

from tensorweave.framework import graph_json, tf_op_table
from tensorweave.framework.attr_value import to_attr_value
from tensorweave.protos.framework import AttrValue, GraphDef, NodeDef

__all__ = ["AttrValue", "GraphDef", "NodeDef", "graph_to_graph_def", "node_def_of", "parse_graph_def"]

PRODUCER = 134  # the GraphDef version TF 1.15 writes: real TF reads it without upgrading any op


def _attr_kinds(op_def):
    return {name: attr.kind for name, attr in op_def.attrs.items()}


def encode_attrs(node, attrs, op_def, strict=True):
    """Sets ``node.attr`` from Python ``attrs``. Callables (Python functions) have no GraphDef form: a strict
    encoding refuses them, else they are left out and other Python objects are written as their repr."""
    kinds = _attr_kinds(op_def) if op_def is not None else {}
    for key in sorted(attrs):
        value = attrs[key]
        try:
            node.attr[key].CopyFrom(to_attr_value(value, kinds.get(key)))
        except TypeError:
            if strict:
                raise TypeError(f"attr {key!r} of op {node.name!r} ({node.op}) holds {value!r}, which a GraphDef "
                                f"cannot hold") from None
            del node.attr[key]
            if not callable(value):
                node.attr[key].s = repr(value).encode("utf-8")
    return node


def node_def_of(op, add_shapes=False, strict=False):
    """The NodeDef of Operation ``op`` under TF's op type; ``add_shapes`` adds ``_output_shapes``."""
    node = NodeDef(name=op.name, op=tf_op_table.exported_type(op.type), device=op.device)
    node.input.extend(t.name if t.value_index else t.op.name for t in op.inputs)
    node.input.extend(f"^{c.name}" for c in op.control_inputs)
    attrs = tf_op_table.exported_attrs(op.type, dict(op._attrs))
    if add_shapes:
        attrs["_output_shapes"] = [t.shape for t in op.outputs]
    encode_attrs(node, attrs, op.op_def, strict)
    if add_shapes:
        node.attr["_output_shapes"].CopyFrom(to_attr_value(attrs["_output_shapes"], "list(shape)"))
    return node


def graph_to_graph_def(graph, add_shapes=False, strict=False):
    out = GraphDef()
    out.versions.producer = PRODUCER
    for op in graph.get_operations():
        out.node.add().CopyFrom(node_def_of(op, add_shapes, strict))
    return out


def parse_graph_def(data, what="GraphDef"):
    """A GraphDef from serialized ``data``: TF's binary or text form, or an earlier Tensorweave's JSON."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if graph_json.is_json(data):
        return graph_json.graph_def_from_json(data)
    return parse_proto(GraphDef(), data, what)


def parse_proto(proto, data, what):
    """Fills ``proto`` from binary or text ``data``; a ValueError names ``what`` when neither parses.

    Text starts with a field name or a comment; binary with a tag byte, which is never a letter for these
    messages (field numbers below 8), so a text file is not mistaken for binary with unknown fields."""
    head = data.lstrip()[:1]
    if not (head.isalpha() or head == b"#"):
        try:
            proto.ParseFromString(data)
            return proto
        except message.DecodeError as e:
            error = e
    else:
        error = None
    proto.Clear()
    try:
        text_format.Merge(data.decode("utf-8"), proto)
        return proto
    except (UnicodeDecodeError, text_format.ParseError) as e:
        raise ValueError(f"{what} is neither TensorFlow's binary form ({error or 'starts as text'}) nor its text "
                         f"form: {e}") from None
