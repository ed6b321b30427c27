"""Symbolic gradients against central finite differences (TF1's ``compute_gradient`` family)."""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.graph import Graph
from tensorweave.framework.indexed_slices import IndexedSlicesValue
from tensorweave.ops.array_ops import placeholder
from tensorweave.ops.gradients_impl import gradients
from tensorweave.runtime.session import Session
from tensorweave.testing.op_checker import random_input


def _session_for(graph):
    return Session(graph=graph)


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None, session=None):
    """Returns (theoretical, numerical) Jacobians of ``y`` w.r.t. ``x`` (lists of them for a list of x).

    Each Jacobian has shape (x.size, y.size), as in TF1.
    """
    xs = x if isinstance(x, (list, tuple)) else [x]
    shapes = x_shape if isinstance(x, (list, tuple)) else [x_shape]
    inits = x_init_value if isinstance(x, (list, tuple)) else [x_init_value]
    if inits is None:
        inits = [None] * len(xs)
    rng = np.random.default_rng(1)
    values = [np.asarray(v, dtype=t.dtype.as_numpy_dtype) if v is not None
              else rng.uniform(-1, 1, size=s).astype(t.dtype.as_numpy_dtype) for t, s, v in zip(xs, shapes, inits)]
    y_size = int(np.prod(y_shape, dtype=np.int64))
    graph = y.graph
    own = session is None
    sess = session or _session_for(graph)
    try:
        with graph.as_default():
            if init_targets:
                sess.run(init_targets)
            dy = placeholder(y.dtype, y_shape)
            grads = gradients(y, list(xs), grad_ys=dy)
        feed_base = dict(extra_feed_dict or {})
        results = []
        for i, (t, v) in enumerate(zip(xs, values)):
            feeds = dict(feed_base)
            feeds.update({xx: vv for xx, vv in zip(xs, values)})
            theo = np.zeros((v.size, y_size))
            if grads[i] is not None:
                for j in range(y_size):
                    seed = np.zeros(y_size, dtype=y.dtype.as_numpy_dtype)
                    seed[j] = 1
                    g = sess.run(grads[i], {**feeds, dy: seed.reshape(y_shape)})
                    g = _dense(g)
                    theo[:, j] = np.asarray(g, dtype=np.float64).reshape(-1)
            num = np.zeros((v.size, y_size))
            flat = v.reshape(-1)
            for k in range(v.size):
                orig = flat[k]
                flat[k] = orig + delta  # np.array copies below: y may be a view of the fed array
                plus = np.array(sess.run(y, {**feeds, t: flat.reshape(v.shape)}), dtype=np.float64)
                flat[k] = orig - delta
                minus = np.array(sess.run(y, {**feeds, t: flat.reshape(v.shape)}), dtype=np.float64)
                flat[k] = orig
                num[k, :] = ((plus - minus) / (2 * delta)).reshape(-1)
            results.append((theo, num))
    finally:
        if own:
            sess.close()
    return results if isinstance(x, (list, tuple)) else results[0]


def _dense(g):
    if isinstance(g, IndexedSlicesValue):
        dense = np.zeros(g.dense_shape, dtype=g.values.dtype)
        np.add.at(dense, g.indices, g.values)
        return dense
    return g


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                           extra_feed_dict=None, session=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict, session)
    pairs = result if isinstance(result, list) else [result]
    return max(float(np.max(np.abs(t - n))) if t.size else 0.0 for t, n in pairs)


def check_gradients(fn, shapes, dtype="float64", delta=1e-6, tolerance=1e-5, positive=False, seed=0,
                    inputs=None, **kwargs):
    """Builds ``fn(*placeholders, **kwargs)`` in float64 and checks its gradient for every input.

    Returns the error; raises AssertionError if it exceeds ``tolerance``.
    """
    rng = np.random.default_rng(seed)
    graph = Graph()
    with graph.as_default():
        arrays = inputs if inputs is not None else [random_input(s, dtype, rng, low=-2, high=2, positive=positive)
                                                    for s in shapes]
        phs = [placeholder(dtypes.as_dtype(a.dtype), a.shape) for a in arrays]
        y = fn(*phs, **kwargs)
        with Session(graph=graph) as sess:
            y_shape = np.shape(sess.run(y, dict(zip(phs, arrays))))
            error = compute_gradient_error(phs, [a.shape for a in arrays], y, y_shape, list(arrays), delta,
                                           session=sess)
    assert error <= tolerance, f"gradient error {error:.3g} exceeds {tolerance:.3g} for {fn.__name__} at {shapes}"
    return error
