"""Reverse-mode automatic differentiation over the graph (``tf.gradients``).

Gradient functions live beside each op's definition (``OpDef.grad``, set with ``set_gradient``)
and follow TF's contract: ``grad(op, *output_grads) -> one gradient (or None) per input``.
"""

import collections

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["gradients", "RegisterGradient", "NotDifferentiable", "NoGradient", "stop_gradient_ops",
           "AggregationMethod"]

_custom_gradients = {}


class AggregationMethod:
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class RegisterGradient:
    """Decorator registering a gradient under a name, for ``gradient_override_map`` or for op
    types whose definition has none: ``@tf.RegisterGradient("MySquare") def _(op, grad): ...``."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("RegisterGradient expects an op type name")
        self._op_type = op_type

    def __call__(self, fn):
        if self._op_type in _custom_gradients:
            raise KeyError(f"a gradient named {self._op_type!r} is already registered")
        _custom_gradients[self._op_type] = fn
        return fn


def NotDifferentiable(op_type):  # noqa: N802 - TF's name
    """Declares that ops of ``op_type`` pass no gradient to their inputs."""
    _custom_gradients[op_type] = NOT_DIFFERENTIABLE


NoGradient = NotDifferentiable


def get_gradient_function(op):
    override = op._attrs.get("_gradient_op_type")
    if override is not None:
        try:
            return _custom_gradients[override]
        except KeyError:
            raise LookupError(f"gradient_override_map names {override!r} for op {op.name!r}, but no gradient "
                              f"is registered under that name (use @tf.RegisterGradient)") from None
    grad = op.op_def.grad
    if grad is None:
        grad = _custom_gradients.get(op.type)
    return grad


def stop_gradient_ops(stop_gradients):
    return {t.op if isinstance(t, Tensor) else t for t in stop_gradients or []}


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _reachable_between(ys, xs, stops):
    """Ops on some path from an x to a y (excluding stopped ops), by forward and backward search."""
    forward = set()
    queue = collections.deque(x.op for x in xs)
    while queue:
        op = queue.popleft()
        if op in forward:
            continue
        forward.add(op)
        for out in op.outputs:
            for c in out._consumers:
                if c not in forward:
                    queue.append(c)
    between = set()
    queue = collections.deque(y.op for y in ys)
    while queue:
        op = queue.popleft()
        if op in between or op not in forward:
            continue
        between.add(op)
        if op in stops:
            continue
        for t in op.inputs:
            queue.append(t.op)
    return between


def _is_differentiable(t):
    return t.dtype.is_differentiable


def aggregate(grads, name="AddN"):
    """Sums gradients from several paths: AddN for dense, concatenation for IndexedSlices."""
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    from tensorweave.ops import array_ops, math_ops
    if all(isinstance(g, IndexedSlices) for g in grads):
        return IndexedSlices(array_ops.concat([g.values for g in grads], 0),
                             array_ops.concat([g.indices for g in grads], 0), grads[0].dense_shape)
    dense = [convert_to_tensor(g) for g in grads]
    return math_ops.add_n(dense, name=name)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients="none"):
    """Symbolic derivatives of sum(ys) with respect to each x in xs (None where unconnected)."""
    from tensorweave.ops import array_ops, control_flow_ops
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    # Objects such as resource variables say which tensor their gradient is taken against.
    xs = [x._gradient_target() if hasattr(x, "_gradient_target") else x for x in _as_list(xs)]
    xs = [convert_to_tensor(x) for x in xs]
    grad_ys = _as_list(grad_ys) or [None] * len(ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"gradients: {len(ys)} ys but {len(grad_ys)} grad_ys")
    if unconnected_gradients not in ("none", "zero"):
        raise ValueError("unconnected_gradients must be 'none' or 'zero'")
    graph = ys[0].graph if ys else graph_mod.get_default_graph()
    stops = stop_gradient_ops(stop_gradients)
    with graph.as_default(), graph.name_scope(name):
        between = _reachable_between(ys, xs, stops)
        pending = collections.Counter()
        for op in between:
            if op in stops:
                continue
            for t in op.inputs:
                if t.op in between:
                    pending[t.op] += 1
        grads = collections.defaultdict(list)  # tensor -> list of gradient contributions
        for y, gy in zip(ys, grad_ys):
            if gy is None:
                if not _is_differentiable(y):
                    raise TypeError(f"gradients of {y.name} ({y.dtype.name}) are not defined: ys must be "
                                    f"floating point")
                gy = array_ops.ones_like(y, name=f"grad_ys_{len(grads)}")
            else:
                gy = convert_to_tensor(gy, dtype=y.dtype)
            grads[y].append(gy)
        ready = collections.deque(op for op in {y.op for y in ys} if pending[op] == 0 and op in between)
        processed = set()
        while ready:
            op = ready.popleft()
            if op in processed:
                continue
            processed.add(op)
            out_grads = [aggregate(grads.get(t, [])) if t in grads else None for t in op.outputs]
            for t in op.outputs:
                if t in grads and len(grads[t]) > 1:
                    grads[t] = [out_grads[t.value_index]]
            in_grads = [None] * len(op.inputs)
            if op not in stops and any(g is not None for g in out_grads) and op.inputs:
                in_grads = _call_gradient(op, out_grads, colocate_gradients_with_ops, gate_gradients,
                                          control_flow_ops)
            for t, g in zip(op.inputs, in_grads):
                if g is not None and _is_differentiable(t):
                    if isinstance(g, Tensor) and g.dtype != t.dtype and not (t.dtype is dtypes.resource):
                        raise TypeError(f"gradient of {op.type} op {op.name!r} for input {t.name} has dtype "
                                        f"{g.dtype.name}, expected {t.dtype.name}")
                    grads[t].append(g)
                if t.op in between:
                    pending[t.op] -= 1
                    if pending[t.op] == 0:
                        ready.append(t.op)
        result = []
        for x in xs:
            g = aggregate(grads.get(x, []))
            if g is None and unconnected_gradients == "zero":
                g = array_ops.zeros_like(x)
            result.append(g)
        return result


def _call_gradient(op, out_grads, colocate, gate, control_flow_ops):
    from tensorweave.ops import array_ops
    grad_fn = get_gradient_function(op)
    if grad_fn is NOT_DIFFERENTIABLE:
        return [None] * len(op.inputs)
    if grad_fn is None:
        raise LookupError(f"no gradient defined for operation {op.name!r} (op type: {op.type}), created at "
                          f"{op.where()}. Define one in its OpDef (set_gradient) or with @tf.RegisterGradient, "
                          f"or wrap the input in tf.stop_gradient.")
    out_grads = [g if g is not None or not _is_differentiable(t) else array_ops.zeros_like(t)
                 for g, t in zip(out_grads, op.outputs)]
    graph = op.graph
    scope = f"{op.name}_grad"
    ctx = graph.colocate_with(op) if colocate else _null()
    with graph.name_scope(scope), ctx:
        in_grads = grad_fn(op, *out_grads)
    in_grads = _as_list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
    if len(in_grads) != len(op.inputs):
        raise ValueError(f"gradient function for {op.type} returned {len(in_grads)} gradients, but op "
                         f"{op.name!r} has {len(op.inputs)} inputs")
    if gate and sum(g is not None for g in in_grads) > 1:
        dense = [g for g in in_grads if isinstance(g, Tensor)]
        gated = iter(control_flow_ops.tuple(dense))
        in_grads = [next(gated) if isinstance(g, Tensor) else g for g in in_grads]
    return in_grads


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False
