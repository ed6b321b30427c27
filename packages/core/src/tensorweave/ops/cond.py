"""tf.cond and tf.case: conditional execution built from Switch and Merge.

Each branch function is called inside a CondContext. Every tensor a branch uses from outside passes
through a Switch on the predicate, and input-less ops get a control edge from the branch's pivot, so
all ops of the untaken branch receive dead tensors and never run. Ops created *outside* the branch
functions are not conditional: they run whenever their inputs are ready, stateful ones included.
"""

import re
import warnings

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import nest, tensor_util
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Operation, user_frame
from tensorweave.framework.sparse_tensor import SparseTensor, expand_sparse, pack_sparse
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops, comparison_ops, concat_split_ops, control_flow_ops, logging_ops, reduction_ops, unary_math_ops,
)
from tensorweave.ops.control_flow_context import ControlFlowContext, create_outside_contexts, is_in_context
from tensorweave.ops.tensor_array_ops import TensorArray


_READS_OR_DRAWS = re.compile(r"(ReadVariableOp|VariableV2|Variable|VarHandleOp|Placeholder.*|TensorArrayRead.*|"
                             r"Random.*|TruncatedNormal|Multinomial|.*Sampler)$")

__all__ = ["case", "cond", "smart_cond"]


class CondContext(ControlFlowContext):
    """The context of one branch of a cond: ``branch`` 1 runs when ``pred`` is true, 0 when false."""

    def __init__(self, pred, pivot, branch):
        super().__init__()
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self.values.update([pred, pivot])
        self.external_values[pred] = pred
        pivot.op._control_flow_context = self

    def is_cond_context(self):
        return True

    def get_control_pivot(self):
        return self.pivot

    def add_value(self, val):
        """The tensor standing for ``val`` inside this branch (a Switch output for an outer value)."""
        if val in self.values:
            return self.external_values.get(val, val)
        self.values.add(val)
        result = val
        if self.outer_context is not None:
            result = self.outer_context.add_value(val)
            self.values.add(result)
            self.external_values[result] = result
        result = create_outside_contexts(lambda: control_flow_ops.switch(result, self.pred)[self.branch], self)
        ctx = self
        while ctx is not None:
            ctx.values.add(result)
            ctx = ctx.outer_context
        self.external_values[val] = result
        return result

    def add_op(self, op):
        if not op.inputs:
            self.remove_external_control_edges(op)
            if not any(is_in_context(c, self) for c in op.control_inputs):
                op._add_control_input(self.pivot.op)
        else:
            for index, x in enumerate(list(op.inputs)):
                if op.type == "Merge" and x.op.type == "NextIteration":
                    continue  # a loop being built inside this branch closes its own back edge
                real = self.add_value(x)
                if real is not x:
                    op._update_input(index, real)
            self.remove_external_control_edges(op)
        ctx = self
        while ctx is not None:
            ctx.values.update(op.outputs)
            ctx = ctx.outer_context
        if self.outer_context is not None:
            self.outer_context.add_inner_op(op)

    def build_branch(self, fn, fn_name):
        """Calls ``fn`` inside this context; returns (its structure, flat tensors standing for it)."""
        with self.entered():
            original = fn()
            if original is None:
                raise ValueError(f"tf.cond: {fn_name} returned None; both branch functions must return "
                                 f"tensors (or ops) with the same structure")
            self._warn_unconditional(original, fn_name)
            flat = [self._branch_output(v) for v in expand_sparse(nest.flatten(original))]
        return original, flat

    def _branch_output(self, v):
        if isinstance(v, Operation):
            return control_flow_ops.with_dependencies([v], self.pivot)
        if isinstance(v, TensorArray):
            return array_ops.identity(v.flow)
        if isinstance(v, IndexedSlices):
            return IndexedSlices(array_ops.identity(v.values), array_ops.identity(v.indices),
                                 None if v.dense_shape is None else array_ops.identity(v.dense_shape))
        return array_ops.identity(convert_to_tensor(v))

    def _warn_unconditional(self, result, fn_name):
        """The tf#3287 trap: an op with side effects built outside the branch runs whether or not it is
        taken. Returned ops, and tensors of stateful ops other than reads and random draws, qualify."""
        for v in nest.flatten(result):
            if isinstance(v, Operation):
                op = v
            elif isinstance(v, Tensor) and v.op.op_def.is_stateful and not _READS_OR_DRAWS.match(v.op.type):
                op = v.op
            else:
                continue
            harmless = op.type == "Const" or op.type == "NoOp" and not op.control_inputs
            if not is_in_context(op, self) and not harmless:
                warnings.warn(f"tf.cond: {fn_name} returns {op.name!r} ({op.type}), a stateful op created outside "
                              f"the branch function (at {op.where()}); it runs whether or not the branch is taken. "
                              f"Create it inside {fn_name} to make it conditional.", stacklevel=4)


def _call_site():
    file, line, _ = user_frame()
    return f"{file}:{line}"


