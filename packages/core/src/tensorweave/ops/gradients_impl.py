"""Reverse-mode automatic differentiation over the graph (``tf.gradients``).

Gradient functions live beside each op's definition (``OpDef.grad``, set with ``set_gradient``)
and follow TF's contract: ``grad(op, *output_grads) -> one gradient (or None) per input``.
"""

import collections
import contextlib

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.apply_op import get_op_def
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import concat_split_ops, control_flow_ops, fill_ops, math_ops
from tensorweave.ops.control_flow_context import is_loop_exit, is_loop_switch

__all__ = ["gradients", "RegisterGradient", "NotDifferentiable", "NoGradient", "no_gradient", "stop_gradient_ops",
           "AggregationMethod"]

_named_gradients = {}  # name -> gradient, for gradient_override_map (TF's RegisterGradient names)


class AggregationMethod:
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class RegisterGradient:
    """Decorator registering a gradient under a name, for ``gradient_override_map``:
    ``@tf.RegisterGradient("MySquare") def _(op, grad): ...``. A name that is a registered op type without a
    gradient also becomes that op's gradient (its ``OpDef.grad``, as ``set_gradient`` beside it would set)."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("RegisterGradient expects an op type name")
        self._op_type = op_type

    def __call__(self, fn):
        if self._op_type in _named_gradients or _defined_gradient(self._op_type):
            raise KeyError(f"a gradient named {self._op_type!r} is already registered (TF1 refuses a second one "
                           f"too); register yours under a new name and select it for ops of that type with "
                           f"graph.gradient_override_map({{{self._op_type!r}: 'NewName'}})")
        _named_gradients[self._op_type] = fn
        _give_op(self._op_type, fn)
        return fn


def NotDifferentiable(op_type):  # noqa: N802 - TF's name
    """Declares that ops of ``op_type`` pass no gradient to their inputs."""
    _named_gradients[op_type] = NOT_DIFFERENTIABLE
    _give_op(op_type, NOT_DIFFERENTIABLE)


NoGradient = NotDifferentiable
no_gradient = NotDifferentiable


def _defined_gradient(op_type):
    """Whether ``op_type`` is a registered op whose definition has a gradient (NotDifferentiable counts)."""
    try:
        return get_op_def(op_type).grad is not None
    except LookupError:
        return False


def _give_op(op_type, grad):
    """Sets the gradient of a registered op type that has none (a gradient its definition set stays)."""
    try:
        op_def = get_op_def(op_type)
    except LookupError:
        return
    if op_def.grad is None:
        op_def.grad = grad


def get_gradient_function(op):
    override = op._attrs.get("_gradient_op_type")
    if override is not None:
        try:
            return _named_gradients[override]
        except KeyError:
            raise LookupError(f"gradient_override_map names {override!r} for op {op.name!r}, but no gradient "
                              f"is registered under that name (use @tf.RegisterGradient)") from None
    return op.op_def.grad


def stop_gradient_ops(stop_gradients):
    return {t.op if isinstance(t, Tensor) else t for t in stop_gradients or []}


def _as_list(x):
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _between_ops(ys, xs, stops):
    """Ops on some path from an x to a y, in breadth-first order from the ys.

    The search does not continue past stopped ops, or past the Exit of a loop built with
    ``back_prop=False`` (which are added to ``stops``: nothing flows back through them).
    """
    reached = set()
    queue = collections.deque(x.op for x in xs)
    while queue:
        op = queue.popleft()
        if op in reached:
            continue
        reached.add(op)
        for out in op.outputs:
            queue.extend(c for c in out._consumers if c not in reached)
    between, between_list = set(), []
    queue = collections.deque(y.op for y in ys)
    while queue:
        op = queue.popleft()
        if op in between or op not in reached:
            continue
        between.add(op)
        between_list.append(op)
        if op.type == "Exit" and op._control_flow_context is not None and not op._control_flow_context.back_prop:
            stops.add(op)
        if op not in stops:
            queue.extend(t.op for t in op.inputs)
    return between_list, between


def _is_differentiable(t):
    return t.dtype.is_differentiable


def aggregate(grads, name="AddN"):
    """Sums gradients from several paths: AddN for dense, concatenation for IndexedSlices."""
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if all(isinstance(g, IndexedSlices) for g in grads):
        return IndexedSlices(concat_split_ops.concat([g.values for g in grads], 0),
                             concat_split_ops.concat([g.indices for g in grads], 0), grads[0].dense_shape)
    dense = [convert_to_tensor(g) for g in grads]
    return math_ops.add_n(dense, name=name)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients="none"):
    """Symbolic derivatives of sum(ys) with respect to each x in xs (None where unconnected).

    Through ``tf.cond`` the gradient flows along the taken branch only; through ``tf.while_loop`` it
    runs a backward loop over the forward iterations in reverse (see ops/loop_grad_state.py).
    """
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
        grads = collections.defaultdict(list)  # tensor -> list of gradient contributions
        for y, gy in zip(ys, grad_ys):
            if gy is None:
                if not _is_differentiable(y):
                    raise TypeError(f"gradients of {y.name} ({y.dtype.name}) are not defined: ys must be "
                                    f"floating point")
                gy = fill_ops.ones_like(y, name=f"grad_ys_{len(grads)}")
            else:
                gy = convert_to_tensor(gy, dtype=y.dtype)
            grads[y].append(gy)
        _Backprop(graph, ys, xs, stops, grads, colocate_gradients_with_ops, gate_gradients).run()
        result = []
        for x in xs:
            g = aggregate(grads.get(x, []))
            if g is None and unconnected_gradients == "zero":
                g = fill_ops.zeros_like(x)
            result.append(g)
        return result


class _Backprop:
    """One reverse sweep: ops become ready when all their consumers between xs and ys are done."""

    def __init__(self, graph, ys, xs, stops, grads, colocate, gate):
        self.graph, self.stops, self.grads, self.colocate, self.gate = graph, stops, grads, colocate, gate
        self.between_list, self.between = _between_ops(ys, xs, stops)
        from tensorweave.ops import control_flow_state  # loaded by the first tf.gradients: start-up time
        self.loop_state = control_flow_state.maybe_create(self.between_list, self.between,
                                                          graph._get_control_flow_context())
        self.pending = collections.Counter()
        for op in self.between_list:
            for t in op.inputs:
                if t.op in self.between:
                    self.pending[t.op] += 1
        self.queue = collections.deque()
        ys_ops = []
        for y in ys:
            if y.op not in ys_ops and self.pending[y.op] == 0 and y.op in self.between:
                ys_ops.append(y.op)
        self.queue.extend(ys_ops)
        if self.loop_state is not None:
            for y in self.loop_state.process_unused_loop_exits(self.pending, set(ys_ops)):
                self._seed_unused_exit(y)

    def _context(self, op, before):
        return self.loop_state.grad_context_for(op, before) if self.loop_state is not None else contextlib.nullcontext()

    def run(self):
        while self.queue:
            op = self.queue.popleft()
            ctx = self.graph.colocate_with(op) if self.colocate else contextlib.nullcontext()
            with ctx:
                with self._context(op, before=True):
                    out_grads = [aggregate(self.grads[t]) if self.grads.get(t) else None for t in op.outputs]
                for t, g in zip(op.outputs, out_grads):
                    if g is not None:
                        self.grads[t] = [g]
                in_grads = [None] * len(op.inputs)
                if op not in self.stops and op.inputs and any(g is not None for g in out_grads):
                    with self._context(op, before=False):
                        in_grads = self._call_gradient(op, out_grads)
                self._record(op, in_grads)
            self._update_pending(op)
        if self.loop_state is not None:
            self.loop_state.post_processing()

    def _call_gradient(self, op, out_grads):
        grad_fn = get_gradient_function(op)
        if grad_fn is NOT_DIFFERENTIABLE:
            return [None] * len(op.inputs)
        if grad_fn is None:
            raise LookupError(f"no gradient defined for operation {op.name!r} (op type: {op.type}), created at "
                              f"{op.where()}. Define one in its OpDef (set_gradient) or with @tf.RegisterGradient, "
                              f"or wrap the input in tf.stop_gradient.")
        from tensorweave.ops import control_flow_state  # loaded by the first tf.gradients: start-up time
        out_grads = list(out_grads)
        for i, (g, t) in enumerate(zip(out_grads, op.outputs)):
            if g is None and control_flow_state.is_trainable(t):
                out_grads[i] = (self.loop_state.zeros_like(op, i) if self.loop_state is not None
                                else control_flow_state.zeros_like_outside_loops(op, i))
        with self.graph.name_scope(f"{op.name}_grad"):
            in_grads = grad_fn(op, *out_grads)
        in_grads = _as_list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
        if len(in_grads) != len(op.inputs):
            raise ValueError(f"gradient function for {op.type} returned {len(in_grads)} gradients, but op "
                             f"{op.name!r} has {len(op.inputs)} inputs")
        if self.gate:  # a gradient nobody reads (its input leads to no x) must not be gated: it would run
            in_grads = [g if t.op in self.between else None for t, g in zip(op.inputs, in_grads)]
        if self.gate and sum(g is not None for g in in_grads) > 1:
            dense = [g for g in in_grads if isinstance(g, Tensor)]
            gated = iter(control_flow_ops.tuple(dense))
            in_grads = [next(gated) if isinstance(g, Tensor) else g for g in in_grads]
        return in_grads

    def _record(self, op, in_grads):
        for t, g in zip(op.inputs, in_grads):
            if g is None or not _is_differentiable(t):
                continue
            if isinstance(g, Tensor) and t.dtype is not dtypes.resource:
                if g.dtype != t.dtype:
                    raise TypeError(f"gradient of {op.type} op {op.name!r} for input {t.name} has dtype "
                                    f"{g.dtype.name}, expected {t.dtype.name}")
                if not g.shape.is_compatible_with(t.shape):
                    raise ValueError(f"gradient of {op.type} op {op.name!r} for input {t.name} has shape "
                                     f"{g.shape}, but the input has shape {t.shape}")
                g._shape = g.shape.merge_with(t.shape)
            self.grads[t].append(g)

    def _update_pending(self, op):
        for t in op.inputs:
            if t.op not in self.between:
                continue
            self.pending[t.op] -= 1
            ready = self.pending[t.op] == 0
            if not ready and self.loop_state is not None:
                ready = self.pending[t.op] > 0 and is_loop_switch(t.op)  # visited from each side
            if not ready:
                continue
            if self.loop_state is not None and is_loop_exit(t.op) and \
                    self.loop_state.grad_state_of(t.op, before=False) is not None:
                live, unused = self.loop_state.exit_ready(t, lambda y: bool(self.grads.get(y)))
                self.queue.extend(y.op for y in live)
                for y in unused:
                    if live:
                        self._seed_unused_exit(y)
                    else:
                        self.queue.append(y.op)
            else:
                self.queue.append(t.op)

    def _seed_unused_exit(self, y):
        from tensorweave.ops.control_flow_state import is_trainable  # loaded by the first tf.gradients: start-up time
        if is_trainable(y):
            self.grads[y] = [self.loop_state.zeros_like_for_exit(y)]
        self.queue.append(y.op)

