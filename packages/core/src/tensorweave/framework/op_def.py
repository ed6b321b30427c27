"""OpDef: what an op is (inputs, outputs, attrs, shape function, gradient, the flags the runtime reads),
independent of any device.

Specs follow TF's REGISTER_OP mini-language::

    OpDef("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
          attrs=["T: {float16, float32, float64, int32, int64}", "transpose_a: bool = False"])

An argument is ``name: T`` (a type attr), ``name: N * T`` (a list of N tensors of type T),
``name: Tlist`` (a ``list(type)`` attr) or ``name: float32`` (a fixed type). An attr is
``name: kind [>= min] [= default]`` where kind is one of ``type``, a set of types in braces
or a named set (``floating``, ``integer``, ``real``, ``numeric``, ``any``), ``int``, ``float``,
``bool``, ``string``, a set of allowed strings in braces, ``shape``, ``tensor``, ``func``,
``value`` (any Python value) or ``list(<kind>)``; ``any`` is the same as ``type``. Defaults are Python literals or dtype names.
"""

import ast
import re

from tensorweave import dtypes

_TYPE_SETS = {
    "floating": dtypes.FLOATING,
    "integer": dtypes.INTEGER,
    "real": dtypes.REAL,
    "numeric": dtypes.NUMERIC,
    "any": dtypes.ALL_TYPES,
    "type": dtypes.ALL_TYPES,
}
_SCALAR_KINDS = {"int", "float", "bool", "string", "shape", "tensor", "func", "type", "value"}

NO_DEFAULT = object()


class NotDifferentiableType:
    """Marks an op whose inputs get no gradient (e.g. comparisons, shape, argmax)."""

    def __repr__(self):
        return "NotDifferentiable"


NOT_DIFFERENTIABLE = NotDifferentiableType()

# Roles the executor implements itself for TF's control-flow primitives.
EXECUTOR_ROLES = ("switch", "merge", "enter", "exit", "next_iteration", "loop_cond")


class ArgDef:
    """One input or output: a fixed type, a type attr, a list of N of a type attr, or a type-list attr."""

    __slots__ = ("name", "dtype", "type_attr", "number_attr", "type_list_attr")

    def __init__(self, name, dtype=None, type_attr=None, number_attr=None, type_list_attr=None):
        self.name = name
        self.dtype = dtype
        self.type_attr = type_attr
        self.number_attr = number_attr
        self.type_list_attr = type_list_attr

    @property
    def is_list(self):
        return self.number_attr is not None or self.type_list_attr is not None

    def __repr__(self):
        kind = self.type_list_attr or (f"{self.number_attr} * " if self.number_attr else "") + (
            self.type_attr or self.dtype.name)
        return f"{self.name}: {kind}"


class AttrDef:
    """One attribute: its kind, allowed values, minimum and default."""

    __slots__ = ("name", "kind", "allowed", "minimum", "default")

    def __init__(self, name, kind, allowed=None, minimum=None, default=NO_DEFAULT):
        self.name = name
        self.kind = kind
        self.allowed = allowed
        self.minimum = minimum
        self.default = default

    @property
    def has_default(self):
        return self.default is not NO_DEFAULT

    def __repr__(self):
        return f"AttrDef({self.name}: {self.kind})"


_ARG_RE = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*:\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*\*\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*$")
_ATTR_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(list\(\s*[^)]*\)|\{[^}]*\}|[a-z_]+)\s*(?:>=\s*(-?\d+))?\s*(?:=\s*(.+?))?\s*$")


def _parse_default(kind, text):
    if kind in ("type",):
        return dtypes.as_dtype(text.strip())
    if kind == "list(type)":
        items = ast.literal_eval(text)
        return [dtypes.as_dtype(t) for t in items]
    lowered = {"true": "True", "false": "False", "none": "None"}.get(text.strip().lower(), text)
    try:
        return ast.literal_eval(lowered)
    except (ValueError, SyntaxError):
        raise ValueError(f"cannot parse default {text!r} for attr kind {kind}") from None


