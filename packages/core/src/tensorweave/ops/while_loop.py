"""tf.while_loop: a loop frame built from Enter, Merge, LoopCond, Switch, NextIteration and Exit.

Per loop variable: Enter moves the initial value into the frame, Merge picks it (iteration 0) or the
value of the previous iteration (NextIteration), Switch on the LoopCond sends it into the body or out
through Exit. Tensors the functions capture from outside enter once through a constant Enter. The
executor runs iterations in frames, up to ``parallel_iterations`` at once.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, nest, tensor_shape
from tensorweave.framework.operation import user_frame
from tensorweave.framework.sparse_tensor import SparseTensor, expand_sparse, pack_sparse
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, comparison_ops, control_flow_ops, math_ops
from tensorweave.ops.control_flow_context import (
    ControlFlowContext, create_outside_contexts, enclosing_control_pivot, in_context, is_loop_constant_enter,
    is_loop_exit, while_context_of,
)
from tensorweave.ops.tensor_array_ops import TensorArray

__all__ = ["while_loop"]


class WhileContext(ControlFlowContext):
    """The context of one while loop (and of the backward loop of its gradient, with ``grad_state``)."""

    def __init__(self, name, parallel_iterations=10, back_prop=True, swap_memory=False,
                 maximum_iterations=None, grad_state=None):
        super().__init__()
        if not isinstance(parallel_iterations, int) or parallel_iterations < 1:
            raise ValueError(f"tf.while_loop: parallel_iterations must be a positive int, got {parallel_iterations!r}")
        self.name = name  # the frame name; unique in the graph
        self.parallel_iterations = parallel_iterations
        self._back_prop = back_prop
        self.swap_memory = swap_memory
        self.maximum_iterations = maximum_iterations
        self._grad_state = grad_state
        self.pivot = None  # the LoopCond
        self.pivot_for_pred = None  # the Merge of the first loop variable
        self.pivot_for_body = None  # the body's view of the first loop variable
        self.loop_enters = []
        self.loop_exits = []
        self._control_tokens = {}

    def is_while_context(self):
        return True

    def get_while_context(self):
        return self

    @property
    def grad_state(self):
        return self._grad_state

    @property
    def back_prop(self):
        return self._back_prop

    def get_control_pivot(self):
        return self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred

    # ---- values and ops ----------------------------------------------------------------------
    def add_value(self, val):
        """The tensor standing for ``val`` inside the loop: a constant Enter for an outer value, or,
        in a gradient loop, the value saved for this iteration by the forward loop."""
        if val in self.values or val.op._control_flow_context is self:
            return self.external_values.get(val, val)
        self.values.add(val)
        grad_ctx = self.graph._get_control_flow_context()
        grad_ctx = grad_ctx.get_while_context() if grad_ctx is not None else None
        if grad_ctx is not None and grad_ctx.grad_state is not None:
            forward = while_context_of(val.op)
            if forward is not None and is_loop_exit(val.op):
                forward = forward.outer_context.get_while_context() if forward.outer_context else None
            if forward is not None and forward is grad_ctx.grad_state.forward_context:
                real = grad_ctx.grad_state.get_real_value(val)
                self.external_values[val] = real
                return real
        outer = self.outer_context.add_value(val) if self.outer_context is not None else val
        result = create_outside_contexts(
            lambda: control_flow_ops.enter(outer, self.name, is_constant=True,
                                           parallel_iterations=self.parallel_iterations), self)
        self.values.add(result)
        self.external_values[val] = result
        return result

    def add_op(self, op):
        if op.type in ("Shape", "Size", "Rank") and self._move_to_forward(op):
            return
        self.add_op_here(op)

    def _move_to_forward(self, op):
        """A shape taken in a gradient loop of a forward-loop tensor is computed (and saved) in the
        forward loop, so the stack keeps the small shape instead of the tensor."""
        grad_state = self.grad_state
        if grad_state is None or not op.inputs:
            return False
        if while_context_of(op.inputs[0].op) is not grad_state.forward_context:
            return False
        home = op.inputs[0].op._control_flow_context
        op._remove_all_control_inputs()
        op._control_flow_context = home
        home.add_op(op)
        return True

    def add_op_here(self, op):
        if not op.inputs:
            internal, external = self.remove_external_control_edges(op)
            if not internal:
                op._add_control_input(self.get_control_pivot().op)
        else:
            for index, x in enumerate(list(op.inputs)):
                real = self.add_value(x)
                if real is not x:
                    op._update_input(index, real)
            _, external = self.remove_external_control_edges(op)
            if not op.control_inputs and all(is_loop_constant_enter(x.op) for x in op.inputs):
                op._add_control_input(self.get_control_pivot().op)  # else it would run in every iteration
        self.values.update(op.outputs)
        for ext in external:
            op._add_control_input(self._control_token(ext))
        if self.outer_context is not None:
            self.outer_context.add_inner_op(op)

    def _control_token(self, external_op):
        """An op of this loop that runs after ``external_op`` (a control input from outside the loop)."""
        token = self._control_tokens.get(external_op)
        if token is None:
            with in_context(self.graph, self.outer_context), self.graph.control_dependencies([external_op]):
                after = array_ops.constant(True, name="control_token")
            token = self._control_tokens[external_op] = self.add_value(after).op
        return token

    # ---- building the loop -----------------------------------------------------------------------
    def build_loop(self, cond_fn, body_fn, loop_vars, shape_invariants, outer_deps, limited=False):
        """Adds the loop; returns the exits packed like the body's result."""
        flat_orig = nest.flatten(loop_vars)
        flat = [v.flow if isinstance(v, TensorArray) else convert_to_tensor(v) for v in expand_sparse(flat_orig)]
        paths = _var_names(loop_vars, limited)
        names = [f"{path} (tensor {t.name!r})" for path, t in zip(_part_names(paths, flat_orig), flat)]
        invariants = _flat_invariants(loop_vars, flat_orig, flat, shape_invariants, names)
        outer = [self.outer_context.add_value(x) for x in flat] if self.outer_context is not None else flat
        enters = []
        for x, real, invariant in zip(flat, outer, invariants):
            e = create_outside_contexts(lambda: control_flow_ops.enter(
                real, self.name, is_constant=False, parallel_iterations=self.parallel_iterations), self)
            e._shape = invariant
            e.op._add_control_inputs(outer_deps)
            enters.append(e)
        pivot = enclosing_control_pivot(self.outer_context)
        if pivot is not None:
            for e in enters:
                if is_loop_constant_enter(e.op.inputs[0].op):
                    e.op._add_control_input(pivot.op)  # dead when the enclosing iteration is the last one
        self.values = set(enters)
        self.loop_enters = enters
        with self.entered():
            merges = [control_flow_ops.merge([e, e])[0] for e in enters]
            self.pivot_for_pred = merges[0]
            pred = cond_fn(*_call_args(loop_vars, _rewrap(flat_orig, merges)))
            self.pivot = control_flow_ops.loop_cond(_check_loop_pred(pred), name="LoopCond")
            switches = [control_flow_ops.switch(m, self.pivot) for m in merges]
            body_vars = [array_ops.identity(s[1]) for s in switches]
            self.pivot_for_body = body_vars[0]
            packed_body = _call_args(loop_vars, _rewrap(flat_orig, body_vars))
            result = _as_sequence_like(loop_vars, body_fn(*packed_body))
            _check_structure(loop_vars, result)
            result_leaves = nest.flatten(result)
            _check_sparse_kinds(paths, flat_orig, result_leaves)
            for i, (m, v) in enumerate(zip(merges, expand_sparse(result_leaves))):
                v = v.flow if isinstance(v, TensorArray) else convert_to_tensor(v)
                _check_next_value(names[i], m, v)
                m.op._update_input(1, control_flow_ops.next_iteration(v))
            self.loop_exits = [control_flow_ops.loop_exit(s[0]) for s in switches]
        self.exit_result(self.loop_exits)
        shapes = [o.get_shape().most_specific_compatible_shape(r.get_shape()) if isinstance(o, SparseTensor) else None
                  for o, r in zip(flat_orig, result_leaves)]
        return nest.pack_sequence_as(result, _rewrap(result_leaves, self.loop_exits, shapes))


