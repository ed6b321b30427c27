"""concat, split, stack and unstack on the CPU: values against numpy over dtypes and axes, run-time shapes,
errors while building and while running, constant folding, and gradients against finite differences."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.tensor_util import constant_value
from tensorweave.testing import compute_gradient_error

DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool", "string"]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "string":
        return np.array([f"s{v}".encode() for v in rng.integers(0, 100, size=shape).reshape(-1)],
                        object).reshape(shape)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    return (rng.uniform(-5, 5, size=shape) * (1 if dtype.startswith("float") else 10)).astype(dtype)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def assert_same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def gradient_error(xs, out, feed=None):
    """compute_gradient_error with each x's shape taken from its fed value."""
    feed = dict(feed or {})
    values = [feed.pop(x) for x in xs]
    with tf.Session() as sess:
        y_shape = np.shape(sess.run(out, {**feed, **dict(zip(xs, values))}))
    return compute_gradient_error(xs, [v.shape for v in values], out, y_shape, x_init_value=values,
                                  extra_feed_dict=feed)


# ---- concat ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_matches_numpy_over_dtypes_and_axes(dtype):
    a, b, c = sample((2, 3, 4), dtype, 1), sample((2, 1, 4), dtype, 2), sample((2, 2, 4), dtype, 3)
    tensors = [tf.constant(v) for v in (a, b, c)]
    got = run([tf.concat(tensors, 1), tf.concat(tensors, -2), tf.concat([a, a], 0), tf.concat([a, a], -1)])
    for g, want in zip(got, [np.concatenate([a, b, c], 1)] * 2 + [np.concatenate([a, a], 0),
                                                               np.concatenate([a, a], 2)]):
        assert_same(g, want)


def test_concat_with_unknown_dimensions_and_a_run_time_axis():
    x, y = tf.placeholder(tf.float32, [None, None]), tf.placeholder(tf.float32, [None, 2])
    axis, axis64 = tf.placeholder(tf.int32, []), tf.placeholder(tf.int64, [])
    a, b = sample((3, 2), "float32"), sample((3, 2), "float32", 1)
    got = run([tf.concat([x, y], 0), tf.concat([x, y], axis), tf.concat([x, y], axis64)],
              {x: a, y: b, axis: 1, axis64: -1})
    assert_same(got[0], np.concatenate([a, b], 0))
    assert_same(got[1], np.concatenate([a, b], 1))
    assert_same(got[2], np.concatenate([a, b], 1))


def test_concat_accepts_python_values_and_tf0_argument_order():
    x = tf.constant([[1, 2]])
    got = run([tf.concat([x, [[3, 4]]], 0), tf.concat(1, [x, x]), tf.concat(values=[x, x], axis=1)])
    assert_same(got[0], np.array([[1, 2], [3, 4]], np.int32))
    assert_same(got[1], np.array([[1, 2, 1, 2]], np.int32))
    assert_same(got[2], got[1])


def test_concat_of_one_value_is_an_identity():
    x = tf.constant([[1.0, 2.0]])
    out = tf.concat([x], 1, name="only")
    assert out.op.type == "Identity" and out.op.name == "only"
    assert_same(run(out), np.array([[1, 2]], np.float32))
    with pytest.raises(ValueError, match="out of range"):
        tf.concat([x], 2)


def test_concat_errors_while_building_name_the_inputs_shapes_and_line():
    a, b = tf.placeholder(tf.float32, [2, 3], name="a"), tf.placeholder(tf.float32, [4, 5], name="b")
    with pytest.raises(ValueError) as info:
        tf.concat([a, b], 0, name="joined")
    message = str(info.value)
    assert "a:0" in message and "b:0" in message and "(2, 3)" in message and "(4, 5)" in message
    assert "'joined'" in message and "test_concat_split_ops.py" in message
    with pytest.raises(ValueError, match="one rank"):
        tf.concat([a, tf.placeholder(tf.float32, [3])], 0)
    with pytest.raises(ValueError, match="out of range"):
        tf.concat([a, a], -3)
    with pytest.raises(ValueError, match="scalars.*tf.stack"):
        tf.concat([1.0, 2.0], 0)
    with pytest.raises(TypeError, match="tf.cast"):
        tf.concat([a, tf.placeholder(tf.int32, [2, 3])], 0)


