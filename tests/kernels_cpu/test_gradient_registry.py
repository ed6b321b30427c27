"""Every op with a registered gradient (found by walking the op registry), against central finite differences,
in every frame a user puts it in: outside control flow, in the taken and in the untaken branch of a tf.cond,
and in a tf.while_loop body (its inputs captured by the loop, and passed in as loop variables). Each case
runs with its float inputs fed to placeholders and with them read from tf.Variables, so both ways a value
enters a branch or loop (a float Switch or Enter, or the variable's resource handle) are exercised.

The op's float outputs are summed with fixed weights into a scalar ``L``; each frame makes a scalar ``y`` of
it, and ``dy/dx . d`` along a random direction ``d`` per input is compared with the central difference
``(y(x + h d) - y(x - h d)) / 2h``. The cases (how to build each op) are in gradient_registry_cases.py; an
op with a gradient and no case fails ``test_every_gradient_has_a_case``.

Why the control-flow gradient tests before this one missed dead gradients of variables read in a cond
(issue 15): they differentiated only with respect to fed placeholders, whose values enter a branch through a
float Switch, and the untaken side of a float Switch always got a zero gradient. A variable read inside a
branch enters it through its resource handle, which got no zero: its gradient was dead whenever that branch
was not taken, and so was every sum it took part in. The tests with variables had loops but no cond, and
no test put each op in each frame. Here 245 of the variable cases in a cond failed before the fix.
"""

import functools

import numpy as np
import pytest
from gradient_registry_cases import BY_FRAMES, CASES, UNCHECKED

import tensorweave as tf
from tensorweave.framework.indexed_slices import IndexedSlicesValue
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE
from tensorweave.plugins import get_registries

FRAMES = ("outside", "cond_taken", "cond_untaken", "while_captured", "while_passed")
# Variables are read where the op is built, so their handles enter the branch or loop; passed into a loop
# they would be read outside it, as the fed inputs are, so that frame is left to the fed kind.
KIND_FRAMES = {"fed": FRAMES, "variable": FRAMES[:-1]}


def _gradient_ops():
    """The op types of the registry (every installed plugin's included) that have a gradient function."""
    return sorted(name for name, op_def in get_registries().ops.items()
                  if op_def.grad is not None and op_def.grad is not NOT_DIFFERENTIABLE)


def test_every_gradient_has_a_case():
    """A new op with a gradient must get a case (or a reason it cannot be checked) to be covered here."""
    missing = [name for name in _gradient_ops() if name not in CASES and name not in UNCHECKED
               and name not in BY_FRAMES]
    assert not missing, f"ops with a gradient but no case in gradient_registry_cases.py: {missing}"
    registry = get_registries().ops
    stale = [name for name in sorted({*CASES, *UNCHECKED, *BY_FRAMES}) if name in registry and
             name not in _gradient_ops()]
    assert not stale, f"gradient_registry_cases.py names ops that have no gradient: {stale}"


# ---- building the frames ----------------------------------------------------------------------------------------
def _inputs(case, rng):
    arrays = []
    for i, shape in enumerate(case.shapes):
        fixed = case.values[i] if case.values is not None else None
        if fixed is not None:
            arrays.append(np.asarray(fixed, np.float64))
            continue
        magnitude = rng.uniform(0.3, 1.5, shape)
        arrays.append(magnitude if case.positive else magnitude * rng.choice([-1.0, 1.0], shape))
    return arrays


def _weights(t, i):
    """Fixed weights of ``t``'s shape (known only when the graph runs, for some ops): 1 + sin(k + i) / 2."""
    if t.shape.is_fully_defined():
        n = int(np.prod(t.shape.as_list()))
        return (1.0 + 0.5 * np.sin(np.arange(n) + i)).reshape(t.shape.as_list())
    ks = tf.cast(tf.range(tf.size(t)), tf.float64)
    return tf.reshape(1.0 + 0.5 * tf.sin(ks + i), tf.shape(t))


def _loss(case, op_type, xs):
    """Sum of the case's float outputs, each weighted by fixed values; checks the op was built."""
    graph = tf.get_default_graph()
    before = len(graph.get_operations())
    out = case.build(*xs)
    built = {o.type for o in graph.get_operations()[before:]}
    assert op_type in built, f"the case for {op_type} built {sorted(built)}, not {op_type}"
    outs = [t for t in (out if isinstance(out, (list, tuple)) else [out]) if t.dtype == tf.float64]
    return tf.add_n([tf.reduce_sum(t * _weights(t, i)) for i, t in enumerate(outs)])


def _other(xs):
    """What the other branch computes: a function of every input, so its gradient is never zero."""
    return tf.add_n([tf.reduce_sum(tf.sin(tf.convert_to_tensor(x) * 0.7)) for x in xs])


