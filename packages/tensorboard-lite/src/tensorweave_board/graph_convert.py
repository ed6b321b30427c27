"""Tensorweave graphs and run metadata as TensorBoard's protos (GraphDef, RunMetadata).

A graph's GraphDef is already TF's proto (the core writes it); step statistics are carried over here.
"""

from tensorweave_board import protos


def graph_def_proto(graph=None, graph_def=None, add_shapes=True):
    """TensorBoard's GraphDef for a tensorweave Graph, a GraphDef, or serialized proto bytes."""
    if isinstance(graph_def, protos.GraphDef):
        return graph_def
    if isinstance(graph_def, bytes | bytearray):
        return protos.GraphDef.FromString(bytes(graph_def))
    if graph_def is not None:
        raise TypeError(f"graph_def must be a GraphDef or its bytes, got {type(graph_def).__name__}")
    if graph is None:
        raise ValueError("graph_def_proto needs a graph or a graph_def")
    return graph.as_graph_def(add_shapes=add_shapes)


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
