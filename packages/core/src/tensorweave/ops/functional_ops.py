"""map_fn, scan, foldl and foldr: a while_loop over the first dimension of (nested) ``elems``.

The elements are unstacked into TensorArrays, the loop reads element i in iteration i, and results
are written to TensorArrays and stacked, so all four are differentiable like any while_loop.
"""

from tensorweave.framework import graph as graph_mod, nest, tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import comparison_ops, shape_ops
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.ops.while_loop import while_loop

__all__ = ["map_fn", "scan", "foldl", "foldr"]


def _flat_elems(elems, what):
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must contain at least one tensor")
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError(f"{what}: elements are taken along the first dimension, but {e.name} is a scalar")
    return flat


def _length(flat, what):
    """The number of elements: a Python int when every elems tensor's first dimension is known."""
    static = {e.shape[0].value for e in flat if e.shape.ndims is not None}
    static.discard(None)
    if len(static) > 1:
        raise ValueError(f"{what}: all elems must have the same first dimension, got {sorted(static)}")
    if static:
        return static.pop()
    return shape_ops.shape(flat[0])[0]


def _unstacked(flat, n):
    return [TensorArray(e.dtype, size=n, element_shape=e.shape[1:] if e.shape.ndims else None).unstack(e)
            for e in flat]


def _stacked(accs, n):
    out = []
    for ta in accs:
        value = ta.stack()
        if isinstance(n, int):
            value._shape = tensor_shape.TensorShape([n]).concatenate(ta.element_shape)
        out.append(value)
    return out


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None):
    """[fn(elems[i]) for i], stacked; ``dtype`` gives fn's output structure/dtypes when it differs from elems'."""
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "map"):
        flat = _flat_elems(elems, "tf.map_fn")
        n = _length(flat, "tf.map_fn")
        inputs = _unstacked(flat, n)
        out_dtypes = nest.flatten(dtype) if dtype is not None else [e.dtype for e in flat]
        out_structure = dtype if dtype is not None else elems
        accs = [TensorArray(dt, size=n, infer_shape=infer_shape) for dt in out_dtypes]

        def body(i, *accs):
            x = nest.pack_sequence_as(elems, [ta.read(i) for ta in inputs])
            y = nest.flatten(fn(x))
            if len(y) != len(accs):
                raise ValueError(f"tf.map_fn: fn returned {len(y)} tensors, but {len(accs)} were expected from "
                                 f"{'dtype' if dtype is not None else 'elems'} ({nest.describe(out_structure)}); "
                                 f"pass dtype= with fn's output structure")
            return [i + 1] + [ta.write(i, v) for ta, v in zip(accs, y)]

        results = while_loop(lambda i, *_: i < n, body, [0] + accs, parallel_iterations=parallel_iterations or 10,
                             back_prop=back_prop, swap_memory=swap_memory, return_same_structure=True)
        return nest.pack_sequence_as(out_structure, _stacked(results[1:], n))


class _Accumulation:
    """What scan and the folds share: the elements as TensorArrays, the iteration order, the accumulator's
    structure and first value (without ``initializer`` the first element in that order), and the checked step."""

    def __init__(self, fn, elems, initializer, reverse, what):
        flat = _flat_elems(elems, what)
        self.n = _length(flat, what)
        self.inputs = _unstacked(flat, self.n)
        self.first, last, self.step = _order(self.n, reverse)
        self.more = _not_past(last, self.step)
        self.fn, self.elems, self.what = fn, elems, what
        if initializer is None:
            self.structure = elems
            self.initial = [ta.read(self.first) for ta in self.inputs]
            self.start = self.first + self.step
        else:
            self.structure = initializer
            self.initial = [convert_to_tensor(a) for a in nest.flatten(initializer)]
            self.start = self.first

    def apply(self, i, a):
        """``fn(a, elems[i])`` flattened; it must have the accumulator's structure."""
        x = nest.pack_sequence_as(self.elems, [ta.read(i) for ta in self.inputs])
        new = nest.flatten(self.fn(nest.pack_sequence_as(self.structure, list(a)), x))
        if len(new) != len(a):
            raise ValueError(f"{self.what}: fn must return the accumulator's structure "
                             f"({nest.describe(self.structure)}), got {len(new)} tensors")
        return new


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """Every accumulator value of ``a = fn(a, elems[i])``, stacked (from the end when ``reverse``).

    Without ``initializer`` the first element (the last when ``reverse``) starts the accumulation.
    """
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "scan"):
        acc = _Accumulation(fn, elems, initializer, reverse, "tf.scan")
        outs = [TensorArray(a.dtype, size=acc.n, infer_shape=infer_shape) for a in acc.initial]
        if initializer is None:
            outs = [ta.write(acc.first, a) for ta, a in zip(outs, acc.initial)]
        k = len(acc.initial)

        def body(i, *state):
            new = acc.apply(i, state[:k])
            return [i + acc.step] + new + [ta.write(i, v) for ta, v in zip(state[k:], new)]

        results = while_loop(acc.more, body, [acc.start] + acc.initial + outs,
                             parallel_iterations=parallel_iterations, back_prop=back_prop, swap_memory=swap_memory,
                             return_same_structure=True)
        return nest.pack_sequence_as(acc.structure, _stacked(results[1 + k:], acc.n))


def _order(n, reverse):
    """(first index, last index, step) of the iteration."""
    if not reverse:
        return 0, n - 1, 1
    return n - 1, 0, -1


def _not_past(last, step):
    if step > 0:
        return lambda i, *_: comparison_ops.less_equal(i, last)
    return lambda i, *_: comparison_ops.greater_equal(i, last)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse, what):
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or what.split(".")[1]):
        acc = _Accumulation(fn, elems, initializer, reverse, what)

        def body(i, *a):
            return [i + acc.step] + acc.apply(i, a)

        results = while_loop(acc.more, body, [acc.start] + acc.initial, parallel_iterations=parallel_iterations,
                             back_prop=back_prop, swap_memory=swap_memory, return_same_structure=True)
        return nest.pack_sequence_as(acc.structure, results[1:])


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``a = fn(a, elems[i])`` for i from the first element; returns the final ``a``."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, False, "tf.foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``a = fn(a, elems[i])`` for i from the last element; returns the final ``a``."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, True, "tf.foldr")

