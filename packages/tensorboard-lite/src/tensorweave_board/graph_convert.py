"""Tensorweave graphs and run metadata as TensorBoard's protos (GraphDef, RunMetadata).

The core serializes its own GraphDef as JSON (it must not depend on protobuf); here each node, attr and
step statistic is carried over to the protos TensorBoard and TensorFlow read.
"""

import numpy as np

from tensorweave_board import protos
from tensorweave_board.tensor_codec import make_tensor_proto


def _shape_proto(shape, out):
    dims = None if shape is None else getattr(shape, "dims", shape)
    if getattr(shape, "ndims", 0) is None or dims is None:
        out.unknown_rank = True
        return out
    for d in shape.as_list() if hasattr(shape, "as_list") else dims:
        out.dim.add(size=-1 if d is None else int(d))
    return out


def _is_dtype(v):
    return hasattr(v, "as_datatype_enum") and hasattr(v, "as_numpy_dtype")


def _is_shape(v):
    return hasattr(v, "ndims") and hasattr(v, "as_list") or type(v).__name__ == "TensorShape"


def fill_attr(out, value):
    """Sets AttrValue ``out`` from a Python attr value (dtype, shape, array, list, scalar, string...)."""
    if value is None:
        return out
    if _is_dtype(value):
        out.type = value.as_datatype_enum
    elif _is_shape(value):
        _shape_proto(value, out.shape)
    elif isinstance(value, np.ndarray):
        out.tensor.CopyFrom(make_tensor_proto(value))
    elif isinstance(value, bool | np.bool_):
        out.b = bool(value)
    elif isinstance(value, int | np.integer):
        out.i = int(value)
    elif isinstance(value, float | np.floating):
        out.f = float(value)
    elif isinstance(value, bytes):
        out.s = value
    elif isinstance(value, str):
        out.s = value.encode("utf-8")
    elif isinstance(value, list | tuple):
        lst = out.list
        lst.SetInParent()
        for item in value:
            if _is_dtype(item):
                lst.type.append(item.as_datatype_enum)
            elif _is_shape(item):
                _shape_proto(item, lst.shape.add())
            elif isinstance(item, bool | np.bool_):
                lst.b.append(bool(item))
            elif isinstance(item, int | np.integer):
                lst.i.append(int(item))
            elif isinstance(item, float | np.floating):
                lst.f.append(float(item))
            elif isinstance(item, np.ndarray):
                lst.tensor.add().CopyFrom(make_tensor_proto(item))
            else:
                lst.s.append(item if isinstance(item, bytes) else str(item).encode("utf-8"))
    elif hasattr(value, "to_attr") or callable(value):
        out.func.name = str(getattr(value, "name", None) or getattr(value, "__name__", None) or value)
    else:
        out.s = repr(value).encode("utf-8")
    return out


def graph_def_proto(graph=None, graph_def=None, add_shapes=True):
    """TensorBoard's GraphDef for a tensorweave Graph, a tensorweave GraphDef, or serialized proto bytes."""
    if isinstance(graph_def, protos.GraphDef):
        return graph_def
    if isinstance(graph_def, bytes | bytearray):
        return protos.GraphDef.FromString(bytes(graph_def))
    if graph_def is None:
        if graph is None:
            raise ValueError("graph_def_proto needs a graph or a graph_def")
        graph_def = graph.as_graph_def(add_shapes=add_shapes)
    out = protos.GraphDef()
    out.versions.producer = int(getattr(graph_def, "versions", {}).get("producer", 1))
    for node in graph_def.node:
        nd = out.node.add(name=node.name, op=node.op, device=node.device or "")
        nd.input.extend(node.input)
        for key, value in node.attr.items():
            if callable(value) and not hasattr(value, "to_attr"):
                continue
            fill_attr(nd.attr[key], value)
    return out


def step_stats_proto(step_stats, out=None):
    """StepStats proto from the core's StepStats; thread ids become small per-device numbers (0, 1, ...)."""
    out = out if out is not None else protos.StepStats()
    for dev in step_stats.dev_stats:
        dp = out.dev_stats.add(device=dev.device)
        threads = {}
        for s in dev.node_stats:
            tid = threads.setdefault(s.thread_id, len(threads))
            ns = dp.node_stats.add(
                node_name=s.node_name, all_start_micros=int(s.all_start_micros),
                op_start_rel_micros=int(s.op_start_rel_micros), op_end_rel_micros=int(s.op_end_rel_micros),
                all_end_rel_micros=int(s.all_end_rel_micros), thread_id=tid,
                timeline_label=s.timeline_label or f"{s.node_name} = {getattr(s, 'op_type', '')}()")
            if getattr(s, "output_bytes", 0):
                ns.output.add(slot=0).tensor_description.allocation_description.allocated_bytes = int(s.output_bytes)
    return out


def run_metadata_proto(run_metadata):
    """RunMetadata proto (step stats and partition graphs) from the core's RunMetadata, or a proto as is."""
    if isinstance(run_metadata, protos.RunMetadata):
        return run_metadata
    if isinstance(run_metadata, bytes | bytearray):
        return protos.RunMetadata.FromString(bytes(run_metadata))
    out = protos.RunMetadata()
    out.step_stats.SetInParent()
    step_stats_proto(run_metadata.step_stats, out.step_stats)
    for g in getattr(run_metadata, "partition_graphs", ()) or ():
        out.partition_graphs.add().CopyFrom(graph_def_proto(graph_def=g))
    return out
