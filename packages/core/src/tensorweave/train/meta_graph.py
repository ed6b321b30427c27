"""Meta graphs: a graph plus its Saver's names (SaverDef) and its collections, so a checkpoint can be restored
into a program that did not build the model (``tf.train.import_meta_graph``, in saver.py: it makes the Saver)."""

import json

from tensorweave.formats import checkpoint_format
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.graph_io import GraphDef
from tensorweave.framework.operation import Operation
from tensorweave.framework.tensor import Tensor

__all__ = ["MetaGraphDef", "SaverDef", "export_meta_graph"]

FORMAT = "tensorweave-metagraph/1"


class SaverDef:
    """The names a Saver runs (TF1's SaverDef proto): enough to save and restore an imported graph."""

    V2 = 2

    def __init__(self, filename_tensor_name="", save_tensor_name="", restore_op_name="", max_to_keep=5,
                 sharded=False, keep_checkpoint_every_n_hours=10000.0, version=V2):
        self.filename_tensor_name = filename_tensor_name
        self.save_tensor_name = save_tensor_name
        self.restore_op_name = restore_op_name
        self.max_to_keep = max_to_keep
        self.sharded = sharded
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.version = version

    def as_dict(self):
        return dict(vars(self))


class MetaGraphDef:
    """The graph, the Saver's SaverDef, and the collections whose items are tensors, ops or plain values."""

    def __init__(self, graph_def=None, saver_def=None, collection_def=None):
        self.graph_def = graph_def or GraphDef()
        self.saver_def = saver_def
        self.collection_def = dict(collection_def or {})

    def SerializeToString(self):  # noqa: N802 - TF's method name
        return json.dumps({"format": FORMAT, "graph_def": self.graph_def.SerializeToString().decode(),
                           "saver_def": None if self.saver_def is None else self.saver_def.as_dict(),
                           "collection_def": self.collection_def}).encode()

    @classmethod
    def FromString(cls, data):  # noqa: N802
        doc = json.loads(data)
        if doc.get("format") != FORMAT:
            raise ValueError(f"not a tensorweave meta graph (format {doc.get('format')!r})")
        saver_def = None if doc["saver_def"] is None else SaverDef(**doc["saver_def"])
        return cls(GraphDef.FromString(doc["graph_def"].encode()), saver_def, doc["collection_def"])


def _collection_items(items):
    """Collection entries as names (tensors, ops) or JSON values; None if some item cannot be kept."""
    out = []
    for item in items:
        if isinstance(item, (Tensor, Operation)):
            out.append({"node": item.name})
        elif isinstance(item, (str, int, float, bool)):
            out.append({"value": item})
        else:
            return None
    return out


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None, collection_list=None,
                      as_text=False, graph=None, export_scope=None, clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False):
    """The MetaGraphDef of ``graph`` (default graph); written atomically to ``filename`` when given.

    TF1's ``clear_extraneous_savers``, ``strip_default_attrs`` and ``save_debug_info`` are accepted and ignored:
    every saver's ops stay, attrs keep their default values (an import reads either) and no debug file is written.
    """
    graph = graph or graph_mod.get_default_graph()
    graph_def = graph_def or graph.as_graph_def()
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    collections = {}
    for key in keys:
        items = _collection_items(graph.get_collection(key))
        if items is not None:
            collections[key] = items
    meta = MetaGraphDef(graph_def, saver_def, collections)
    if filename is not None:
        checkpoint_format.atomic_write(filename, meta.SerializeToString())
    return meta
