"""tf.gradients itself: paths summed with AddN, unconnected inputs, stop_gradient and stop_gradients,
no gradient for integers, grad_ys, several ys, and sparse contributions kept as IndexedSlices."""

import numpy as np
import pytest

import tensorweave as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_several_paths_are_summed_with_add_n():
    x = tf.placeholder(tf.float64, [3])
    y = tf.sin(x) * tf.exp(x) + tf.square(x)  # x reaches y along three paths
    before = len(tf.get_default_graph().get_operations())
    (grad,) = tf.gradients(y, x)
    added = [op.type for op in tf.get_default_graph().get_operations()[before:]]
    assert "AddN" in added
    xv = np.array([0.1, -0.7, 1.3])
    np.testing.assert_allclose(run(grad, {x: xv}), np.cos(xv) * np.exp(xv) + np.sin(xv) * np.exp(xv) + 2 * xv)


def test_unconnected_inputs_give_none_or_zeros():
    x, other = tf.placeholder(tf.float64, [2]), tf.placeholder(tf.float64, [2, 3])
    y = tf.reduce_sum(x * 3.0)
    assert tf.gradients(y, [x, other])[1] is None
    zero = tf.gradients(y, other, unconnected_gradients="zero")[0]
    assert run(zero, {other: np.ones((2, 3))}).tolist() == [[0.0] * 3] * 2
    with pytest.raises(ValueError, match="unconnected_gradients must be"):
        tf.gradients(y, x, unconnected_gradients="nan")


def test_stop_gradient_op_and_stop_gradients_argument():
    a = tf.constant(2.0)
    b = tf.multiply(a, 3.0)
    assert run(tf.gradients(tf.stop_gradient(b) * a + b, a))[0] == 6.0 + 3.0
    # TF1's documented example: with both stopped, each is held constant.
    grads = tf.gradients(a + b, [a, b], stop_gradients=[a, b])
    assert run(grads) == [1.0, 1.0]
    assert run(tf.gradients(a + b, [a, b], stop_gradients=[b])) == [1.0, 1.0]  # nothing flows back through b
    assert run(tf.gradients(a + b, [a, b], stop_gradients=[a])) == [4.0, 1.0]  # a still gets b's share
    assert tf.gradients(tf.multiply(b, b), a, stop_gradients=[b]) == [None]


def test_integer_tensors_get_no_gradient():
    ids = tf.placeholder(tf.int32, [2])
    table = tf.placeholder(tf.float64, [4, 2])
    n = tf.placeholder(tf.int32, [])
    y = tf.reduce_sum(tf.gather(table, ids) * tf.cast(ids[:, None], tf.float64)) + tf.cast(n, tf.float64)
    grads = tf.gradients(y, [ids, table, n])
    assert grads[0] is None and grads[2] is None and grads[1] is not None
    with pytest.raises(TypeError, match="must be floating point"):
        tf.gradients(tf.add(n, 1), n)


def test_grad_ys_and_several_ys():
    x = tf.placeholder(tf.float64, [2])
    y1, y2 = tf.square(x), tf.sin(x)
    upstream = tf.placeholder(tf.float64, [2])
    xv, uv = np.array([0.5, 2.0]), np.array([3.0, -1.0])
    got = run(tf.gradients([y1, y2], x, grad_ys=[upstream, None]), {x: xv, upstream: uv})[0]
    np.testing.assert_allclose(got, 2 * xv * uv + np.cos(xv))
    with pytest.raises(ValueError, match="2 ys but 1 grad_ys"):
        tf.gradients([y1, y2], x, grad_ys=[upstream])


def test_two_gathers_of_one_table_sum_as_indexed_slices():
    table = tf.Variable(np.arange(12.0).reshape(6, 2))
    y = tf.reduce_sum(tf.gather(table, [1, 4])) + 2.0 * tf.reduce_sum(tf.gather(table, [4, 0]))
    (grad,) = tf.gradients(y, table)
    assert isinstance(grad, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(table.initializer)
        value = sess.run(grad)
    dense = np.zeros((6, 2))
    np.add.at(dense, value.indices, value.values)
    np.testing.assert_array_equal(dense, [[2, 2], [1, 1], [0, 0], [0, 0], [3, 3], [0, 0]])
    assert sorted(np.asarray(value.indices).tolist()) == [0, 1, 4, 4]
