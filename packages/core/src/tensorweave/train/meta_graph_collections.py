"""A graph's collections as a MetaGraphDef's CollectionDefs and back, as TF1 writes them: tensors and ops by
name (node_list), variables as VariableDef protos and queue runners as QueueRunnerDef protos (bytes_list),
numbers and strings as values. Items of any other kind are left out, as TF1 leaves them out (with a warning)."""

import logging

from tensorweave.framework.operation import Operation
from tensorweave.framework.tensor import Tensor
from tensorweave.ops.variables import Variable
from tensorweave.protos.meta_graph import CollectionDef, QueueRunnerDef, VariableDef
from tensorweave.train.queue_runner import QueueRunner

_log = logging.getLogger("tensorflow")

# collections whose bytes are VariableDefs (TF1's ops.register_proto_function list)
VARIABLE_KEYS = ("variables", "trainable_variables", "local_variables", "model_variables", "moving_average_variables",
                 "metric_variables", "concatenated_variables", "trainable_resource_variables", "global_step")
QUEUE_RUNNER_KEYS = ("queue_runners",)


def _scoped(name, scope):
    if not scope:
        return name
    return name[len(scope) + 1:] if name.startswith(scope + "/") else None


def collection_def(items, export_scope=None):
    """The CollectionDef of one collection's items, or None when an item has no serialized form."""
    out = CollectionDef()
    if all(isinstance(i, (Tensor, Operation)) for i in items):
        out.node_list.value.extend(n for n in (_scoped(i.name, export_scope) for i in items) if n is not None)
    elif all(hasattr(i, "to_proto") and not isinstance(i, type) for i in items):
        protos = [i.to_proto(export_scope=export_scope) for i in items]
        out.bytes_list.value.extend(p.SerializeToString() for p in protos if p is not None)
    elif all(isinstance(i, (str, bytes)) for i in items):
        out.bytes_list.value.extend(i.encode("utf-8") if isinstance(i, str) else i for i in items)
    elif all(isinstance(i, int) and not isinstance(i, bool) for i in items):
        out.int64_list.value.extend(items)
    elif all(isinstance(i, (int, float)) and not isinstance(i, bool) for i in items):
        out.float_list.value.extend(items)
    else:
        return None
    return out


def add_collections(meta_graph_def, graph, keys, export_scope=None):
    for key in keys:
        items = graph.get_collection(key)
        if not items or not isinstance(key, str) or key.startswith("__"):  # Tensorweave's own bookkeeping
            continue
        try:
            made = collection_def(items, export_scope)
        except (TypeError, ValueError, AttributeError) as e:
            made, reason = None, e
        else:
            reason = "its items are not tensors, operations, variables, numbers or strings"
        if made is None:
            _log.warning("collection %r is not written to the meta graph: %s", key, reason)
            continue
        meta_graph_def.collection_def[key].CopyFrom(made)


def restore_collections(meta_graph_def, graph, import_scope=None):
    """Adds the meta graph's collections to ``graph``, whose ops the import made under ``import_scope``."""
    prefix = f"{import_scope}/" if import_scope else ""
    variables = {}  # one Variable per handle, however many collections hold it
    for key, col in sorted(meta_graph_def.collection_def.items()):
        kind = col.WhichOneof("kind")
        if kind == "node_list":
            items = [graph.as_graph_element(prefix + name) for name in col.node_list.value]
        elif kind == "bytes_list" and key in VARIABLE_KEYS:
            items = [_variable(variables, VariableDef.FromString(b), import_scope) for b in col.bytes_list.value]
        elif kind == "bytes_list" and key in QUEUE_RUNNER_KEYS:
            items = [QueueRunner.from_proto(QueueRunnerDef.FromString(b), import_scope) for b in col.bytes_list.value]
        elif kind == "bytes_list":
            items = [_text(b) for b in col.bytes_list.value]
        elif kind is not None:
            items = list(getattr(col, kind).value)
        else:
            items = []
        for item in items:
            graph.add_to_collection(key, item)


def _variable(variables, variable_def, import_scope):
    if variable_def.variable_name not in variables:
        variables[variable_def.variable_name] = Variable.from_proto(variable_def, import_scope)
    return variables[variable_def.variable_name]


def _text(raw):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
