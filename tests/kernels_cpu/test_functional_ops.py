"""map_fn, scan, foldl, foldr: values against numpy, nested elems, reverse, dtype, gradients."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_gradients

X = np.arange(1.0, 7.0).reshape(3, 2)


def test_map_fn_values_and_static_shape(sess):
    x = tf.constant(X)
    y = tf.map_fn(lambda row: tf.multiply(row, row), x)
    assert y.shape.as_list() == [3, 2]
    np.testing.assert_allclose(sess.run(y), X * X)


def test_map_fn_nested_elems_and_output_dtype(sess):
    a = tf.constant(X)
    b = tf.constant(np.array([1, 2, 3], np.int32))
    out = tf.map_fn(lambda e: (tf.reduce_sum(e["a"]), tf.multiply(e["b"], 10)), {"a": a, "b": b},
                    dtype=(tf.float64, tf.int32))
    got = sess.run(out)
    np.testing.assert_allclose(got[0], X.sum(1))
    np.testing.assert_array_equal(got[1], [10, 20, 30])


def test_map_fn_over_a_length_known_only_at_run_time(sess):
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.map_fn(lambda row: tf.add(row, 1.0), x)
    np.testing.assert_allclose(sess.run(y, {x: np.zeros((5, 2))}), np.ones((5, 2)))


def test_scan_forward_reverse_and_with_initializer(sess):
    x = tf.constant(np.arange(1.0, 6.0))
    cumsum = tf.scan(lambda acc, e: tf.add(acc, e), x)
    rev = tf.scan(lambda acc, e: tf.add(acc, e), x, reverse=True)
    prod = tf.scan(lambda acc, e: tf.multiply(acc, e), x, initializer=tf.constant(10.0, tf.float64))
    got = sess.run([cumsum, rev, prod])
    np.testing.assert_allclose(got[0], np.cumsum(np.arange(1.0, 6.0)))
    np.testing.assert_allclose(got[1], np.cumsum(np.arange(5.0, 0.0, -1))[::-1])
    np.testing.assert_allclose(got[2], 10 * np.cumprod(np.arange(1.0, 6.0)))


def test_scan_with_nested_accumulator(sess):
    x = tf.constant(np.arange(1.0, 5.0))
    fib = tf.scan(lambda a, _: (a[1], tf.add(a[0], a[1])), x,
                  initializer=(tf.constant(0.0, tf.float64), tf.constant(1.0, tf.float64)))
    got = sess.run(fib)
    np.testing.assert_allclose(got[0], [1, 1, 2, 3])
    np.testing.assert_allclose(got[1], [1, 2, 3, 5])


def test_folds(sess):
    x = tf.constant(np.arange(1.0, 5.0))
    got = sess.run([tf.foldl(lambda a, e: tf.subtract(a, e), x), tf.foldr(lambda a, e: tf.subtract(a, e), x),
                    tf.foldl(lambda a, e: tf.add(a, tf.multiply(e, e)), x, initializer=tf.constant(0.5, tf.float64))])
    assert got == [1 - 2 - 3 - 4, 4 - 3 - 2 - 1, 0.5 + 1 + 4 + 9 + 16]


def test_elems_must_agree_on_their_length():
    with pytest.raises(ValueError, match="same first dimension, got \\[2, 3\\]"):
        tf.map_fn(lambda e: e[0], (tf.zeros([2]), tf.zeros([3])), dtype=tf.float32)
    with pytest.raises(ValueError, match="scalar"):
        tf.scan(lambda a, e: e, tf.constant(1.0))


@pytest.mark.parametrize("name, fn, shapes", [
    ("map_fn", lambda x: tf.map_fn(lambda r: tf.multiply(tf.sin(r), r), x), [(3, 2)]),
    ("scan", lambda x: tf.scan(lambda a, r: tf.add(tf.multiply(a, r), r), x), [(4, 2)]),
    ("scan reverse with initializer", lambda x, a0: tf.scan(lambda a, r: tf.multiply(tf.sin(a), r), x,
                                                           initializer=a0, reverse=True), [(4, 2), (2,)]),
    ("scan over nested elems", lambda x, y: tf.scan(lambda a, e: (tf.add(a[0], tf.multiply(e[0], a[1])), e[1]),
                                                    (x, y))[0], [(3, 2), (3, 2)]),
    ("foldl", lambda x: tf.foldl(lambda a, r: tf.multiply(a, r), x), [(4, 2)]),
    ("foldr", lambda x, a0: tf.foldr(lambda a, r: tf.multiply(a, tf.sin(r)), x, initializer=a0), [(4, 2), (2,)]),
])
def test_gradients_against_finite_differences(name, fn, shapes):
    check_gradients(fn, shapes)
