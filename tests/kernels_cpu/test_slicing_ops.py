"""Slicing and Python indexing against numpy's own indexing: keys, masks, dtypes, run-time shapes, errors,
gradients (finite differences) and sliced variable assignment."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_gradients, compute_gradient_error

DATA = np.arange(4 * 3 * 5).reshape(4, 3, 5)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def typed(dtype):
    """DATA in ``dtype`` (strings are the numbers spelled out)."""
    if dtype == "string":
        return np.vectorize(lambda v: str(v).encode(), otypes=[object])(DATA)
    if dtype == "bool":
        return DATA % 3 == 0
    return DATA.astype(dtype)


KEYS = [
    (1,), (-1,), (slice(None),), (slice(1, None),), (slice(None, None, -1),), (slice(5, -100, -2),),
    (slice(-2, None), 0), (Ellipsis, 1), (None, Ellipsis, None), (1, None, slice(None, None, 2), -1),
    (slice(10, 20),), (slice(3, 1),), (Ellipsis,), (), (0, 0, 0), (-4, -3, -5), (slice(1, 3), Ellipsis, slice(None, 1)),
    (slice(None, None, 3), None, 2), (slice(-1, None, -3), slice(None, -1), slice(4, 0, -2)),
    (Ellipsis, None), (slice(-100, 100), 2), (0, Ellipsis, 0, None),
]


@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "bool", "string", "complex64"])
def test_indexing_matches_numpy_for_every_dtype(dtype):
    data = typed(dtype)
    x = tf.placeholder(tf.as_dtype(data.dtype) if dtype != "string" else tf.string, data.shape)
    slices = [x[key] for key in KEYS]
    got = run(slices, {x: data})
    for key, g, t in zip(KEYS, got, slices):
        want = data[key]
        if isinstance(g, bytes):  # a scalar string is fetched as bytes, as in TF
            assert g == want and t.shape.as_list() == [], key
            continue
        assert g.dtype == want.dtype and g.shape == want.shape == tuple(t.shape.as_list()), key
        np.testing.assert_array_equal(g, want, err_msg=str(key))


def test_random_keys_match_numpy():
    rng = np.random.default_rng(0)

    def bound(dim):
        return None if rng.random() < 0.3 else int(rng.integers(-dim - 2, dim + 3))

    keys = []
    for _ in range(150):
        key = []
        for dim in DATA.shape:
            kind = rng.random()
            if kind < 0.25:
                key.append(int(rng.integers(-dim, dim)))
            elif kind < 0.9:
                key.append(slice(bound(dim), bound(dim), [None, 1, 2, 3, -1, -2, -4][rng.integers(7)]))
            if rng.random() < 0.15:
                key.append(None)
        if rng.random() < 0.3:
            key.insert(int(rng.integers(len(key) + 1)), Ellipsis)
        keys.append(tuple(key))
    x = tf.placeholder(tf.int64, [None, None, None])
    got = run([x[key] for key in keys], {x: DATA})
    for key, g in zip(keys, got):
        np.testing.assert_array_equal(g, DATA[key], err_msg=str(key))
        assert g.shape == DATA[key].shape, key


MASK_CASES = [  # (begin, end, strides, masks) and the numpy key meaning the same
    ([1, 0], [3, 0], [1, 1], {"end_mask": 2}, (slice(1, 3), slice(0, None))),
    ([0, 2], [0, 0], [1, -1], {"begin_mask": 1, "end_mask": 3}, (slice(None), slice(2, None, -1))),
    ([0, 1], [0, 2], [1, 1], {"ellipsis_mask": 1, "shrink_axis_mask": 2}, (Ellipsis, 1)),
    ([0, 0, 1], [0, 0, 2], [1, 1, 1], {"new_axis_mask": 1, "ellipsis_mask": 2}, (None, Ellipsis, slice(1, 2))),
    ([2], [1], [1], {"shrink_axis_mask": 1, "begin_mask": 1}, (2,)),
    ([-1, 0], [-5, 0], [-2, 1], {"new_axis_mask": 2}, (slice(-1, -5, -2), None)),
    ([3, 0, 9], [0, 0, 1], [-1, 1, -3], {"end_mask": 1, "ellipsis_mask": 2}, (slice(3, None, -1), Ellipsis,
                                                                                 slice(9, 1, -3))),
    ([0, 1, 0], [0, 2, 0], [1, 1, 1], {"shrink_axis_mask": 2, "new_axis_mask": 5}, (None, 1, None)),
    ([1, 1], [0, 3], [1, 1], {"new_axis_mask": 1, "shrink_axis_mask": 1}, (None, slice(1, 3))),  # new axis wins
    ([0, 0], [2, 2], [1, 1], {"ellipsis_mask": 1, "begin_mask": 1}, (Ellipsis, slice(0, 2))),
]


@pytest.mark.parametrize("case", MASK_CASES, ids=lambda c: str(c[4]))
def test_strided_slice_masks_match_numpy(case):
    begin, end, strides, masks, key = case
    x = tf.placeholder(tf.int64, DATA.shape)
    out = tf.strided_slice(x, begin, end, strides, **masks)
    got = run(out, {x: DATA})
    np.testing.assert_array_equal(got, DATA[key])
    assert out.shape.as_list() == list(DATA[key].shape)


def test_strided_slice_with_int64_specs_and_run_time_values():
    x = tf.placeholder(tf.float32, [None, None, None])
    begin, end, strides = (tf.placeholder(tf.int64, [3]) for _ in range(3))
    out = tf.strided_slice(x, begin, end, strides, begin_mask=4, end_mask=4, shrink_axis_mask=2)
    got = run(out, {x: DATA.astype(np.float32), begin: [3, 1, 7], end: [0, 2, 0], strides: [-1, 1, 2]})
    np.testing.assert_array_equal(got, DATA[3:0:-1, 1, ::2])


def test_default_strides_are_one():
    np.testing.assert_array_equal(run(tf.strided_slice(DATA, [1, 1], [3, 3])), DATA[1:3, 1:3])


def test_scalar_tensor_indices_and_bounds():
    x = tf.placeholder(tf.int64, [None, None, None])
    i, j = tf.placeholder(tf.int32, []), tf.placeholder(tf.int64, [])
    fetches = [x[i], x[-i], x[i:, j - 3], x[::i, ..., j:], x[i, j - 2, i:j]]
    got = run(fetches, {x: DATA, i: 2, j: 4})
    for g, w in zip(got, [DATA[2], DATA[-2], DATA[2:, 1], DATA[::2, ..., 4:], DATA[2, 2, 2:4]]):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_indexing_variables_and_numpy_integer_keys():
    v = tf.Variable(DATA.astype(np.float64))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([v[1], v[np.int64(-1), ::2], v[np.array(2), tf.Dimension(1)]])
    np.testing.assert_array_equal(got[0], DATA[1])
    np.testing.assert_array_equal(got[1], DATA[-1, ::2])
    np.testing.assert_array_equal(got[2], DATA[2, 1])


def test_run_time_shapes_fill_unknown_dimensions():
    x = tf.placeholder(tf.float32, [None, 3, None])
    out = x[1:, 0, ::-2]
    assert out.shape.as_list() == [None, None]
    assert run(out, {x: DATA.astype(np.float32)}).tolist() == DATA[1:, 0, ::-2].tolist()


def test_out_of_range_index_at_run_time_names_the_spec_and_the_shape():
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run(x[5], {x: np.zeros((4, 3), np.float32)})
    message = str(info.value)
    assert "index 5 is out of range for dimension 0 of size 4" in message and "[4, 3]" in message
    assert "StridedSlice" in message and "test_slicing_ops.py" in message


def test_too_many_indices_at_run_time():
    x = tf.placeholder(tf.float32, None)
    with pytest.raises(tf.errors.InvalidArgumentError, match="indexes 2 dimensions, but the tensor has only 1"):
        run(x[0, 0], {x: np.zeros(3, np.float32)})


def test_strided_slice_kernel_returns_a_view():
    from tensorweave_cpu.kernels.slicing import KERNELS

    class Node:
        attrs = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 1}

        class device:
            array_module = np

    kernel = next(k for k in KERNELS if k.op_type == "StridedSlice").build(Node())
    data = np.arange(12.0).reshape(3, 4)
    spec = [np.array(v, np.int32) for v in ([1, 3], [2, 0], [1, -1])]
    out = kernel(data, *spec)
    assert np.shares_memory(out, data) and out.tolist() == data[1, 3:0:-1].tolist()
    scalar = kernel(data[1], *[np.array(v, np.int32) for v in ([2], [3], [1])])
    assert isinstance(scalar, np.ndarray) and scalar.shape == () and scalar == 6.0


# ---- Slice ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("begin, size", [([1, 0, 2], [2, -1, 3]), ([0, 0, 0], [4, 3, 5]), ([3, 2, 4], [1, 1, 1]),
                                         ([4, 0, 0], [0, 3, 5]), ([0, 1, 0], [-1, -1, -1])])
def test_slice_matches_numpy(begin, size):
    x = tf.placeholder(tf.int64, [None, None, None])
    want = DATA[tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))]
    begin_ph = tf.placeholder(tf.int32, [3])
    got = run([tf.slice(x, begin, size), tf.slice(x, begin_ph, size)], {x: DATA, begin_ph: begin})
    for g in got:
        np.testing.assert_array_equal(g, want)


def test_slice_and_strided_slice_take_lists_mixing_ints_and_tensors():
    x = tf.placeholder(tf.int64, [4, 3, 5])
    i, j = tf.placeholder(tf.int32, []), tf.placeholder(tf.int64, [])
    sliced, strided = tf.slice(x, [0, i, 1], [-1, 1, j]), tf.strided_slice(x, [i, 0], [j, 0], end_mask=2)
    assert sliced.shape.as_list() == [4, 1, None] and strided.shape.as_list() == [None, 3, 5]
    got = run([sliced, strided], {x: DATA, i: 1, j: 3})
    np.testing.assert_array_equal(got[0], DATA[:, 1:2, 1:4])
    np.testing.assert_array_equal(got[1], DATA[1:3])


def test_slice_of_a_scalar_and_of_strings():
    assert run(tf.slice(tf.constant(3.5), [], [])) == 3.5
    assert run(tf.slice(tf.constant([b"a", b"b", b"c"]), [1], [2])).tolist() == [b"b", b"c"]


@pytest.mark.parametrize("begin, size", [([3, 0], [2, 1]), ([0, 4], [1, -1]), ([-1, 0], [1, 1]), ([0], [1])])
def test_slice_out_of_range_at_run_time(begin, size):
    x, begin_ph = tf.placeholder(tf.float32, None), tf.placeholder(tf.int32, None)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run(tf.slice(x, begin_ph, size), {x: np.zeros((4, 3), np.float32), begin_ph: begin})
    message = str(info.value)
    assert f"begin {begin} and size {size}" in message and "[4, 3]" in message


# ---- gradients --------------------------------------------------------------------------------------------------------
GRAD_KEYS = [(1,), (slice(1, None), slice(None, None, -2)), (Ellipsis, None, 1), (slice(None, None, -1), 0, None),
             (slice(5, -10, -3),), (-1, slice(1, 3), slice(4, 0, -2))]


@pytest.mark.parametrize("key", GRAD_KEYS, ids=str)
def test_indexing_gradients(key):
    def index(x):
        return x[key]
    index.__name__ = f"index{key}"
    check_gradients(index, [(4, 3, 5)])


def test_slice_gradients_with_static_and_run_time_shapes():
    check_gradients(lambda x: tf.slice(x, [1, 0, 2], [2, -1, 2]), [(4, 3, 5)])
    check_gradients(lambda x: tf.slice(tf.placeholder_with_default(x, [None, None]), [1, 1], [-1, 2]), [(3, 4)])


def test_strided_slice_gradient_with_run_time_shape_and_spec():
    x = tf.placeholder(tf.float64, [None, None])
    begin = tf.placeholder(tf.int32, [2])
    y = tf.strided_slice(x, begin, [0, 0], [1, -1], end_mask=3)
    feed = {begin: [1, 2]}
    error = compute_gradient_error(x, [3, 4], y, [2, 3], extra_feed_dict=feed)
    assert error < 1e-8


def test_second_derivative_through_strided_slice_grad():
    x = tf.placeholder(tf.float64, [4, 3])
    y = tf.reduce_sum(x[1:, ::2] ** 3)
    dx = tf.gradients(y, x)[0]
    d2x = tf.gradients(tf.reduce_sum(dx * dx), x)[0]
    data = np.random.default_rng(0).uniform(-1, 1, (4, 3))
    want = np.zeros((4, 3))
    want[1:, ::2] = 2 * (3 * data[1:, ::2] ** 2) * 6 * data[1:, ::2]
    np.testing.assert_allclose(run(d2x, {x: data}), want)


def test_strided_slice_grad_gradient_is_a_strided_slice():
    from tensorweave.framework.apply_op import apply_op
    dy = tf.placeholder(tf.float64, [2, 2])
    grad_op = apply_op("StridedSliceGrad", [[4, 3], [1, 0], [3, 0], [1, 2], dy], {"end_mask": 2})
    assert grad_op.shape.as_list() == [4, 3]
    check = compute_gradient_error(dy, [2, 2], grad_op, [4, 3])
    assert check < 1e-8


# ---- sliced assignment -------------------------------------------------------------------------------------------------
def test_assign_to_a_slice_of_a_variable():
    v = tf.Variable(np.zeros((3, 4)))
    before = v.read_value()
    first = v[1, 1:3].assign([1.0, 2.0])
    with tf.control_dependencies([first]):
        second = v[:, ::-3].assign(tf.constant([[3.0, 4.0]] * 3, tf.float64))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        old = sess.run(before)
        new = sess.run(second)
        assert not old.any()  # a value read earlier is not changed by the write
        want = np.zeros((3, 4))
        want[1, 1:3] = [1.0, 2.0]
        want[:, ::-3] = [3.0, 4.0]
        np.testing.assert_array_equal(new, want)
        np.testing.assert_array_equal(sess.run(v), want)


def test_assigning_a_value_of_the_wrong_shape_fails():
    v = tf.Variable(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="no broadcasting"):
        v[0].assign([1.0, 2.0])
    i, value = tf.placeholder(tf.int32, []), tf.placeholder(tf.float32, [None, 4])
    assign = v[i:].assign(value)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape \\[1, 4\\] to a slice of shape \\[2, 4\\]"):
            sess.run(assign, {i: 1, value: np.ones((1, 4), np.float32)})
