"""gather / gather_nd / scatter_nd / one_hot / boolean_mask / sequence_mask / unique / where against numpy:
values over dtypes, run-time shapes, index errors, and gradients (finite differences and IndexedSlices)."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_gradients, check_op

RNG = np.random.default_rng(0)
PARAMS = RNG.uniform(-1, 1, (5, 4, 3))
DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool", "complex64"]


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def as_dtype(array, dtype):
    if dtype == "string":
        return np.vectorize(lambda v: f"{v:.2f}".encode(), otypes=[object])(array)
    if dtype == "bool":
        return array > 0
    return (array * 10).astype(dtype)


def batch_take(params, indices, axis, batch_dims):
    """numpy reference for gather with batch dims: one np.take per batch entry."""
    if batch_dims == 0:
        return np.take(params, indices, axis=axis)
    return np.stack([batch_take(p, i, axis - 1, batch_dims - 1) for p, i in zip(params, indices)])


# ---- gather ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES + ["string"])
def test_gather_matches_numpy_take_over_dtypes(dtype):
    params = as_dtype(PARAMS, dtype)
    indices = np.array([[2, 0], [1, 2], [1, 1]])
    x = tf.placeholder(tf.string if dtype == "string" else tf.as_dtype(params.dtype), [None, 4, 3])
    fetches = [tf.gather(x, indices), tf.gather(x, indices[0], axis=1), tf.gather(x, indices, axis=-1),
               tf.gather(x, 2), tf.gather(x, np.int64(1), axis=2)]
    got = run(fetches, {x: params})
    wants = [np.take(params, indices, 0), np.take(params, indices[0], 1), np.take(params, indices, 2),
             params[2], params[:, :, 1]]
    for g, w, t in zip(got, wants, fetches):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert t.shape.is_compatible_with(w.shape)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("axis, batch_dims, indices_shape", [(1, 1, (5, 6)), (2, 1, (5, 2, 2)), (2, 2, (5, 4, 3)),
                                                             (2, 1, (5,)), (1, -1, (5, 7))])
def test_gather_with_batch_dims_matches_a_loop_of_takes(axis, batch_dims, indices_shape):
    dim = PARAMS.shape[axis]
    indices = RNG.integers(0, dim, indices_shape)
    params = tf.placeholder(tf.float64, [None, None, None])
    got = run(tf.gather(params, indices, axis=axis, batch_dims=batch_dims), {params: PARAMS})
    want = batch_take(PARAMS, indices, axis, batch_dims % len(indices_shape) if batch_dims < 0 else batch_dims)
    np.testing.assert_array_equal(got, want)


def test_gather_with_a_run_time_axis_and_int64_indices():
    axis, indices = tf.placeholder(tf.int64, []), tf.placeholder(tf.int64, [None])
    out = tf.gather(PARAMS, indices, axis=axis)
    for a in (0, 1, 2, -1):
        np.testing.assert_array_equal(run(out, {axis: a, indices: [1, 0, 1]}), np.take(PARAMS, [1, 0, 1], axis=a))


@pytest.mark.parametrize("bad, where", [(5, "[1]"), (-1, "[1]")])
def test_gather_index_out_of_range_names_the_index_and_the_range(bad, where):
    indices = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run(tf.gather(PARAMS, indices), {indices: [0, bad, 2]})
    message = str(info.value)
    assert f"indices{where} = {bad} is not in [0, 5)" in message and "GatherV2" in message


def test_gather_along_an_inner_axis_checks_that_axis():
    indices = tf.placeholder(tf.int32, [2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1,0\] = 3 is not in \[0, 3\)"):
        run(tf.gather(PARAMS, indices, axis=2), {indices: [[0, 1], [3, 0]]})


def test_gather_from_a_variable_reads_the_rows():
    v = tf.Variable(PARAMS)
    rows = tf.gather(v, [3, 1])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(rows), PARAMS[[3, 1]])


def test_the_old_gather_op_of_imported_graphs():
    from tensorweave.framework.apply_op import apply_op
    params = tf.placeholder(tf.float64, [5, 4, 3])
    out = apply_op("Gather", [params, np.array([[3], [0]])])
    assert out.shape.as_list() == [2, 1, 4, 3]
    grad = tf.gradients(out, params)[0]
    got, grad_value = run([out, grad], {params: PARAMS})
    np.testing.assert_array_equal(got, PARAMS[[[3], [0]]])
    assert isinstance(grad, tf.IndexedSlices) and grad_value.indices.tolist() == [3, 0]


# ---- gather gradients -------------------------------------------------------------------------------------------------
def test_gather_gradient_is_indexed_slices_with_flattened_indices():
    params = tf.placeholder(tf.float64, [5, 4, 3])
    indices = np.array([[4, 1], [1, 1]])
    grad = tf.gradients(tf.gather(params, indices), params, grad_ys=tf.ones([2, 2, 4, 3], tf.float64) * 2)[0]
    assert isinstance(grad, tf.IndexedSlices)
    value = run(grad, {params: PARAMS})
    assert value.indices.tolist() == [4, 1, 1, 1] and value.dense_shape.tolist() == [5, 4, 3]
    np.testing.assert_array_equal(value.values, np.full((4, 4, 3), 2.0))
    dense = run(tf.convert_to_tensor(grad), {params: PARAMS})
    want = np.zeros((5, 4, 3))
    want[4], want[1] = 2.0, 6.0
    np.testing.assert_array_equal(dense, want)


def test_gather_gradient_with_an_unknown_number_of_rows():
    params = tf.placeholder(tf.float64, [None, 3])
    grad = tf.gradients(tf.gather(params, [0, 2, 0]), params)[0]
    value = run(grad, {params: np.zeros((4, 3))})
    assert value.dense_shape.tolist() == [4, 3] and value.indices.tolist() == [0, 2, 0]


@pytest.mark.parametrize("axis, batch_dims, indices", [
    (0, 0, [[4, 1], [1, 1]]), (1, 0, [[3, 0, 3]]), (2, 0, [2, 2, 0, 1]), (-1, 0, [[1]]),
    (1, 1, [[0, 3], [1, 1], [2, 0], [3, 3], [0, 0]]), (2, 1, [[0, 2], [1, 1], [2, 0], [2, 2], [0, 0]]),
    (2, 2, np.zeros((5, 4, 2), int)),
])
def test_gather_gradients_match_finite_differences(axis, batch_dims, indices):
    check_gradients(lambda p: tf.gather(p, np.asarray(indices), axis=axis, batch_dims=batch_dims), [(5, 4, 3)])


def test_dense_gather_gradient_with_run_time_shapes_and_axis():
    def gather_on_a_run_time_axis(p):
        axis = tf.placeholder_with_default(np.int32(1), [])
        return tf.gather(tf.placeholder_with_default(p, [None, None, None]), [[2, 0]], axis=axis)
    check_gradients(gather_on_a_run_time_axis, [(5, 4, 3)])


def test_gradient_descent_through_gather_updates_only_the_rows_read():
    v = tf.Variable(np.ones((4, 2)))
    loss = tf.reduce_sum(tf.gather(tf.identity(v), [2, 0, 2]))
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        np.testing.assert_array_equal(sess.run(v), [[0.5, 0.5], [1, 1], [0, 0], [1, 1]])


# ---- gather_nd / scatter_nd --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES + ["string"])
def test_gather_nd_matches_numpy(dtype):
    params = as_dtype(PARAMS, dtype)
    cases = [np.array([[4, 1], [0, 3], [4, 1]]), np.array([[[1, 2, 0]], [[0, 0, 2]]]), np.array([3]),
             np.zeros((2, 0), int)]
    x = tf.placeholder(tf.string if dtype == "string" else tf.as_dtype(params.dtype), [None, None, 3])
    got = run([tf.gather_nd(x, c) for c in cases], {x: params})
    for c, g in zip(cases, got):
        want = params[tuple(np.moveaxis(c, -1, 0))] if c.shape[-1] else np.broadcast_to(params, c.shape[:-1] +
                                                                                           params.shape)
        np.testing.assert_array_equal(g, want)
        assert g.dtype == params.dtype


def test_gather_nd_with_batch_dims():
    indices = np.array([[[1], [3]], [[0], [0]], [[2], [1]], [[3], [3]], [[0], [2]]])
    got = run(tf.gather_nd(tf.placeholder_with_default(PARAMS, [None, None, 3]), indices, batch_dims=1))
    np.testing.assert_array_equal(got, np.stack([PARAMS[b][indices[b][:, 0]] for b in range(5)]))


def test_gather_nd_index_errors():
    indices = tf.placeholder(tf.int32, [None, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[0, 4\] does not index into shape"):
        run(tf.gather_nd(PARAMS, indices), {indices: [[0, 0], [0, 4]]})


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "complex128"])
def test_scatter_nd_sums_duplicates_like_np_add_at(dtype):
    indices = np.array([[1, 0], [3, 2], [1, 0], [0, 1]])
    updates = as_dtype(RNG.uniform(-1, 1, (4, 5)), dtype)
    got = run(tf.scatter_nd(indices, updates, [4, 3, 5]))
    want = np.zeros((4, 3, 5), dtype)
    np.add.at(want, (indices[:, 0], indices[:, 1]), updates)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-3)


def test_scatter_nd_with_whole_tensor_updates_and_errors():
    got = run(tf.scatter_nd(np.zeros((2, 0), np.int32), np.ones((2, 3), np.float32), [3]))
    assert got.tolist() == [2.0, 2.0, 2.0]
    indices = tf.placeholder(tf.int32, [None, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = \[7\]"):
        run(tf.scatter_nd(indices, [1.0], [4]), {indices: [[7]]})


def test_gather_nd_and_scatter_nd_gradients():
    indices = np.array([[4, 1], [0, 3], [4, 1]])
    check_gradients(lambda p: tf.gather_nd(p, indices), [(5, 4, 3)])
    check_gradients(lambda u: tf.scatter_nd(indices, u, [5, 4, 3]), [(3, 3)])
    check_gradients(lambda p: tf.gather_nd(tf.placeholder_with_default(p, [None, None, None]), indices), [(5, 4, 3)])


# ---- one_hot ----------------------------------------------------------------------------------------------------------
def one_hot_reference(indices, depth, on, off, axis):
    hot = np.where(indices[..., None] == np.arange(depth), on, off)
    return np.moveaxis(hot, -1, axis if axis >= 0 else -1)


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_one_hot_matches_a_reference_with_out_of_range_rows_off(axis):
    indices = np.array([[0, 3, -1], [5, 2, 1]])
    got = run(tf.one_hot(tf.placeholder_with_default(indices, [None, None]), 4, axis=axis))
    want = one_hot_reference(indices, 4, 1.0, 0.0, axis).astype(np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("on, off, dtype, np_dtype", [
    (5, -1, None, np.int32), (1.5, 0.5, tf.float16, np.float16), (None, None, tf.int64, np.int64),
    (True, False, None, np.bool_), (b"on", b"off", None, object), (np.float64(2.0), None, None, np.float64),
])
def test_one_hot_values_and_dtypes(on, off, dtype, np_dtype):
    indices = np.array([2, 0, 7], np.uint8)
    got = run(tf.one_hot(indices, 3, on_value=on, off_value=off, dtype=dtype))
    on_v = 1 if on is None else on
    off_v = 0 if off is None else off
    want = one_hot_reference(indices.astype(int), 3, on_v, off_v, -1).astype(np_dtype)
    assert got.dtype == np.dtype(np_dtype)
    np.testing.assert_array_equal(got, want)


def test_one_hot_depth_at_run_time():
    depth = tf.placeholder(tf.int32, [])
    out = tf.one_hot([1, 0], depth)
    assert out.shape.as_list() == [2, None]
    assert run(out, {depth: 3}).tolist() == [[0, 1, 0], [1, 0, 0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="depth must be non-negative"):
        run(out, {depth: -1})


# ---- boolean_mask, sequence_mask, where, unique ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "int64", "bool", "string"])
def test_boolean_mask_matches_numpy(dtype):
    data = as_dtype(PARAMS, dtype)
    masks = [(PARAMS[:, 0, 0] > 0, None), (PARAMS[:, :, 0] > 0, None), (PARAMS[0, :, 0] > 0, 1),
             (PARAMS[0] > 0, 1), (PARAMS[0, 0] > 0, -1), (np.zeros(5, bool), None)]
    x = tf.placeholder(tf.string if dtype == "string" else tf.as_dtype(data.dtype), [None, None, None])
    got = run([tf.boolean_mask(x, m, axis=a) for m, a in masks], {x: data})
    for (m, a), g in zip(masks, got):
        a = a or 0
        want = data[(slice(None),) * (a % 3) + (m,)]
        assert g.shape == want.shape
        np.testing.assert_array_equal(g, want)


def test_boolean_mask_with_a_run_time_mask_and_its_gradient():
    mask = tf.placeholder(tf.bool, [None])
    x = tf.placeholder(tf.float64, [None, 3])
    picked = tf.boolean_mask(x, mask)
    data = RNG.uniform(size=(4, 3))
    np.testing.assert_array_equal(run(picked, {x: data, mask: [True, False, False, True]}), data[[0, 3]])
    check_gradients(lambda t: tf.boolean_mask(t, PARAMS[:, :, 0] > 0), [(5, 4, 3)])
    check_gradients(lambda t: tf.boolean_mask(t, PARAMS[0, :, 0] > 0, axis=1), [(5, 4, 3)])


def test_sequence_mask_matches_a_reference():
    lengths = np.array([[0, 3], [5, 1]])
    for maxlen, dtype in ((None, tf.bool), (4, tf.float32), (tf.constant(6, tf.int64), tf.int32)):
        got = run(tf.sequence_mask(lengths, maxlen, dtype=dtype))
        n = 5 if maxlen is None else (4 if maxlen == 4 else 6)
        want = np.arange(n) < lengths[..., None]
        assert got.dtype == dtype.as_numpy_dtype
        np.testing.assert_array_equal(got, want.astype(got.dtype))
    assert run(tf.sequence_mask(tf.zeros([0], tf.int32))).shape == (0, 0)


def test_where_gives_the_coordinates_of_true_and_nonzero_entries():
    data = PARAMS > 0.3
    assert run(tf.where(data)).tolist() == np.argwhere(data).tolist()
    assert run(tf.where(tf.constant([0, 3, 0, -2]) * 1)).tolist() == [[1], [3]]


@pytest.mark.parametrize("values", [[3, 1, 3, 2, 1, 1], [b"b", b"a", b"b"], [2.5, -1.0, 2.5], [True, True, False],
                                    []])
def test_unique_keeps_the_order_of_first_appearance(values):
    x = np.array(values, dtype=object if values and isinstance(values[0], bytes) else None)
    if not values:
        x = np.zeros(0, np.int64)
    y, idx, count = run(tf.unique_with_counts(x, out_idx=tf.int64))
    first = list(dict.fromkeys(values))
    assert y.tolist() == first and idx.dtype == count.dtype == np.int64
    assert idx.tolist() == [first.index(v) for v in values]
    assert count.tolist() == [values.count(v) for v in first]
    y2, idx2 = run(tf.unique(x))
    assert y2.tolist() == first and idx2.dtype == np.int32 and np.array_equal(y2[idx2], x)


def test_check_op_over_shapes_for_gather_nd_and_one_hot():
    check_op(lambda p: tf.gather_nd(p, [[1, 0], [0, 2]]), lambda p: p[[1, 0], [0, 2]], [[(2, 3)], [(3, 4, 2)]],
             dtypes=("float16", "float32", "int64"))
    check_op(lambda i: tf.one_hot(i, 3, dtype=tf.float64), lambda i: (i[..., None] == np.arange(3)).astype(np.float64),
             [[(4,)], [(2, 3)]], dtypes=("int32", "int64"))
