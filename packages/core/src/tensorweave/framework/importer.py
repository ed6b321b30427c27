"""``tf.import_graph_def``: adds the nodes of a GraphDef (Tensorweave's or real TensorFlow's) to the default
graph, TF's op types and attrs mapped by tf_op_table, closing while loops once every op exists."""

import contextlib

from tensorweave.framework import tf_op_table
from tensorweave.framework.apply_op import create_op, get_op_def
from tensorweave.framework.attr_value import from_attr_value
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.graph_io import parse_graph_def
from tensorweave.framework.registry import get_registries


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None, producer_op_list=None):
    """Adds the nodes of ``graph_def`` to the default graph under scope ``name`` ('import' by default).

    ``input_map`` maps names in ``graph_def`` ('x:0' or 'x') to existing tensors, and control inputs
    ('^x') to existing operations; ``return_elements`` names tensors or ops to return. ``producer_op_list``
    (an OpList, as a meta graph's ``stripped_op_list``) gives the defaults of attrs the writer stripped;
    ``op_dict`` is ignored, as in TF1. Bytes are parsed first (binary, text or an earlier Tensorweave's JSON).
    """
    if isinstance(graph_def, (bytes, str)):
        graph_def = parse_graph_def(graph_def)
    graph = get_default_graph()
    _check_ops_exist(graph_def)
    prefix = "import" if name is None else name
    ctx = _Context(graph, prefix, _tf_defaults(producer_op_list))
    input_map = {k if k.startswith("^") else _canon(k): v for k, v in (input_map or {}).items()}
    back_edges = []  # (Merge op, input index, NextIteration name): loops are closed once all ops exist
    by_name = {n.name: n for n in graph_def.node}
    with graph.name_scope(prefix) if prefix else contextlib.nullcontext():
        for node in _topo_order(graph_def.node, by_name):
            inputs, controls = [], []
            for ref in node.input:
                if ref.startswith("^"):
                    controls.append(input_map[ref] if ref in input_map else ctx.created[ref[1:]])
                    continue
                key = _canon(ref)
                if key in input_map:
                    inputs.append(input_map[key])
                    continue
                src, idx = key.rsplit(":", 1)
                if src in ctx.ref_values:
                    inputs.append(ctx.ref_values[src])
                elif src in ctx.created:
                    inputs.append(ctx.created[src].outputs[int(idx)])
                elif node.op == "Merge" and src in by_name and by_name[src].op == "NextIteration":
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
            op = ctx.add(node, inputs)
            if node.device:
                op._set_device(node.device)
            for c in controls:
                op._add_control_input(c)
            ctx.created[node.name] = op
    for merge_name, index, src in back_edges:
        ctx.created[merge_name]._update_input(index, ctx.created[src].outputs[0])
    if return_elements is None:
        return None
    out = []
    for ref in return_elements:
        src, _, idx = ref.partition(":")
        if src not in ctx.created:
            raise ValueError(f"return_elements names {ref!r}, which is not in the imported GraphDef")
        if idx and src in ctx.ref_values:
            out.append(ctx.ref_values[src])
        else:
            out.append(ctx.created[src].outputs[int(idx)] if idx else ctx.created[src])
    return out


