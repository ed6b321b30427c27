"""Meta graphs: a graph plus its Saver's names (SaverDef), its collections and the OpDefs it uses, as TF's
MetaGraphDef proto, so a checkpoint can be restored into a program that did not build the model
(``tf.train.import_meta_graph``, in saver.py: it makes the Saver) and real TensorFlow reads what is written.

``read_meta_graph_file`` also reads the JSON meta graphs earlier Tensorweave versions wrote."""

import importlib.metadata
import json
import os

from google.protobuf import text_format

from tensorweave.formats import checkpoint_format
from tensorweave.framework import graph as graph_mod, graph_json
from tensorweave.framework.apply_op import get_op_def
from tensorweave.framework.attr_value import to_attr_value
from tensorweave.framework.graph_io import parse_proto
from tensorweave.protos.meta_graph import CollectionDef, MetaGraphDef, OpDef, OpList, SaverDef
from tensorweave.train import meta_graph_collections

__all__ = ["CollectionDef", "MetaGraphDef", "SaverDef", "export_meta_graph", "read_meta_graph_file", "write_graph"]

LEGACY_FORMAT = "tensorweave-metagraph/1"
TENSORFLOW_VERSION = "1.15.5"  # the TF1 whose API Tensorweave follows, recorded as the writer's version


def _writer():
    try:
        return f"tensorweave-{importlib.metadata.version('tensorweave-core')}"
    except importlib.metadata.PackageNotFoundError:
        return "tensorweave"


def _op_def_proto(op_def):
    """TF's OpDef of a Tensorweave OpDef: its arguments and attrs with their defaults (strip_default_attrs
    readers fill stripped attrs from these)."""
    out = OpDef(name=op_def.name, is_stateful=op_def.is_stateful, is_commutative=op_def.is_commutative)
    for args, target in ((op_def.input_args, out.input_arg), (op_def.output_args, out.output_arg)):
        for arg in args:
            proto = target.add(name=arg.name, type_attr=arg.type_attr or "", number_attr=arg.number_attr or "",
                               type_list_attr=arg.type_list_attr or "")
            if arg.dtype is not None:
                proto.type = arg.dtype.as_datatype_enum
    for attr in op_def.attrs.values():
        kind = "string" if attr.kind in ("value", "func") else attr.kind
        proto = out.attr.add(name=attr.name, type=kind)
        if attr.has_default:
            try:
                proto.default_value.CopyFrom(to_attr_value(attr.default, attr.kind))
            except TypeError:
                pass
        if attr.minimum is not None:
            proto.has_minimum, proto.minimum = True, attr.minimum
    return out


def stripped_op_list(graph_def):
    """The OpList of the op types ``graph_def`` uses (its ``meta_info_def.stripped_op_list``)."""
    out = OpList()
    for op_type in sorted({n.op for n in graph_def.node}):
        try:
            out.op.add().CopyFrom(_op_def_proto(get_op_def(op_type)))
        except LookupError:
            continue
    return out


def _strip_default_attrs(graph_def):
    for node in graph_def.node:
        try:
            op_def = get_op_def(node.op)
        except LookupError:
            continue
        for name, attr in op_def.attrs.items():
            if attr.has_default and name in node.attr:
                try:
                    default = to_attr_value(attr.default, attr.kind)
                except TypeError:
                    continue
                if default == node.attr[name]:
                    del node.attr[name]


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None, collection_list=None,
                      as_text=False, graph=None, export_scope=None, clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False):
    """The MetaGraphDef of ``graph`` (default graph); written atomically to ``filename`` when given (text when
    ``as_text``). ``clear_extraneous_savers`` and ``save_debug_info`` are accepted and ignored: every saver's ops
    stay and no debug file is written."""
    graph = graph or graph_mod.get_default_graph()
    meta = MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.graph_def.CopyFrom(graph_def if graph_def is not None else graph.as_graph_def(add_shapes=True))
    if clear_devices:
        for node in meta.graph_def.node:
            node.device = ""
    info = meta.meta_info_def
    info.stripped_op_list.CopyFrom(stripped_op_list(meta.graph_def))
    info.tensorflow_version = info.tensorflow_version or TENSORFLOW_VERSION
    info.tensorflow_git_version = info.tensorflow_git_version or _writer()
    if strip_default_attrs:
        _strip_default_attrs(meta.graph_def)
        info.stripped_default_attrs = True
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    meta_graph_collections.add_collections(meta, graph, keys, export_scope)
    if filename is not None:
        data = text_format.MessageToString(meta).encode("utf-8") if as_text else meta.SerializeToString()
        checkpoint_format.atomic_write(filename, data)
    return meta


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the GraphDef of a Graph (or a GraphDef) to ``logdir/name``, atomically, as text unless
    ``as_text=False``; returns the path."""
    graph_def = graph_or_graph_def.as_graph_def() if hasattr(graph_or_graph_def, "as_graph_def") else \
        graph_or_graph_def
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(os.fspath(logdir), name)
    data = text_format.MessageToString(graph_def).encode("utf-8") if as_text else graph_def.SerializeToString()
    checkpoint_format.atomic_write(path, data)
    return path


def read_meta_graph_file(filename):
    """The MetaGraphDef in ``filename``: binary, text, or an earlier Tensorweave's JSON."""
    with open(filename, "rb") as f:
        return parse_meta_graph(f.read(), filename)


def parse_meta_graph(data, where="meta graph"):
    if graph_json.is_json(data):
        return _from_legacy_json(json.loads(data))
    return parse_proto(MetaGraphDef(), data, where)


def _from_legacy_json(doc):
    if doc.get("format") != LEGACY_FORMAT:
        raise ValueError(f"not a Tensorweave meta graph (format {doc.get('format')!r})")
    meta = MetaGraphDef()
    meta.graph_def.CopyFrom(graph_json.graph_def_from_doc(json.loads(doc["graph_def"])))
    if doc.get("saver_def"):
        meta.saver_def.CopyFrom(SaverDef(**doc["saver_def"]))
    for key, items in doc.get("collection_def", {}).items():
        if all("node" in i for i in items):
            meta.collection_def[key].node_list.value.extend(i["node"] for i in items)
        else:
            made = meta_graph_collections.collection_def([i["value"] for i in items])
            if made is not None:
                meta.collection_def[key].CopyFrom(made)
    return meta
