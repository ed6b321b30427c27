"""Shape ops, fills and identities run on the CPU: values against numpy over dtypes, shapes known only at run
time, run-time errors, and gradients against finite differences."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.extension import apply_op
from tensorweave.ops import array_ops
from tensorweave.testing import check_gradients, check_op

DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def hidden(x, rank_known=True):
    """``x`` with its static shape forgotten (all sizes, or the rank too)."""
    return tf.placeholder_with_default(x, shape=[None] * x.shape.ndims if rank_known else None)


def strings(shape):
    return np.array([str(i).encode() for i in range(int(np.prod(shape)))], dtype=object).reshape(shape)


# ---- shape, shape_n, size, rank -------------------------------------------------------------------------------------
@pytest.mark.parametrize("out_type", [tf.int32, tf.int64])
def test_shape_size_rank_at_run_time(out_type):
    def fn(x):
        x = hidden(x, rank_known=False)
        return [tf.shape(x, out_type=out_type), tf.size(x, out_type=out_type), tf.rank(x)]

    def reference(x):
        t = out_type.as_numpy_dtype
        return [np.array(x.shape, t), np.array(x.size, t), np.array(x.ndim, np.int32)]
    check_op(fn, reference, [[(2, 3, 4)], [()], [(0, 5)]], dtypes=DTYPES)


def test_shape_of_strings_and_shape_n():
    x, y = tf.placeholder(tf.string, [None]), tf.placeholder(tf.string, [None, 2])
    got = run(tf.shape_n([x, y]) + [tf.size(x)], {x: strings([3]), y: strings([5, 2])})
    assert [g.tolist() for g in got] == [[3], [5, 2], 3] and got[0].dtype == np.int32
    h = tf.placeholder(tf.float16, [None, 2])
    assert [g.tolist() for g in run(tf.shape_n([h, h], out_type=tf.int64), {h: np.zeros((4, 2))})] == [[4, 2]] * 2


# ---- reshape --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", [[6, 4], [-1], [2, -1, 2], [4, 3, 2, 1], [-1, 24]])
def test_reshape_matches_numpy(target):
    check_op(lambda x: tf.reshape(x, target), lambda x: x.reshape(target), [[(2, 3, 4)]], dtypes=DTYPES)


def test_reshape_with_run_time_shapes_and_strings():
    x, shape = tf.placeholder(tf.string, None), tf.placeholder(tf.int64, [None])
    value = strings([2, 6])
    got = run(tf.reshape(x, shape), {x: value, shape: [3, -1]})
    assert got.tolist() == value.reshape(3, -1).tolist()
    n = tf.placeholder(tf.int32, [])
    assert run(tf.reshape(tf.range(12), [n, 2, -1]), {n: 3}).shape == (3, 2, 2)


def test_reshape_kernel_returns_a_view():
    from tensorweave_cpu.kernels.shape import reshape
    x = np.arange(12.0).reshape(3, 4)
    y = reshape(x, np.array([2, -1]))
    assert y.shape == (2, 6) and np.shares_memory(x, y)


@pytest.mark.parametrize("target, message", [
    ([5, -1], "with 12 values .* the -1 size cannot be inferred"),
    ([5, 2], r"with 12 values \(shape \[3, 4\]\), but the requested shape \[5, 2\] has 10"),
    ([-1, -1], "more than one -1"),
])
def test_reshape_size_mistakes_at_run_time_are_invalid_argument_errors(target, message):
    x, shape = tf.placeholder(tf.float32, None), tf.placeholder(tf.int32, [None])
    y = tf.reshape(x, shape, name="flatten")
    with pytest.raises(tf.errors.InvalidArgumentError, match=message) as info:
        run(y, {x: np.zeros((3, 4)), shape: target})
    assert "'flatten'" in str(info.value)


# ---- expand_dims, squeeze -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_expand_dims_matches_numpy_with_a_run_time_axis_and_rank(axis):
    def fn(x):
        return tf.expand_dims(hidden(x, rank_known=False), tf.placeholder_with_default(np.int64(axis), []))
    check_op(fn, lambda x: np.expand_dims(x, axis), [[(2, 3)]], dtypes=DTYPES)


@pytest.mark.parametrize("axis", [None, [0], [2, -1], 0])
def test_squeeze_matches_numpy_with_unknown_sizes(axis):
    def reference(x):
        return np.squeeze(x, axis=tuple(axis) if isinstance(axis, list) else axis)
    check_op(lambda x: tf.squeeze(hidden(x), axis), reference, [[(1, 3, 1, 1)]], dtypes=DTYPES)


def test_run_time_axis_errors_name_the_axis():
    x = tf.placeholder(tf.float32, None)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Can not squeeze dim\[1\], expected a dimension of 1"):
        run(tf.squeeze(x, [1]), {x: np.zeros((1, 3))})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"must be in \[-3, 2\]"):
        run(tf.expand_dims(x, 4), {x: np.zeros((1, 3))})


# ---- broadcast_to, broadcast_dynamic_shape, ensure_shape ------------------------------------------------------------
@pytest.mark.parametrize("x_shape, target", [((3,), [2, 3]), ((2, 1), [2, 4]), ((), [3, 2]), ((1, 1, 3), [1, 2, 3])])
def test_broadcast_to_matches_numpy(x_shape, target):
    check_op(lambda x: tf.broadcast_to(hidden(x), target), lambda x: np.broadcast_to(x, target).copy(), [[x_shape]],
             dtypes=DTYPES)


def test_broadcast_to_result_is_writable_and_run_time_errors():
    x = tf.placeholder(tf.float32, None)
    got = run(tf.broadcast_to(x, [2, 3]), {x: np.ones(3, np.float32)})
    got[0, 0] = 5.0
    assert got.tolist() == [[5, 1, 1], [1, 1, 1]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \[2\] to shape \[3\]"):
        run(tf.broadcast_to(x, tf.placeholder_with_default([3], [None])), {x: np.ones(2, np.float32)})


def test_broadcast_dynamic_shape_at_run_time():
    a, b = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [None])
    shape = tf.broadcast_dynamic_shape(a, b)
    assert run(shape, {a: [2, 1, 3], b: [4, 1]}).tolist() == [2, 4, 3]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes for broadcasting: \[2\] and \[3\]"):
        run(shape, {a: [2], b: [3]})


def test_ensure_shape_checks_at_run_time():
    x = tf.placeholder(tf.float32, None)
    y = tf.ensure_shape(x, [None, 3])
    assert run(y, {x: np.ones((2, 3))}).shape == (2, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[2, 4\] is not compatible with expected shape"):
        run(y, {x: np.ones((2, 4))})


# ---- fills ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES + ["string"])
def test_zeros_and_ones_over_dtypes_static_and_run_time_shapes(dtype):
    dt = tf.as_dtype(dtype)
    zero = b"" if dtype == "string" else np.zeros((), dt.as_numpy_dtype)
    n = tf.placeholder(tf.int32, [])
    fills = [tf.zeros([2, 3], dt), tf.zeros([40, 30], dt), tf.zeros([n, 3], dt), tf.zeros(tf.stack([n, n]), dt)]
    got = run(fills, {n: 2})
    for g, shape in zip(got, [(2, 3), (40, 30), (2, 3), (2, 2)]):
        assert g.shape == shape and g.dtype == np.dtype(dt.as_numpy_dtype) and (g == zero).all()
    if dtype != "string":
        got = run([tf.ones([2, 3], dt), tf.ones([40, 30], dt), tf.ones([n], dt)], {n: 4})
        for g in got:
            assert g.dtype == np.dtype(dt.as_numpy_dtype) and (g == np.ones((), dt.as_numpy_dtype)).all()


@pytest.mark.parametrize("dtype", DTYPES + ["string"])
def test_fill_over_dtypes(dtype):
    dt = tf.as_dtype(dtype)
    value = np.array(b"ab" if dtype == "string" else 3, dt.as_numpy_dtype)
    dims = tf.placeholder(tf.int64, [None])
    got = run(tf.fill(dims, tf.constant(value, dt)), {dims: [2, 0, 3]})
    assert got.shape == (2, 0, 3) and got.dtype == np.dtype(dt.as_numpy_dtype)
    got = run(tf.fill([3, 2], tf.constant(value, dt), name="full"))
    assert got.shape == (3, 2) and (got == value).all()


def test_fill_results_are_writable_and_run_time_errors():
    n = tf.placeholder(tf.int32, [])
    got = run(tf.fill([n, 2], 1.5), {n: 2})
    got[0, 0] = 0.0
    assert got.tolist() == [[0.0, 1.5], [1.5, 1.5]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        run(tf.fill([n, 2], 1.5), {n: -1})


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_like_and_ones_like_over_dtypes(dtype):
    def fn(x):
        unknown = hidden(x)
        return [tf.zeros_like(x), tf.ones_like(x), tf.zeros_like(unknown), tf.ones_like(unknown),
                tf.zeros_like(unknown, dtype=tf.float64), tf.ones_like(x, dtype=tf.int64)]

    def reference(x):
        return [np.zeros_like(x), np.ones_like(x), np.zeros_like(x), np.ones_like(x),
                np.zeros(x.shape), np.ones(x.shape, np.int64)]
    check_op(fn, reference, [[(2, 3)], [()], [(0, 4)]], dtypes=[dtype])


def test_zeros_like_of_strings():
    x = tf.placeholder(tf.string, [None])
    assert run(tf.zeros_like(x), {x: strings([3])}).tolist() == [b"", b"", b""]
    assert run(tf.zeros_like(tf.constant([b"a", b"b"]))).tolist() == [b"", b""]


# ---- stop_gradient, identities --------------------------------------------------------------------------------------
def test_identity_like_ops_pass_values_through():
    a, b = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.string, [2])
    outs = tf.identity_n([a, b])
    snapshot = apply_op("Snapshot", [a])
    feed = {a: np.array([1.0, 2.0], np.float32), b: strings([2])}
    got = run(outs + [tf.stop_gradient(a), array_ops.prevent_gradient(a), snapshot], feed)
    assert got[0].tolist() == [1.0, 2.0] and got[1].tolist() == [b"0", b"1"]
    assert all(g.tolist() == [1.0, 2.0] for g in got[2:])


def test_snapshot_is_a_copy():
    with tf.Session() as sess:
        value = np.ones(3, np.float32)
        x = tf.placeholder(tf.float32, [3])
        copied = sess.run(apply_op("Snapshot", [x]), {x: value})
    assert not np.shares_memory(copied, value)


def test_stop_gradient_blocks_one_path_only():
    x = tf.constant([1.0, 2.0])
    y = tf.stop_gradient(x * x) + 3.0 * x
    assert run(tf.gradients(y, x))[0].tolist() == [3.0, 3.0]


def test_identity_n_gradient_passes_each_gradient():
    x, z = tf.constant([1.0, 2.0]), tf.constant(3.0)
    a, b = tf.identity_n([x, z])
    grads = run(tf.gradients(a * 2.0 + b * x, [x, z]))
    assert grads[0].tolist() == [5.0, 5.0] and grads[1] == 3.0


# ---- gradients against finite differences ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn, shape", [
    (lambda x: tf.reshape(x, [3, -1]), (2, 3)),
    (lambda x: tf.reshape(hidden(x, rank_known=False), [-1]), (2, 3)),
    (lambda x: tf.reshape(hidden(x), [2, -1]), (2, 3)),
    (lambda x: tf.expand_dims(x, 1) * 2.0, (2, 3)),
    (lambda x: tf.expand_dims(hidden(x, rank_known=False), -1), (2, 3)),
    (lambda x: tf.squeeze(x), (1, 3, 1)),
    (lambda x: tf.squeeze(hidden(x), [0]), (1, 3, 1)),
    (lambda x: tf.broadcast_to(x, [4, 2, 3]), (2, 1)),
    (lambda x: tf.broadcast_to(hidden(x), [2, 3, 2]), (3, 1)),
    (lambda x: tf.broadcast_to(x, [2, 3]), ()),
    (lambda x: tf.fill([2, 3], x) * tf.constant(np.arange(6.0).reshape(2, 3)), ()),
    (lambda x: tf.fill(tf.shape(hidden(tf.zeros([2, 2], tf.float64))), x), ()),
    (lambda x: tf.ensure_shape(x, [None, 2]) * 3.0, (2, 2)),
    (lambda x: apply_op("Snapshot", [x]) * x, (3,)),
], ids=["reshape", "reshape_unknown_rank", "reshape_unknown_sizes", "expand_dims", "expand_dims_unknown_rank",
        "squeeze", "squeeze_unknown_sizes", "broadcast_to", "broadcast_to_unknown_sizes", "broadcast_scalar",
        "fill", "fill_run_time_dims", "ensure_shape", "snapshot"])
def test_gradients_match_finite_differences(fn, shape):
    check_gradients(fn, [shape])


def test_shape_ops_and_fills_of_shapes_get_no_gradient():
    x = tf.placeholder(tf.float32, [None, 3])
    outputs = [tf.cast(tf.shape(x), tf.float32), tf.cast(tf.size(x), tf.float32), tf.zeros_like(x), tf.ones_like(x)]
    assert tf.gradients(outputs, x) == [None]