def _rewrap(flat_orig, tensors, static_shapes=None):
    """Loop tensors regrouped like the loop variables: TensorArrays and SparseTensors put back where they were."""
    return [TensorArray.from_flow(o, t) if isinstance(o, TensorArray) else t
            for o, t in zip(flat_orig, pack_sparse(flat_orig, tensors, static_shapes))]


def _part_names(paths, leaves):
    """A name per carried tensor: a SparseTensor's three parts as ``path.indices`` and so on."""
    names = []
    for path, leaf in zip(paths, leaves):
        names.extend([f"{path}.indices", f"{path}.values", f"{path}.dense_shape"] if isinstance(leaf, SparseTensor)
                     else [path])
    return names


def _check_sparse_kinds(paths, loop_leaves, result_leaves):
    for path, before, after in zip(paths, loop_leaves, result_leaves):
        if isinstance(before, SparseTensor) != isinstance(after, SparseTensor):
            raise ValueError(f"tf.while_loop: body must return the same structure as loop_vars, but {path} enters "
                             f"the loop as {before!r:.60} and the body returns {after!r:.60} for it ({_call_site()})")


def _is_plain_sequence(x):
    return isinstance(x, (list, tuple)) and not hasattr(x, "_fields")


def _as_sequence_like(loop_vars, result):
    """A body's result for a one-variable list of loop_vars may be the bare value."""
    if _is_plain_sequence(loop_vars) and len(loop_vars) == 1 and not _is_plain_sequence(result):
        return [result]
    return result