def test_concat_mismatch_known_only_at_run_time_is_an_invalid_argument_error():
    x = tf.placeholder(tf.float32, [None, None])
    out = tf.concat([x, tf.ones([2, 3])], 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[3, 4\], \[2, 3\]"):
        run(out, {x: np.ones((3, 4), np.float32)})


def test_concat_of_constants_folds_while_building():
    parts = [tf.constant([1, 2]), tf.constant([3])]
    np.testing.assert_array_equal(constant_value(tf.concat(parts, 0)), [1, 2, 3])
    assert constant_value(tf.concat([parts[0], tf.placeholder(tf.int32, [1])], 0)) is None


# ---- split ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_split_matches_numpy(dtype):
    a = sample((4, 6), dtype)
    got = run([tf.split(a, 3, axis=1), tf.split(a, [1, -1, 2], axis=-1), tf.split(a, 1)])
    for g, w in zip(got[0], np.split(a, 3, axis=1)):
        assert_same(g, w)
    for g, w in zip(got[1], np.split(a, [1, 4], axis=1)):
        assert_same(g, w)
    assert_same(got[2][0], a)


def test_split_static_shapes_and_run_time_shapes():
    x = tf.placeholder(tf.float32, [None, 6])
    parts = tf.split(x, [2, -1], axis=1)
    assert [p.shape.as_list() for p in parts] == [[None, 2], [None, 4]]
    sizes = tf.placeholder(tf.int32, [3])
    by_tensor = tf.split(x, sizes, axis=1)
    assert len(by_tensor) == 3 and by_tensor[0].shape.as_list() == [None, None]
    a = sample((2, 6), "float32")
    got = run(parts + by_tensor, {x: a, sizes: [3, 0, 3]})
    for g, w in zip(got, np.split(a, [2], 1) + np.split(a, [3, 3], 1)):
        assert_same(g, w)


def test_split_errors():
    x = tf.placeholder(tf.float32, [2, 5], name="x")
    with pytest.raises(ValueError, match="size 5 into 2 equal parts"):
        tf.split(x, 2, axis=1)
    with pytest.raises(ValueError, match="add up to the size 5"):
        tf.split(x, [1, 2], axis=1)
    with pytest.raises(ValueError, match="at most one -1"):
        tf.split(x, [-1, -1], axis=1)
    with pytest.raises(ValueError, match="pass num="):
        tf.split(x, tf.placeholder(tf.int32, [None]), axis=1)
    y = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="size 5 into 2 equal parts"):
        run(tf.split(y, 2, axis=1), {y: np.ones((2, 5), np.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="add up"):
        run(tf.split(y, [1, 1], axis=1), {y: np.ones((2, 5), np.float32)})


# ---- stack / unstack ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_and_unstack_match_numpy(dtype, axis):
    values = [sample((2, 3), dtype, seed) for seed in range(4)]
    stacked = tf.stack([tf.constant(v) for v in values], axis=axis)
    want = np.stack(values, axis)
    assert stacked.shape.as_list() == list(want.shape)
    got, parts = run([stacked, tf.unstack(tf.constant(want), axis=axis)])
    assert_same(got, want)
    for g, w in zip(parts, values):
        assert_same(g, w)


def test_stack_mixes_python_values_tensors_and_nested_lists():
    x = tf.placeholder(tf.float32, [])
    mixed = tf.stack([x, 2, 3.5])
    nested = tf.stack([[x, 1.0], [2.0, x]])
    assert mixed.dtype == tf.float32 and nested.shape.as_list() == [2, 2]
    got = run([mixed, nested], {x: 7})
    assert_same(got[0], np.array([7, 2, 3.5], np.float32))
    assert_same(got[1], np.array([[7, 1], [2, 7]], np.float32))


def test_stack_of_python_values_is_one_constant():
    out = tf.stack([[1, 2], [3, 4]], axis=1, name="grid")
    assert out.op.type == "Const" and out.op.name == "grid"
    assert_same(run(out), np.array([[1, 3], [2, 4]], np.int32))


def test_pack_and_unpack_are_the_old_names():
    x = tf.constant([[1, 2], [3, 4]])
    got = run([tf.pack([x, x], axis=1), tf.unpack(x, axis=1)])
    assert_same(got[0], np.stack([[[1, 2], [3, 4]]] * 2, 1).astype(np.int32))
    assert_same(got[1][1], np.array([2, 4], np.int32))


def test_stack_and_unstack_with_run_time_shapes():
    x = tf.placeholder(tf.int64, [None, 3])
    stacked = tf.stack([x, x + 1], axis=-1)
    assert stacked.shape.as_list() == [None, 3, 2]
    parts = tf.unstack(x, axis=1)
    by_num = tf.unstack(tf.placeholder_with_default(x, None), num=3, axis=1)
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    got = run([stacked, parts, by_num], {x: a})
    assert_same(got[0], np.stack([a, a + 1], -1))
    for g, h, w in zip(got[1], got[2], a.T):
        assert_same(g, w)
        assert_same(h, w)


def test_unstack_num_must_match_and_be_known():
    with pytest.raises(ValueError, match="dimension 0 is unknown.*pass num="):
        tf.unstack(tf.placeholder(tf.float32, [None, 3]))
    with pytest.raises(ValueError, match="rank is unknown.*pass num="):
        tf.unstack(tf.placeholder(tf.float32))
    with pytest.raises(ValueError, match="size 3 into 2"):
        tf.unstack(tf.placeholder(tf.float32, [3]), num=2)
    with pytest.raises(ValueError, match="out of range"):
        tf.unstack(tf.placeholder(tf.float32, [3]), axis=1)
    x = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="size 3.*num=2"):
        run(tf.unstack(x, num=2), {x: np.ones(3, np.float32)})


def test_stack_errors():
    with pytest.raises(ValueError, match="one shape.*\\(2, 3\\).*\\(3, 2\\)"):
        tf.stack([tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [3, 2])])
    with pytest.raises(ValueError, match="out of range"):
        tf.stack([tf.placeholder(tf.float32, [2])] * 2, axis=2)
    x = tf.placeholder(tf.float32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="one shape"):
        run(tf.stack([x, tf.ones([2])]), {x: np.ones(3, np.float32)})