def _check_pred(pred, what):
    if isinstance(pred, bool):
        raise TypeError(f"{what}: pred is the Python bool {pred}; a Python condition is known while building "
                        f"the graph, so use a Python `if` instead ({_call_site()})")
    pred = convert_to_tensor(pred)
    if pred.dtype is not dtypes.bool:
        raise TypeError(f"{what}: pred must be a bool tensor, but {pred.name} has dtype {pred.dtype.name} "
                        f"({_call_site()}); compare it (e.g. tf.greater(x, 0)) or tf.cast it to tf.bool")
    if pred.shape.ndims not in (None, 0):
        raise ValueError(f"{what}: pred must be a scalar, but {pred.name} has shape {pred.shape} "
                         f"({_call_site()}); reduce it first, e.g. with tf.reduce_any or tf.reduce_all")
    return pred


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``; only the ops of the taken branch run.

    Both functions return the same (nested) structure of tensors; the result has that structure
    (a one-element list or tuple is unpacked unless ``strict``). ``fn1``/``fn2`` are TF1's names.
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(f"tf.cond needs callable true_fn and false_fn, got {true_fn!r} and {false_fn!r}")
    pred = _check_pred(pred, "tf.cond")
    graph = pred.graph
    with graph.as_default(), graph.name_scope(name or "cond"):
        p_false, p_true = control_flow_ops.switch(pred, pred)
        pivot_true = array_ops.identity(p_true, name="switch_t")
        pivot_false = array_ops.identity(p_false, name="switch_f")
        pred = array_ops.identity(pred, name="pred_id")
        orig_t, res_t = CondContext(pred, pivot_true, branch=1).build_branch(true_fn, "true_fn")
        orig_f, res_f = CondContext(pred, pivot_false, branch=0).build_branch(false_fn, "false_fn")
        if not nest.same_structure(orig_t, orig_f):
            raise ValueError(f"tf.cond: true_fn and false_fn must return the same structure, but true_fn "
                             f"returned {nest.describe(orig_t)} and false_fn returned {nest.describe(orig_f)} "
                             f"({_call_site()})")
        leaves_t, leaves_f = nest.flatten(orig_t), nest.flatten(orig_f)
        for t, f in zip(leaves_t, leaves_f):
            if isinstance(t, SparseTensor) != isinstance(f, SparseTensor):
                raise ValueError(f"tf.cond: true_fn and false_fn must return the same structure, but one returns "
                                 f"{t!r:.60} where the other returns {f!r:.60} ({_call_site()})")
        for i, (t, f) in enumerate(zip(res_t, res_f)):
            if t.dtype != f.dtype:
                raise TypeError(f"tf.cond: output {i} of true_fn has dtype {t.dtype.name} but the same output "
                                f"of false_fn has dtype {f.dtype.name} ({_call_site()}); tf.cast one of them")
        merges = [control_flow_ops.merge([f, t])[0] for t, f in zip(res_t, res_f)]
        shapes = [t.get_shape().most_specific_compatible_shape(f.get_shape()) if isinstance(t, SparseTensor) else None
                  for t, f in zip(leaves_t, leaves_f)]
        merges = [TensorArray.from_flow(orig, m) if isinstance(orig, TensorArray) else m
                  for orig, m in zip(leaves_t, pack_sparse(leaves_t, merges, shapes))]
        result = nest.pack_sequence_as(orig_t, merges)
    if not strict and isinstance(result, (list, tuple)) and not hasattr(result, "_fields") and len(result) == 1:
        return result[0]
    return result


def smart_cond(pred, true_fn=None, false_fn=None, name=None):
    """Calls the branch ``pred`` selects when its value is known while building (a Python bool or a constant),
    else builds ``cond``: layers pass a ``training`` flag that is either."""
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(f"smart_cond: true_fn and false_fn must be callable, got {true_fn!r} and {false_fn!r}")
    if isinstance(pred, (bool, np.bool_)) or isinstance(pred, int) and pred in (0, 1):
        return true_fn() if pred else false_fn()
    value = tensor_util.constant_value(convert_to_tensor(pred))
    if value is not None:
        return true_fn() if bool(value) else false_fn()
    return cond(pred, true_fn, false_fn, name=name)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first true predicate (or ``default``), as a chain of conds.

    ``exclusive`` checks at run time that at most one predicate is true. Without ``default``, the last
    function is the fallback and an InvalidArgumentError is raised when no predicate is true.
    """
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    if not pairs:
        raise ValueError("tf.case needs at least one (predicate, function) pair")
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not callable(pair[1]):
            raise TypeError(f"tf.case: each entry of pred_fn_pairs must be a (bool tensor, callable) pair, "
                            f"got {pair!r}")
    if default is not None and not callable(default):
        raise TypeError(f"tf.case: default must be callable, got {default!r}")
    preds = [_check_pred(p, "tf.case") for p, _ in pairs]
    fns = [fn for _, fn in pairs]
    graph = preds[0].graph
    with graph.as_default(), graph.name_scope(name or "case"):
        guards = []
        if exclusive:
            guards.append(_assert_at_most_n_true(preds, 1, "tf.case: more than one predicate is true (exclusive=True)"))
        if default is None:
            last_pred, last_fn = preds[-1], fns[-1]
            preds, fns = preds[:-1], fns[:-1]

            def default():
                check = logging_ops.Assert(last_pred, ["tf.case: none of the predicates is true:",
                                                       concat_split_ops.stack(preds + [last_pred])])
                with graph.control_dependencies([check]):
                    return nest.map_structure(_identity_of, last_fn())

        def chain(i):
            if i == len(preds):
                return default()
            return cond(preds[i], fns[i], lambda: chain(i + 1), strict=strict, name=f"case_{i}")

        with graph.control_dependencies(guards):
            return chain(0)


def _identity_of(v):
    if isinstance(v, (Tensor, IndexedSlices)) or not isinstance(v, Operation):
        return array_ops.identity(convert_to_tensor(v))
    return v


def _assert_at_most_n_true(preds, n, message):
    count = reduction_ops.reduce_sum(unary_math_ops.cast(concat_split_ops.stack(preds), dtypes.int32))
    return logging_ops.Assert(comparison_ops.less_equal(count, n), [message, concat_split_ops.stack(preds)])