def _call_args(loop_vars, flat):
    packed = nest.pack_sequence_as(loop_vars, flat)
    return list(packed) if isinstance(loop_vars, (list, tuple)) else [packed]


def _call_site():
    file, line, _ = user_frame()
    return f"{file}:{line}"


def _check_loop_pred(pred):
    pred = convert_to_tensor(pred)
    if pred.dtype is not dtypes.bool or pred.shape.ndims not in (None, 0):
        raise TypeError(f"tf.while_loop: cond must return a scalar bool tensor, but it returned {pred.name} with "
                        f"dtype {pred.dtype.name} and shape {pred.shape} ({_call_site()})")
    return pred


def _check_structure(loop_vars, result):
    def top(x):
        return list(x) if _is_plain_sequence(x) else x
    if not nest.same_structure(top(loop_vars), top(result)):
        raise ValueError(f"tf.while_loop: body must return the same structure as loop_vars, but loop_vars is "
                         f"{nest.describe(loop_vars)} and body returned {nest.describe(result)} ({_call_site()})")


def _var_names(loop_vars, limited):
    """``loop_vars[1]['h']`` per flat loop variable; the counter maximum_iterations adds is named as such."""
    paths = nest.leaf_paths(loop_vars, "loop_vars")
    if limited:
        paths = ["the iteration counter"] + ["loop_vars" + p[len("loop_vars[1]"):] for p in paths[1:]]
    return paths


def _flat_invariants(loop_vars, leaves, flat, shape_invariants, names):
    """A shape per carried tensor. A SparseTensor's invariant is its dense_shape's (TF1's: the rank, or
    TensorShape([None]) for any rank); its indices and values may change length in every iteration."""
    if shape_invariants is None:
        given = [leaf.dense_shape.shape if isinstance(leaf, SparseTensor) else None for leaf in leaves]
    else:
        try:
            given = nest.flatten(nest.map_structure(lambda v, s: s, loop_vars, shape_invariants))
        except (ValueError, TypeError):
            raise ValueError(f"tf.while_loop: shape_invariants must have the structure of loop_vars "
                             f"({nest.describe(loop_vars)}), got {shape_invariants!r}") from None
    per_part = []
    for leaf, s in zip(leaves, given):
        if isinstance(leaf, SparseTensor):
            s = tensor_shape.as_shape(s)
            if s.ndims != 1:
                raise ValueError(f"tf.while_loop: the shape invariant of a SparseTensor is the shape of its "
                                 f"dense_shape, with 1 dimension (its rank, or None); got {s} ({_call_site()})")
            per_part.extend([tensor_shape.TensorShape([None, s[0]]), tensor_shape.TensorShape([None]), s])
        else:
            per_part.append(s)
    result = []
    for i, (t, s) in enumerate(zip(flat, per_part)):
        if s is None:
            result.append(t.shape)
            continue
        s = tensor_shape.as_shape(s)
        if not _shape_less_or_equal(t.shape, s):
            raise ValueError(f"tf.while_loop: {names[i]} has shape {t.shape}, which does not "
                             f"fit its shape invariant {s} ({_call_site()})")
        result.append(s)
    return result