def parse_attr(spec):
    m = _ATTR_RE.match(spec)
    if not m:
        raise ValueError(f"bad attr spec {spec!r}; expected 'name: kind [>= min] [= default]'")
    name, kind, minimum, default = m.groups()
    allowed = None
    if kind.startswith("{"):
        items = [s.strip() for s in kind[1:-1].split(",") if s.strip()]
        if items and items[0][0] in "'\"":
            allowed, kind = tuple(ast.literal_eval(s) for s in items), "string"
        else:
            allowed, kind = tuple(dict.fromkeys(t for s in items for t in _type_set(s))), "type"
    elif kind == "any":
        kind = "type"
    elif kind in _TYPE_SETS and kind != "type":
        allowed, kind = _TYPE_SETS[kind], "type"
    elif kind.startswith("list("):
        inner = kind[5:-1].strip()
        if inner.startswith("{"):
            allowed = tuple(dict.fromkeys(t for s in inner[1:-1].split(",") if s.strip() for t in _type_set(s.strip())))
            inner = "type"
        elif inner == "any":
            inner = "type"
        elif inner in _TYPE_SETS and inner != "type":
            allowed, inner = _TYPE_SETS[inner], "type"
        if inner not in _SCALAR_KINDS:
            raise ValueError(f"bad list kind in attr spec {spec!r}")
        kind = f"list({inner})"
    elif kind not in _SCALAR_KINDS:
        raise ValueError(f"unknown attr kind {kind!r} in {spec!r}")
    parsed_default = NO_DEFAULT if default is None else _parse_default(kind, default)
    return AttrDef(name, kind, allowed, None if minimum is None else int(minimum), parsed_default)


def _type_set(name):
    """A named set, or one dtype; float16 brings bfloat16 along: TF's kernels that take one 16-bit float take
    both, and the runtime runs bfloat16 through the float32 kernel (runtime/kernels.py)."""
    if name in _TYPE_SETS:
        return _TYPE_SETS[name]
    dtype = dtypes.as_dtype(name)
    return (dtype, dtypes.bfloat16) if dtype == dtypes.float16 else (dtype,)


