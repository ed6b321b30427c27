"""Builds an Operation from its OpDef: converts inputs, infers type attrs, fills defaults, infers shapes."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import tensor_conversion, tensor_shape
from tensorweave.framework.op_def import NO_DEFAULT
from tensorweave.framework.registry import get_registries, plugin_names
from tensorweave.framework.tensor import Tensor


def get_op_def(op_type):
    op_def = get_registries().ops.get(op_type)
    if op_def is None:
        raise LookupError(f"no op named {op_type!r} is registered. Installed plugins: "
                          f"{_plugin_names()}. Is the plugin that defines it installed?")
    return op_def


def _plugin_names():
    return ", ".join(plugin_names())


def apply_op(op_type, inputs=(), attrs=None, name=None, graph=None):
    """Adds one op; returns its Tensor (one output), list of Tensors (several) or Operation (none)."""
    op = create_op(op_type, inputs, attrs, name, graph)
    defs = op.op_def.output_args
    if not defs:
        return op
    if len(defs) == 1 and not defs[0].is_list:
        return op.outputs[0]
    return op.outputs


def create_op(op_type, inputs=(), attrs=None, name=None, graph=None):
    op_def = get_op_def(op_type)
    attrs = dict(attrs or {})
    inputs = list(inputs)
    if len(inputs) != len(op_def.input_args):
        raise TypeError(f"op {op_type} takes {len(op_def.input_args)} inputs "
                        f"({', '.join(a.name for a in op_def.input_args)}), got {len(inputs)}")
    if graph is None:
        graph = _graph_for(inputs)
    name = name or op_type
    if any(not isinstance(v, Tensor) for v in _flat(inputs)):
        # TF1 converts an op's non-tensor inputs inside the op's own name scope ("mul/y"), then names the op
        # after that scope exactly ("mul").
        with graph.as_default(), graph.name_scope(name) as name:
            tensors = _convert_inputs(op_def, inputs, attrs, graph)
    else:
        tensors = _convert_inputs(op_def, inputs, attrs, graph)
    for attr in op_def.attrs.values():
        if attr.name not in attrs:
            if attr.default is NO_DEFAULT:
                raise TypeError(f"op {op_type} needs attr {attr.name!r} ({attr.kind})")
            attrs[attr.name] = attr.default
        attrs[attr.name] = _check_attr(op_def, attr, attrs[attr.name])
    output_dtypes = _output_dtypes(op_def, attrs)
    op = graph.create_op(op_def, [t for group in tensors for t in group], attrs, output_dtypes, name)
    if op_def.shape_fn is not None:
        try:
            shapes = op_def.shape_fn(op)
        except ValueError as e:
            _remove_op(graph, op)
            in_shapes = ", ".join(str(t.shape) for t in op.inputs)
            raise ValueError(f"{e} — in op {op.name!r} ({op_type}) with input shapes [{in_shapes}], "
                             f"created at {op.where()}") from None
        if shapes is not None:
            if isinstance(shapes, tensor_shape.TensorShape):
                shapes = [shapes]
            for t, s in zip(op.outputs, shapes):
                if s is not None:
                    t._shape = tensor_shape.as_shape(s)
    return op


def _remove_op(graph, op):
    graph._ops.remove(op)
    del graph._ops_by_name[op.name]
    for t in op.inputs:
        t._consumers.remove(op)
    for c in op.control_inputs:
        c._control_outputs.remove(op)


def _graph_for(inputs):
    found = None
    for value in _flat(inputs):
        g = getattr(value, "graph", None)
        if isinstance(g, graph_mod.Graph):
            if found is not None and g is not found:
                raise ValueError(f"{value!r} is from a different graph than the op's other inputs; "
                                 f"all inputs of an op must come from one graph")
            found = g
    default = graph_mod.get_default_graph()
    if found is not None and found is not default and graph_mod._default_graph_stack.stack:
        raise ValueError(f"input tensors belong to graph {found!r}, but the default graph is {default!r}; "
                         f"build the op inside `with graph.as_default():` of its inputs' graph")
    return found or default


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _dtype_of(value):
    if isinstance(value, Tensor):
        return value.dtype
    dt = getattr(value, "dtype", None)
    if tensor_conversion.is_tensor_like(value) and dt is not None:
        return dtypes.as_dtype(dt)
    return None


def _convert_inputs(op_def, inputs, attrs, graph):
    # First pass: infer type attrs from arguments that already carry a dtype.
    for arg, value in zip(op_def.input_args, inputs):
        if arg.type_attr and arg.type_attr not in attrs:
            values = value if arg.number_attr else [value]
            if arg.number_attr and not isinstance(value, (list, tuple)):
                raise TypeError(f"input {arg.name!r} of {op_def.name} must be a list of tensors, got {value!r}")
            for v in values:
                dt = _dtype_of(v)
                if dt is not None:
                    attrs[arg.type_attr] = dt
                    break
    # Then default the rest from Python literals and convert everything.
    converted = []
    for arg, value in zip(op_def.input_args, inputs):
        if arg.type_list_attr:
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"input {arg.name!r} of {op_def.name} must be a list of tensors")
            group = [tensor_conversion.convert_to_tensor(v) for v in value]
            given = attrs.get(arg.type_list_attr)
            if given is not None and [dtypes.as_dtype(d) for d in given] != [t.dtype for t in group]:
                raise TypeError(f"input {arg.name!r} of {op_def.name} has types {[t.dtype.name for t in group]}, "
                                f"but {arg.type_list_attr} says {[dtypes.as_dtype(d).name for d in given]}")
            attrs[arg.type_list_attr] = [t.dtype for t in group]
            converted.append(group)
            continue
        values = list(value) if arg.number_attr else [value]
        if arg.number_attr:
            n = attrs.setdefault(arg.number_attr, len(values))
            if n != len(values):
                raise TypeError(f"input {arg.name!r} of {op_def.name} has {len(values)} tensors but "
                                f"{arg.number_attr}={n}")
        if arg.dtype is not None:
            want = arg.dtype
        else:
            want = attrs.get(arg.type_attr)
            if want is None:
                want = _default_type(op_def, arg.type_attr, values)
                attrs[arg.type_attr] = want
            want = dtypes.as_dtype(want)
        group = []
        for v in values:
            try:
                t = tensor_conversion.convert_to_tensor(
                    v, dtype=want if not isinstance(v, Tensor) else None,
                    name=arg.name if not tensor_conversion.is_tensor_like(v) else None)
            except (TypeError, ValueError) as e:
                raise TypeError(f"input {arg.name!r} of op {op_def.name}: {e}") from None
            if t.dtype is not want:
                first = _first_typed_arg(op_def, arg.type_attr, inputs)
                against = f" of argument {first!r}" if first and first != arg.name else ""
                raise TypeError(f"input {arg.name!r} of {op_def.name} op has type {t.dtype.name} that does not "
                                f"match type {want.name}{against}; use tf.cast to convert one of them")
            group.append(t)
        converted.append(group)
    return converted


def _first_typed_arg(op_def, type_attr, inputs):
    for arg, value in zip(op_def.input_args, inputs):
        if arg.type_attr == type_attr and (arg.number_attr or _dtype_of(value) is not None):
            return arg.name
    return None


def _default_type(op_def, type_attr, values):
    attr = op_def.attrs[type_attr]
    for v in values:
        if isinstance(v, (list, tuple)) and tensor_conversion.holds_tensor(v):
            # TF1: the packed tensors' dtype, else the attr's default (the tensors cast)
            dt = tensor_conversion.packed_dtype(v)
            if attr.allowed is None or dt in attr.allowed or not attr.has_default:
                return dt
            return attr.default
        dt = tensor_conversion.python_scalar_dtype(v)
        if dt is None:
            try:
                dt = dtypes.as_dtype(tensor_conversion.numpy_value(v).dtype)
            except TypeError:
                continue
        if attr.allowed is None or dt in attr.allowed:
            return dt
        if dt.is_integer and attr.allowed and dtypes.float32 in attr.allowed:
            return dtypes.float32
    if attr.has_default:
        return attr.default
    if attr.allowed:
        return attr.allowed[0]
    return dtypes.float32


def _check_attr(op_def, attr, value):
    kind = attr.kind
    where = f"attr {attr.name!r} of op {op_def.name}"
    if kind == "type":
        try:
            value = dtypes.as_dtype(value)
        except TypeError as e:
            raise TypeError(f"{where}: {e}") from None
        if attr.allowed is not None and value not in attr.allowed:
            allowed = ", ".join(d.name for d in attr.allowed)
            raise TypeError(f"value passed to {where} has type {value.name}, not in the allowed list: {allowed}")
        return value
    if kind == "list(type)":
        value = [dtypes.as_dtype(v) for v in value]
        if attr.allowed is not None:
            bad = [v.name for v in value if v not in attr.allowed]
            if bad:
                raise TypeError(f"{where} has types {bad} not allowed; allowed: {[d.name for d in attr.allowed]}")
    elif kind == "int":
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise TypeError(f"{where} must be an int, got {value!r}")
        value = int(value)
    elif kind == "float":
        value = float(value)
    elif kind == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"{where} must be a bool, got {value!r}")
    elif kind == "string":
        if isinstance(value, bytes):
            value = value.decode()
        if not isinstance(value, str):
            raise TypeError(f"{where} must be a string, got {value!r}")
        if attr.allowed is not None and value not in attr.allowed:
            raise ValueError(f"{where} must be one of {list(attr.allowed)}, got {value!r}")
    elif kind == "shape":
        value = tensor_shape.as_shape(value)
    elif kind.startswith("list("):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{where} must be a list, got {value!r}")
        value = list(value)
        if kind == "list(int)":
            value = [int(v) for v in value]
        elif kind == "list(shape)":
            value = [tensor_shape.as_shape(v) for v in value]
    if attr.minimum is not None:
        size = len(value) if isinstance(value, list) else value
        if size < attr.minimum:
            raise ValueError(f"{where} must be at least {attr.minimum}, got {value!r}")
    return value


def _output_dtypes(op_def, attrs):
    out = []
    for arg in op_def.output_args:
        if arg.type_list_attr:
            out.extend(dtypes.as_dtype(d) for d in attrs[arg.type_list_attr])
            continue
        dt = arg.dtype if arg.dtype is not None else dtypes.as_dtype(attrs[arg.type_attr])
        out.extend([dt] * (attrs[arg.number_attr] if arg.number_attr else 1))
    return out
