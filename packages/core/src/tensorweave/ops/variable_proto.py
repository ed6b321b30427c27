"""Variables to and from TF's VariableDef, the form a meta graph's variable collections hold them in.

A TF reference variable imported from a GraphDef runs as a resource variable (framework/tf_op_table.py), so
``variable_name`` always names a handle here; the snapshot is the read its readers take.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor import Tensor
from tensorweave.protos.meta_graph import VariableDef


def init_from_proto(var, variable_def, import_scope=None):
    """Sets up Variable ``var`` over the ops of the default graph that ``variable_def`` names."""
    graph = graph_mod.get_default_graph()

    def element(name):
        return graph.as_graph_element(f"{import_scope}/{name}" if import_scope else name) if name else None
    handle = element(variable_def.variable_name)
    if handle.dtype is not dtypes.resource:
        raise ValueError(f"VariableDef {variable_def.variable_name!r} names a {handle.dtype.name} tensor, not a "
                         f"variable handle")
    snapshot = element(variable_def.snapshot_name)
    dtype = handle.op.get_attr("dtype")
    var._setup(handle, dtype, handle.op.get_attr("shape"), None)
    var._graph_element = snapshot if snapshot is not None and snapshot.dtype is dtype else var._read()
    var._initial_value = element(variable_def.initial_value_name)
    var._initializer_op = element(variable_def.initializer_name)
    var._trainable = variable_def.trainable
    var._constraint = None
    if variable_def.HasField("save_slice_info_def"):
        info = variable_def.save_slice_info_def
        prefix = f"{import_scope}/" if import_scope else ""
        var._save_slice_info = type(var).SaveSliceInfo(prefix + info.full_name, info.full_shape, info.var_offset,
                                             info.var_shape)


def to_proto(var, export_scope=None):
    """``var`` as a VariableDef, its names relative to ``export_scope`` (None when it lies outside it)."""
    def strip(name):
        if not export_scope:
            return name
        return name[len(export_scope) + 1:] if name.startswith(export_scope + "/") else None
    if strip(var.handle.name) is None:
        return None
    out = VariableDef(variable_name=strip(var.handle.name), is_resource=True, trainable=var.trainable)
    if var.initializer is not None:
        out.initializer_name = strip(var.initializer.name) or ""
    if var._graph_element is not None:
        out.snapshot_name = strip(var._graph_element.name) or ""
    if isinstance(var.initial_value, Tensor):
        out.initial_value_name = strip(var.initial_value.name) or ""
    info = var._save_slice_info
    if info is not None:
        out.save_slice_info_def.full_name = strip(info.full_name) or info.full_name
        out.save_slice_info_def.full_shape.extend(info.full_shape)
        out.save_slice_info_def.var_offset.extend(info.var_offset)
        out.save_slice_info_def.var_shape.extend(info.var_shape)
    return out