def test_stack_folds_constants_and_parallel_stack():
    n = tf.placeholder(tf.int32, [])
    assert constant_value(tf.stack([tf.constant(2), tf.constant(3)])).tolist() == [2, 3]
    assert constant_value(tf.stack([n, 3])) is None
    x = tf.constant([1.0, 2.0])
    assert_same(run(tf.parallel_stack([x, x * 2])), np.array([[1, 2], [2, 4]], np.float32))
    with pytest.raises(ValueError, match="fully known.*tf.stack"):
        tf.parallel_stack([tf.placeholder(tf.float32, [None])])


# ---- gradients ------------------------------------------------------------------------------------------------------
def test_concat_gradients_with_static_unknown_and_run_time_axes():
    x, y = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [None, None])
    axis = tf.placeholder(tf.int64, [])
    a, b = sample((2, 3), "float64"), sample((2, 2), "float64", 1)
    assert gradient_error([x, y], tf.concat([x, y], 1), {x: a, y: b}) < 1e-9
    assert gradient_error([x, y], tf.concat([y, x], axis) * 2, {x: a, y: b, axis: -1}) < 1e-9
    assert gradient_error([x, y], tf.concat(0, [x, y]), {x: a, y: sample((1, 3), "float64")}) < 1e-9


def test_split_gradients_fill_missing_outputs_with_zeros():
    x = tf.placeholder(tf.float64, [None, 6])
    a = sample((2, 6), "float64")
    assert gradient_error([x], tf.split(x, 3, axis=1)[1], {x: a}) < 1e-9
    assert gradient_error([x], tf.split(x, [1, -1, 2], axis=-1)[2] * 3, {x: a}) < 1e-9
    left, right = tf.split(x, [4, 2], axis=1)
    assert gradient_error([x], tf.concat([right, left], 1), {x: a}) < 1e-9


def test_stack_and_unstack_gradients():
    x, y = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [2, 3])
    a, b = sample((2, 3), "float64"), sample((2, 3), "float64", 1)
    assert gradient_error([x, y], tf.stack([x, y * y], axis=1), {x: a, y: b}) < 1e-8
    assert gradient_error([x], tf.unstack(x, axis=-1)[1], {x: a}) < 1e-9
    parts = tf.unstack(x)
    assert gradient_error([x], tf.stack([parts[1], parts[1]], axis=1), {x: a}) < 1e-9


def test_gradients_flow_only_to_the_values_not_the_axis():
    x = tf.placeholder(tf.float32, [2])
    axis = tf.placeholder(tf.int32, [])
    grads = tf.gradients(tf.concat([x, x], axis), [x, axis])
    assert grads[1] is None
    assert_same(run(grads[0], {x: np.ones(2, np.float32), axis: 0}), np.array([2, 2], np.float32))
