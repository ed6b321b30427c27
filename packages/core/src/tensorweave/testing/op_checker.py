"""check_op: an op against its numpy reference over shapes and dtypes."""

import numpy as np

from tensorweave import dtypes as tw_dtypes
from tensorweave.framework.graph import Graph
from tensorweave.ops.array_ops import placeholder
from tensorweave.runtime.session import Session


def random_input(shape, dtype, rng, low=-3.0, high=3.0, positive=False):
    """A random numpy input of ``shape``/``dtype`` (positive values if asked; booleans half true)."""
    dtype = tw_dtypes.as_dtype(dtype)
    if dtype.is_bool:
        return rng.random(shape) < 0.5
    if dtype.is_integer:
        lo = 1 if positive else int(low)
        lo = max(lo, 0) if dtype.is_unsigned else lo
        return rng.integers(lo, max(int(high), lo + 1) + 1, size=shape).astype(dtype.as_numpy_dtype)
    lo = max(low, 0.1) if positive else low
    return rng.uniform(lo, high, size=shape).astype(dtype.as_numpy_dtype)


def check_op(tf_fn, np_fn, shapes, dtypes=("float32", "float64"), rtol=None, atol=None, positive=False,
             inputs=None, seed=0, config=None, **kwargs):
    """Runs ``tf_fn(*placeholders, **kwargs)`` and compares with ``np_fn(*arrays, **kwargs)``.

    ``shapes`` is a list of input-shape tuples (one entry per call signature to try); each dtype in
    ``dtypes`` is tried with every signature. Pass ``inputs`` to use fixed arrays instead.
    Returns the number of comparisons made; raises AssertionError naming the case that differs.
    """
    rng = np.random.default_rng(seed)
    cases = 0
    for dtype in dtypes:
        dt = tw_dtypes.as_dtype(dtype)
        for signature in shapes if inputs is None else [None]:
            arrays = inputs if inputs is not None else [random_input(s, dt, rng, positive=positive) for s in signature]
            graph = Graph()
            with graph.as_default():
                phs = [placeholder(tw_dtypes.as_dtype(a.dtype), a.shape) for a in arrays]
                out = tf_fn(*phs, **kwargs)
                with Session(graph=graph, config=config) as sess:
                    got = sess.run(out, dict(zip(phs, arrays)))
            want = np_fn(*arrays, **kwargs)
            where = f"dtype={dt.name}, input shapes={[a.shape for a in arrays]}"
            _check_dtypes(got, out, where)
            _compare(got, want, dt, rtol, atol, where)
            cases += 1
    return cases


def _check_dtypes(got, out, where):
    """A kernel must return exactly the dtype its op declares."""
    if isinstance(out, (list, tuple)):
        for g, o in zip(got, out):
            _check_dtypes(g, o, where)
        return
    want = np.dtype(out.dtype.as_numpy_dtype)
    have = np.asarray(got).dtype
    assert have == want or want.kind == "O", f"{where}: kernel returned dtype {have}, the op declares {want}"


def _compare(got, want, dt, rtol, atol, where):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{where}: got {got!r}, want {want!r}"
        for g, w in zip(got, want):
            _compare(g, w, dt, rtol, atol, where)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{where}: shape {got.shape}, expected {want.shape}"
    if want.dtype.kind in "fc":
        tol = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-5}.get(want.dtype, 1e-10)
        np.testing.assert_allclose(got, want, rtol=rtol if rtol is not None else tol * 10,
                                   atol=atol if atol is not None else tol * 10, err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)