class OpDef:
    """The definition of one op type. Create with specs; attach shape fn, gradient and constant evaluator beside it.

    Besides its signature it carries what the runtime must know about the op, one field per property (below);
    the runtime reads these fields, never lists of op names, so a plugin's op with the same fields is treated
    as a core op is.
    """

    def __init__(self, name, inputs=(), outputs=(), attrs=(), *, shape_fn=None, grad=None, is_stateful=False,
                 is_commutative=False, executor_role=None, is_elementwise=False, broadcast_inputs=None,
                 is_pass_through=False, is_placeholder=False, is_plumbing=False, outputs_borrowed=False,
                 is_intra_op_parallel=False, flops_fn=None, constant_fn=None, shape_value_fn=None, doc=""):
        if executor_role is not None and executor_role not in EXECUTOR_ROLES:
            raise ValueError(f"executor_role must be one of {EXECUTOR_ROLES}")
        self.name = name
        self.attrs = {}
        for spec in attrs:
            attr = parse_attr(spec) if isinstance(spec, str) else spec
            self.attrs[attr.name] = attr
        self.input_args = [self._parse_arg(s, "input") for s in inputs]
        self.output_args = [self._parse_arg(s, "output") for s in outputs]
        if broadcast_inputs is not None and (not is_elementwise or any(
                not 0 <= i < len(self.input_args) for i in broadcast_inputs)):
            raise ValueError(f"op {name}: broadcast_inputs={broadcast_inputs!r} must name inputs (0 to "
                             f"{len(self.input_args) - 1}) of an op with is_elementwise=True")
        # fn(op) -> TensorShape or a list of them, one per output
        self.shape_fn = shape_fn
        # fn(op, *output_grads) -> one gradient (or None) per input; NOT_DIFFERENTIABLE: none flows back
        self.grad = grad
        # has state or side effects, or draws random numbers: never merged, folded or fused; stays on its device
        self.is_stateful = is_stateful
        # its two inputs may be swapped (common-subexpression elimination)
        self.is_commutative = is_commutative
        # one of TF's control-flow primitives (EXECUTOR_ROLES), run by the executor itself
        self.executor_role = executor_role
        # each output element depends only on the same (broadcast) element of each input: fusable
        self.is_elementwise = is_elementwise
        # with is_elementwise: the inputs whose broadcast shape is the output's (None: all of them)
        self.broadcast_inputs = None if broadcast_inputs is None else tuple(broadcast_inputs)
        # its outputs are its inputs, handed on uncopied: identity removal bypasses it, it costs no compute
        self.is_pass_through = is_pass_through
        # stands for a value fed at run time: pruning takes the feed instead, no pass merges or folds it
        self.is_placeholder = is_placeholder
        # the runtime's own transfer op (feeds, fetches, cross-device edges): never merged or folded, no compute
        self.is_plumbing = is_plumbing
        # its outputs belong to someone else (an attr, a feed, a transfer): memory planning never writes into them
        self.outputs_borrowed = outputs_borrowed
        # its host kernel already uses every core (BLAS): the executor does not overlap it with other ops
        self.is_intra_op_parallel = is_intra_op_parallel
        # fn(plan node) -> floating-point operations of one run, for the cost model (None: the output's size)
        self.flops_fn = flops_fn
        # fn(op, output_index) -> the output's value when the graph determines it, else None (constant_value)
        self.constant_fn = constant_fn
        # fn(op, output_index) -> TensorShape a partly known 1-D shape tensor stands for (constant_value_as_shape)
        self.shape_value_fn = shape_value_fn
        self.doc = doc
        self.plugin = None  # set by the registry: the plugin that registered it
        self.inferred_attrs = {a.type_attr for a in self.input_args if a.type_attr} | {
            a.number_attr for a in self.input_args if a.number_attr} | {
            a.type_list_attr for a in self.input_args if a.type_list_attr}

    def _parse_arg(self, spec, where):
        m = _ARG_RE.match(spec)
        if not m:
            raise ValueError(f"op {self.name}: bad {where} spec {spec!r}; expected 'name: T', 'name: N * T' or 'name: float32'")
        name, number, type_name = m.groups()
        attr = self.attrs.get(type_name)
        if attr is not None and attr.kind == "type":
            return ArgDef(name, type_attr=type_name, number_attr=number)
        if attr is not None and attr.kind == "list(type)":
            if number:
                raise ValueError(f"op {self.name}: {spec!r} cannot repeat a type-list attr")
            return ArgDef(name, type_list_attr=type_name)
        try:
            fixed = dtypes.as_dtype(type_name)
        except TypeError:
            raise ValueError(f"op {self.name}: {where} {spec!r} names {type_name!r}, which is neither a dtype "
                             f"nor a type attr of this op (declare it in attrs=)") from None
        return ArgDef(name, dtype=fixed, number_attr=number)

    # Decorators, so the shape function, gradient and evaluators sit right under the definition.
    def set_shape_fn(self, fn):
        self.shape_fn = fn
        return fn

    def set_gradient(self, fn):
        self.grad = fn
        return fn

    def set_constant_fn(self, fn):
        self.constant_fn = fn
        return fn

    def set_shape_value_fn(self, fn):
        self.shape_value_fn = fn
        return fn

    def set_flops_fn(self, fn):
        self.flops_fn = fn
        return fn

    def __repr__(self):
        return f"<OpDef {self.name}>"


class OpDefList(list):
    """The op definitions of one module, handed to a registrar in one call."""

    def define(self, name, **kwargs):
        op_def = OpDef(name, **kwargs)
        self.append(op_def)
        return op_def
