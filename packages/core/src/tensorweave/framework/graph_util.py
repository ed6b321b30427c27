"""``tf.graph_util`` (TF1): GraphDef surgery for deployment: freeze variables into constants, cut the sub-graph
some outputs need, remove training-only nodes. Works on GraphDefs written here or by real TensorFlow."""

import logging

from tensorweave import dtypes
from tensorweave.framework.tensor_proto import make_tensor_proto
from tensorweave.protos.framework import GraphDef, NodeDef

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "must_run_on_cpu", "remove_training_nodes",
           "tensor_shape_from_node_def_name"]

_log = logging.getLogger("tensorflow")
VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def _node_name(ref):
    return ref[1:] if ref.startswith("^") else ref.split(":")[0]


def extract_sub_graph(graph_def, dest_nodes):
    """The GraphDef of the nodes ``dest_nodes`` (names) depend on, data and control inputs alike, in order."""
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list of node names")
    by_name = {n.name: n for n in graph_def.node}
    for name in dest_nodes:
        if name not in by_name:
            raise AssertionError(f"{name} is not in graph")
    keep, stack = set(), list(dest_nodes)
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        stack.extend(_node_name(ref) for ref in by_name[name].input if _node_name(ref) in by_name)
    out = GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.node.extend(n for n in graph_def.node if n.name in keep)
    return out


def _read_of(graph, handle_name):
    """A tensor of ``graph`` reading the variable whose handle (or TF reference variable) op is ``handle_name``."""
    for op in graph.get_operations():
        if op.type == "ReadVariableOp" and op.inputs[0].op.name == handle_name:
            return op.outputs[0]
    raise ValueError(f"convert_variables_to_constants: no op of the session's graph reads variable {handle_name!r}")


def convert_variables_to_constants(sess, input_graph_def, output_node_names, variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """The sub-graph ``output_node_names`` need, each variable replaced by a Const of its value in ``sess``
    (reads of resource variables become Identity, ResourceGather a GatherV2)."""
    graph_def = extract_sub_graph(input_graph_def, output_node_names)
    frozen = [n.name for n in graph_def.node if n.op in VARIABLE_OPS
              and (variable_names_whitelist is None or n.name in variable_names_whitelist)
              and (variable_names_blacklist is None or n.name not in variable_names_blacklist)]
    values = dict(zip(frozen, sess.run([_read_of(sess.graph, name) for name in frozen]))) if frozen else {}
    out = GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    dtype_of = {}
    for node in graph_def.node:
        if node.name in values:
            const = out.node.add(name=node.name, op="Const")
            const.attr["dtype"].type = node.attr["dtype"].type
            const.attr["value"].tensor.CopyFrom(make_tensor_proto(values[node.name]))
            dtype_of[node.name] = node.attr["dtype"].type
            continue
        source = _node_name(node.input[0]) if node.input else None
        if node.op == "ReadVariableOp" and source in dtype_of:
            identity = out.node.add(name=node.name, op="Identity", device=node.device)
            identity.input.extend(node.input)
            identity.attr["T"].type = dtype_of[source]
        elif node.op == "ResourceGather" and source in dtype_of:
            axis = out.node.add(name=f"{node.name}/axis", op="Const")
            axis.attr["dtype"].type = dtypes.int32.as_datatype_enum
            axis.attr["value"].tensor.CopyFrom(make_tensor_proto(0, dtype=dtypes.int32))
            gather = out.node.add(name=node.name, op="GatherV2", device=node.device)
            gather.input.extend([node.input[0], node.input[1], axis.name])
            gather.attr["Tparams"].type = dtype_of[source]
            gather.attr["Tindices"].CopyFrom(node.attr["Tindices"])
            gather.attr["Taxis"].type = dtypes.int32.as_datatype_enum
            if "batch_dims" in node.attr:
                gather.attr["batch_dims"].CopyFrom(node.attr["batch_dims"])
        else:
            out.node.add().CopyFrom(node)
    _log.info("Froze %d variables.", len(values))
    _log.info("Converted %d variables to const ops.", len(values))
    return out


def remove_training_nodes(input_graph, protected_nodes=None):
    """``input_graph`` without the Identity and CheckNumerics nodes inference does not need: their readers read
    their input instead. Protected nodes, nodes with control inputs and nodes that are control inputs stay."""
    protected = set(protected_nodes or ())
    with_control_inputs = {n.name for n in input_graph.node if any(r.startswith("^") for r in n.input)}
    control_sources = {r[1:] for n in input_graph.node for r in n.input if r.startswith("^")}
    splice = {n.name: n.input[0] for n in input_graph.node
              if n.op in ("Identity", "CheckNumerics") and n.name not in protected and n.input
              and n.name not in with_control_inputs and n.name not in control_sources}
    out = GraphDef()
    out.versions.CopyFrom(input_graph.versions)
    for node in input_graph.node:
        if node.name in splice:
            continue
        kept = out.node.add()
        kept.CopyFrom(node)
        del kept.input[:]
        for ref in node.input:
            while _node_name(ref) in splice:
                source = splice[_node_name(ref)]
                ref = "^" + _node_name(source) if ref.startswith("^") else source
            kept.input.append(ref)
    return out


def must_run_on_cpu(node, pin_variables_on_cpu=False):
    """Whether TF1 places ``node`` (an Operation or NodeDef) on the CPU: string and int32 constants, int32
    DynamicStitch and Cast, and variables when ``pin_variables_on_cpu``."""
    node_def = node.node_def if not isinstance(node, NodeDef) and hasattr(node, "node_def") else node
    if pin_variables_on_cpu and node_def.op in VARIABLE_OPS:
        return True
    typed = {"Const": "dtype", "DynamicStitch": "T", "ParallelDynamicStitch": "T", "Cast": "SrcT"}
    if node_def.op in typed:
        dtype = node_def.attr[typed[node_def.op]].type
        return dtype == dtypes.int32.as_datatype_enum or (node_def.op == "Const" and
                                                          dtype == dtypes.string.as_datatype_enum)
    return False


def tensor_shape_from_node_def_name(graph, input_name):
    """The static shape of tensor ``input_name`` ('x' means 'x:0') of ``graph``."""
    name = input_name if ":" in input_name else f"{input_name}:0"
    return graph.get_tensor_by_name(name).get_shape()

