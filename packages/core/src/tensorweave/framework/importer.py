"""``tf.import_graph_def``: adds the nodes of a GraphDef to the default graph (TF1's importer), closing while
loops once every op exists."""

import contextlib

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import _output_dtypes, get_op_def
from tensorweave.framework.graph import get_default_graph


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None):
    """Adds the nodes of ``graph_def`` to the default graph under scope ``name`` ('import' by default).

    ``input_map`` maps names in ``graph_def`` ('x:0' or 'x') to existing tensors, and control inputs
    ('^x') to existing operations; ``return_elements`` names tensors or ops to return.
    """
    graph = get_default_graph()
    input_map = {k if k.startswith("^") else _canon(k): v for k, v in (input_map or {}).items()}
    created = {}
    back_edges = []  # (Merge op, input index, NextIteration name): loops are closed once all ops exist
    pending = list(graph_def.node)
    by_name = {n.name: n for n in pending}
    order = _topo_order(pending, by_name)
    prefix = "import" if name is None else name
    with graph.name_scope(prefix) if prefix else contextlib.nullcontext():
        for node in order:
            op_def = get_op_def(node.op)
            inputs, controls = [], []
            for ref in node.input:
                if ref.startswith("^"):
                    controls.append(input_map[ref] if ref in input_map else created[ref[1:]])
                    continue
                key = _canon(ref)
                if key in input_map:
                    inputs.append(input_map[key])
                    continue
                src, idx = key.rsplit(":", 1)
                if src in created:
                    inputs.append(created[src].outputs[int(idx)])
                elif node.op == "Merge" and by_name.get(src) is not None and by_name[src].op == "NextIteration":
                    back_edges.append((node.name, len(inputs), src))
                    inputs.append(None)
                else:
                    raise ValueError(f"import_graph_def: node {node.name!r} reads {ref!r}, which is "
                                     + ("not in the GraphDef" if src not in by_name else
                                        "on a cycle that is not a while loop (only NextIteration may feed a Merge "
                                        "back)"))
            if any(t is None for t in inputs):  # a loop Merge: its Enter input stands in until NextIteration exists
                stand_in = next(t for t in inputs if t is not None)
                inputs = [stand_in if t is None else t for t in inputs]
            attrs = {k: v for k, v in node.attr.items() if k != "_output_shapes"}
            op = graph.create_op(op_def, inputs, attrs, _output_dtypes(op_def, attrs), node.name)
            if node.device:
                op._set_device(node.device)
            for c in controls:
                op._add_control_input(c)
            if op_def.shape_fn is not None:
                shapes = op_def.shape_fn(op)
                if isinstance(shapes, tensor_shape.TensorShape):
                    shapes = [shapes]
                for t, s in zip(op.outputs, shapes or []):
                    if s is not None:
                        t._shape = tensor_shape.as_shape(s)
            if "_output_shapes" in node.attr:
                for t, s in zip(op.outputs, node.attr["_output_shapes"]):
                    t.set_shape(s)
            created[node.name] = op
    for merge_name, index, src in back_edges:
        created[merge_name]._update_input(index, created[src].outputs[0])
    if return_elements is None:
        return None
    out = []
    for ref in return_elements:
        if ":" in ref:
            src, idx = ref.rsplit(":", 1)
            out.append(created[src].outputs[int(idx)])
        else:
            out.append(created[ref])
    return out


def _canon(ref):
    return ref if ":" in ref else f"{ref}:0"


def _topo_order(nodes, by_name):
    order, state = [], {}

    def visit(n):
        stack = [(n, False)]
        while stack:
            node, done = stack.pop()
            if done:
                state[node.name] = 2
                order.append(node)
                continue
            if state.get(node.name):
                continue
            state[node.name] = 1
            stack.append((node, True))
            for ref in node.input:
                src = ref[1:] if ref.startswith("^") else ref.rsplit(":", 1)[0]
                if src in by_name and not state.get(src):
                    if by_name[src].op == "NextIteration":
                        continue
                    stack.append((by_name[src], False))

    for n in nodes:
        visit(n)
    return order