def _frame(frame, loss, xs, pred):
    """``pred`` is fed True: the op's branch runs in cond_taken (the true branch) and not in cond_untaken."""
    if frame == "outside":
        return loss(xs)
    if frame == "cond_taken":
        return tf.cond(pred, lambda: loss(xs), lambda: _other(xs))
    if frame == "cond_untaken":
        return tf.cond(pred, lambda: _other(xs), lambda: loss(xs))
    zero = tf.constant(0.0, tf.float64)
    if frame == "while_captured":
        def body(i, acc):
            return i + 1, acc + loss(xs) * tf.cast(i + 1, tf.float64)
        return tf.while_loop(lambda i, acc: i < 2, body, [tf.constant(0), zero])[1]

    def passed(i, acc, *vs):
        return (i + 1, acc + loss(list(vs)) * tf.cast(i + 1, tf.float64)) + vs
    return tf.while_loop(lambda i, *_: i < 2, passed, [tf.constant(0), zero] + [tf.identity(x) for x in xs])[1]


# ---- running them -----------------------------------------------------------------------------------------------
def _dense(value):
    if isinstance(value, IndexedSlicesValue):
        dense = np.zeros(value.dense_shape, value.values.dtype)
        np.add.at(dense, value.indices, value.values)
        return dense
    return value


class _Graph:
    """One graph of a case: the inputs as placeholders or variables, and per frame y and dy/dx (or the error
    that building them raised)."""

    def __init__(self, op_type, case, kind):
        self.graph = tf.Graph()
        rng = np.random.default_rng(sorted(CASES).index(op_type))
        self.values = _inputs(case, rng)
        self.directions = [rng.normal(size=np.shape(v)) for v in self.values]
        self.fetches, self.errors = {}, {}
        with self.graph.as_default():
            self.pred = tf.placeholder(tf.bool, [], name="pred")
            self.feeds = [tf.placeholder(tf.float64, np.shape(v)) for v in self.values]
            self.xs = self.feeds if kind == "fed" else [tf.Variable(v) for v in self.values]
            self.load = None if kind == "fed" else tf.group(*[x.assign(f) for x, f in zip(self.xs, self.feeds)])
            for frame in KIND_FRAMES[kind]:
                try:
                    y = _frame(frame, lambda xs: _loss(case, op_type, xs), self.xs, self.pred)
                    grads = tf.gradients(y, self.xs)
                    self.fetches[frame] = (y, [g for g in grads if g is not None], [g is not None for g in grads])
                except Exception as exc:  # reported by that frame's test
                    self.errors[frame] = exc
        self.sess = tf.Session(graph=self.graph)  # variables are set (initialized) by each run's load

    def _run(self, fetches, values):
        if self.load is not None:
            self.sess.run(self.load, dict(zip(self.feeds, values)))
            return self.sess.run(fetches, {self.pred: True})
        return self.sess.run(fetches, {self.pred: True, **dict(zip(self.feeds, values))})

    def derivatives(self, frames, delta):
        """Per frame: (symbolic, numeric) derivatives along the directions, one per input. Every run fetches
        the same tensors, so one plan serves them all."""
        fetches = {f: self.fetches[f][:2] for f in frames}
        central = self._run(fetches, self.values)
        sides = []
        for i, d in enumerate(self.directions):
            sides.append([self._run(fetches, [v + sign * delta * d if j == i else v
                                              for j, v in enumerate(self.values)]) for sign in (1, -1)])
        out = {}
        for f in frames:
            grads = iter(central[f][1])
            symbolic = [float(np.sum(_dense(next(grads)) * d)) if connected else 0.0
                        for connected, d in zip(self.fetches[f][2], self.directions)]
            numeric = [float((plus[f][0] - minus[f][0]) / (2 * delta)) for plus, minus in sides]
            out[f] = (symbolic, numeric)
        return out


@functools.lru_cache(maxsize=None)
def _results(op_type, kind):
    """Per frame: (symbolic, numeric) derivatives, or the exception; all frames run together unless one fails."""
    case = CASES[op_type]
    g = _Graph(op_type, case, kind)
    out = dict(g.errors)
    try:
        out.update(g.derivatives(list(g.fetches), case.delta))
    except Exception:
        for frame in g.fetches:  # find the frames that fail
            try:
                out.update(g.derivatives([frame], case.delta))
            except Exception as exc:
                out[frame] = exc
    finally:
        g.sess.close()
    return out


def _params():
    """(op, kind, frame) for every op with a gradient; the ops that cannot be checked, skipped with why."""
    params = []
    for op_type in _gradient_ops():
        if op_type in UNCHECKED:
            params.append(pytest.param(op_type, None, None, id=op_type,
                                       marks=pytest.mark.skip(reason=f"{op_type}: {UNCHECKED[op_type]}")))
        for kind in CASES[op_type].kinds if op_type in CASES else ():
            for frame in KIND_FRAMES[kind]:
                params.append(pytest.param(op_type, kind, frame, id=f"{op_type}-{kind}-{frame}"))
    return params


@pytest.mark.parametrize("op_type,kind,frame", _params())
def test_gradient_against_finite_differences(op_type, kind, frame):
    result = _results(op_type, kind)[frame]
    if isinstance(result, Exception):
        raise result
    case = CASES[op_type]
    symbolic, numeric = result
    np.testing.assert_allclose(symbolic, numeric, rtol=case.tolerance, atol=case.tolerance,
                               err_msg=f"d/dx . direction of {op_type} ({kind} inputs) in frame {frame}")