def _shape_less_or_equal(shape, invariant):
    """Whether ``shape`` is at least as specific as ``invariant``."""
    if invariant.ndims is None:
        return True
    if shape.ndims != invariant.ndims:
        return False
    return all(b.value is None or a.value == b.value for a, b in zip(shape.dims, invariant.dims))


def _check_next_value(name, merge_out, value):
    if value.dtype != merge_out.dtype:
        raise TypeError(f"tf.while_loop: {name} enters the loop with dtype "
                        f"{merge_out.dtype.name}, but the body returns dtype {value.dtype.name} for it "
                        f"({_call_site()}); tf.cast it in the body")
    if not _shape_less_or_equal(value.shape, merge_out.shape):
        raise ValueError(f"tf.while_loop: {name} enters the loop with shape "
                         f"{merge_out.shape}, but has shape {value.shape} after one iteration ({_call_site()}). "
                         f"To let its shape change across iterations, pass shape_invariants= with a less "
                         f"specific shape for it, e.g. tf.TensorShape({_relaxed(merge_out.shape, value.shape)})")


def _relaxed(a, b):
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return "None"
    return str([x.value if x.value == y.value else None for x, y in zip(a.dims, b.dims)])


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``, as a loop in the graph.

    ``loop_vars`` is a (nested) structure of tensors and TensorArrays; a list or tuple is passed to
    ``cond`` and ``body`` as separate arguments. The result has the body's structure; a single loop
    variable comes back unwrapped unless ``return_same_structure``. ``back_prop=False`` saves nothing
    for gradients; ``swap_memory`` is accepted and ignored (values stay in host memory).
    """
    if not callable(cond) or not callable(body):
        raise TypeError(f"tf.while_loop needs callable cond and body, got {cond!r} and {body!r}")
    if loop_vars is None or (isinstance(loop_vars, (list, tuple)) and not loop_vars):
        raise ValueError("tf.while_loop needs at least one loop variable")
    graph = graph_mod.get_default_graph()
    outer_deps = graph._current_control_deps()
    with graph.name_scope(name or "while") as scope:
        wrapped = maximum_iterations is not None
        if wrapped:
            cond, body, loop_vars, shape_invariants = _with_iteration_limit(
                cond, body, loop_vars, shape_invariants, maximum_iterations)
        ctx = WhileContext(scope, parallel_iterations, back_prop, swap_memory, maximum_iterations)
        with graph.control_dependencies(None):
            result = ctx.build_loop(cond, body, loop_vars, shape_invariants, outer_deps, limited=wrapped)
    if wrapped:
        result = result[1]
    if _is_plain_sequence(result) and len(result) == 1 and not return_same_structure:
        return result[0]
    return result


def _with_iteration_limit(cond, body, loop_vars, shape_invariants, maximum_iterations):
    """Adds an iteration counter so the loop stops after ``maximum_iterations``."""
    limit = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if limit.shape.ndims not in (None, 0) or not limit.dtype.is_integer:
        raise ValueError(f"tf.while_loop: maximum_iterations must be a scalar integer, got {limit.dtype.name} "
                         f"with shape {limit.shape}")
    counter = array_ops.constant(0, dtype=limit.dtype, name="iteration_counter")
    star = isinstance(loop_vars, (list, tuple))

    def limited_cond(i, lv):
        return comparison_ops.logical_and(comparison_ops.less(i, limit), cond(*lv) if star else cond(lv))

    def limited_body(i, lv):
        result = _as_sequence_like(lv, body(*lv) if star else body(lv))
        if isinstance(lv, list) and isinstance(result, tuple) and not hasattr(result, "_fields"):
            result = list(result)
        return math_ops.add(i, 1), result

    invariants = None if shape_invariants is None else (tensor_shape.TensorShape([]), shape_invariants)
    return limited_cond, limited_body, (counter, loop_vars), invariants