class _Context:
    """What one import has made so far, and the helpers tf_op_table's builders call."""

    def __init__(self, graph, prefix, tf_defaults):
        self.graph = graph
        self.prefix = prefix
        self.tf_defaults = tf_defaults
        self.created = {}
        self.ref_handles = {}  # TF reference variable's node name -> the resource handle standing for it
        self.ref_values = {}  # ... -> the read its readers take

    def scoped(self, name):
        return f"{self.prefix}/{name}" if self.prefix else name

    def op(self, op_type, inputs, attrs, name):
        """Adds one Tensorweave op named ``name`` from a flat input list (grouped by the OpDef's arguments)."""
        op_def = get_op_def(op_type)
        return create_op(op_type, _group(op_def, list(inputs), attrs), attrs, name)

    def add(self, node, inputs):
        rule = tf_op_table.import_rule(node.op)
        op_type = rule.tw_type if rule is not None and rule.tw_type else node.op
        op_def = get_op_def(op_type) if rule is None or rule.build is None else None
        attrs = self._attrs(node, rule, op_def)
        if rule is not None and rule.build is not None:
            return rule.build(self, node, inputs, attrs)
        if rule is not None and rule.ref_inputs:
            return self._ref_update(node, rule, inputs, attrs)
        op = self.op(op_type, inputs, attrs, node.name)
        self._set_shapes(node, op)
        return op

    def _attrs(self, node, rule, op_def):
        kinds = {} if op_def is None else {a.name: a.kind for a in op_def.attrs.values()}
        attrs, refused = {}, []
        for tf_key, proto in node.attr.items():
            key = rule.renames.get(tf_key, tf_key) if rule is not None else tf_key
            if key is None:
                continue
            value = from_attr_value(proto, kinds.get(key))
            if key == "_class":
                attrs[key] = [f"loc:@{self.scoped(v[5:])}" if v.startswith("loc:@") else v for v in value]
            elif key.startswith("_"):
                if key != "_output_shapes":
                    attrs[key] = value
            elif op_def is None or key in kinds:
                attrs[key] = value
            elif not (tf_op_table.is_ignored(key, value) or self.tf_defaults.get((node.op, tf_key)) == proto):
                refused.append(f"{key}={value!r}")
        for (op_type, key), value in self.tf_defaults.items():  # stripped attrs: TF's default, if Tensorweave has it
            if op_type == node.op and key in kinds and key not in attrs:
                attrs[key] = from_attr_value(value, kinds[key])
        for (op_type, key), value in tf_op_table.TF_DEFAULTS.items():
            if op_type == node.op and key not in attrs:
                attrs[key] = value
        if refused:
            raise ValueError(f"import_graph_def: node {node.name!r} ({node.op}) has attrs Tensorweave's "
                             f"{op_def.name} does not support: {', '.join(refused)}")
        return attrs

    def _ref_update(self, node, rule, inputs, attrs):
        """A TF op updating reference variables: its resource form on their handles, then (when TF's op has an
        output) a read of the first variable named as the node, after the update."""
        for i in rule.ref_inputs:
            ref = node.input[i]
            src = ref.split(":")[0]
            if src not in self.ref_handles:
                raise ValueError(f"import_graph_def: node {node.name!r} ({node.op}) updates {ref!r}, which is not a "
                                 f"reference variable (VariableV2) of this GraphDef")
            inputs[i] = self.ref_handles[src]
        op_def = get_op_def(rule.tw_type)
        attrs = {k: v for k, v in attrs.items() if k in op_def.attrs or k.startswith("_")}
        update_name = f"{node.name}/_update" if op_def.output_args == [] else node.name
        update = self.op(rule.tw_type, inputs, attrs, update_name)
        if op_def.output_args:
            return update
        handle = inputs[rule.ref_inputs[0]]
        read = self.op("ReadVariableOp", [handle], {"dtype": handle.op.get_attr("dtype")}, node.name)
        read._add_control_input(update)
        return read

    @staticmethod
    def _set_shapes(node, op):
        if "_output_shapes" in node.attr:
            shapes = from_attr_value(node.attr["_output_shapes"], "list(shape)")
            for t, s in zip(op.outputs, shapes):
                if t.shape.is_compatible_with(s):
                    t.set_shape(s)



def _group(op_def, flat, attrs):
    """The flat input list of a NodeDef as create_op takes it: a list per list argument."""
    grouped, i = [], 0
    lists = sum(1 for a in op_def.input_args if a.is_list)
    for arg in op_def.input_args:
        if arg.number_attr or arg.type_list_attr:
            if arg.number_attr in attrs:
                n = int(attrs[arg.number_attr])
            elif arg.type_list_attr in attrs:
                n = len(attrs[arg.type_list_attr])
            elif lists == 1:
                n = len(flat) - (len(op_def.input_args) - 1)
            else:
                raise ValueError(f"import_graph_def: {op_def.name} needs attr {arg.number_attr or arg.type_list_attr}")
            grouped.append(flat[i:i + n])
            i += n
        else:
            grouped.append(flat[i])
            i += 1
    return grouped


def _tf_defaults(op_list):
    """{(TF op type, attr): default AttrValue} from an OpList (what strip_default_attrs relies on)."""
    if op_list is None:
        return {}
    return {(op.name, a.name): a.default_value for op in op_list.op for a in op.attr if a.HasField("default_value")}


def _check_ops_exist(graph_def):
    """Raises one error naming every op type of ``graph_def`` that Tensorweave cannot run."""
    ops = get_registries().ops
    missing = {}
    for node in graph_def.node:
        if node.op not in ops and tf_op_table.import_rule(node.op) is None:
            missing.setdefault(node.op, []).append(node.name)
    if missing:
        listed = "; ".join(f"{op} (nodes {', '.join(repr(n) for n in names[:3])}{', ...' if len(names) > 3 else ''})"
                           for op, names in sorted(missing.items()))
        raise ValueError(f"import_graph_def: the GraphDef uses {len(missing)} op type(s) Tensorweave does not have: "
                         f"{listed}. Install the plugin that defines them, or add a mapping to "
                         f"tensorweave/framework/tf_op_table.py if Tensorweave has an equivalent op.")


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

