"""Python operators on tensors, run and compared with the same expressions on numpy arrays."""

import operator

import numpy as np
import pytest

import tensorweave as tf

X = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
Y = np.array([2.0, -3.0, 0.5])
I = np.array([[7, -7, 9], [-4, 5, 6]], np.int32)
J = np.array([2, 3, -4], np.int32)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
                                operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge],
                         ids=lambda f: f.__name__)
def test_binary_operators_and_their_reflections_match_numpy(sess, op):
    y = tf.constant(Y)
    base = np.abs(X) if op is operator.pow else X
    tx = tf.constant(base)
    got = sess.run([op(tx, y), op(base, y), op(tx, Y), op(2.5, y), op(tx, 2.0), op(tx, tx)])
    want = [op(base, Y), op(base, Y), op(base, Y), op(2.5, Y), op(base, 2.0), op(base, base)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod],
                         ids=lambda f: f.__name__)
def test_integer_operators_match_python(sess, op):
    got = sess.run([op(tf.constant(I), tf.constant(J)), op(10, tf.constant(J))])
    np.testing.assert_array_equal(got[0], op(I, J))
    np.testing.assert_array_equal(got[1], op(10, J))
    assert got[0].dtype == np.int32


def test_true_division_of_integers_gives_float64_as_tf1(sess):
    got = sess.run(tf.constant(I) / tf.constant(J))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, I / J)
    assert sess.run(7 / tf.constant(2)) == 3.5


def test_python_floats_follow_the_tensor_dtype(sess):
    x = tf.constant(np.array([1.0, 2.0], np.float32))
    got = sess.run([1.0 - x, x * 0.5, 2 ** x, np.float64(3.0) + x, np.array([1.0, 1.0]) + x])
    assert all(g.dtype == np.float32 for g in got)
    np.testing.assert_allclose(got[0], [0.0, -1.0])
    np.testing.assert_allclose(got[2], [2.0, 4.0])
    np.testing.assert_allclose(got[4], [2.0, 3.0])


def test_unary_operators(sess):
    x = tf.constant(X)
    got = sess.run([-x, abs(x), -tf.constant(J), abs(tf.constant(J))])
    np.testing.assert_array_equal(got[0], -X)
    np.testing.assert_array_equal(got[1], np.abs(X))
    np.testing.assert_array_equal(got[2], -J)
    np.testing.assert_array_equal(got[3], np.abs(J))


def test_matmul_operator(sess):
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    got = sess.run([tf.constant(a) @ tf.constant(b), a @ tf.constant(b), tf.constant(a) @ b])
    for g in got:
        np.testing.assert_allclose(g, a @ b)


def test_logical_operators_on_bools(sess):
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    tp, tq = tf.constant(p), tf.constant(q)
    got = sess.run([tp & tq, tp | tq, tp ^ tq, ~tp, p & tq, True | tq, tp ^ True])
    want = [p & q, p | q, p ^ q, ~p, p & q, True | q, p ^ True]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_logical_operators_refuse_numbers():
    with pytest.raises(TypeError, match="bool"):
        tf.constant([1, 2]) & tf.constant([1, 0])


def test_equality_stays_identity_so_tensors_key_feed_dicts(sess):
    a = tf.placeholder(tf.float32, [2])
    b = tf.placeholder(tf.float32, [2])
    assert (a == a) is True and (a == b) is False and (a != b) is True
    assert sess.run(a + b, {a: [1.0, 2.0], b: [3.0, 4.0]}).tolist() == [4.0, 6.0]
    assert len({a, b, a}) == 2


def test_operators_compose_and_keep_static_shapes():
    x = tf.placeholder(tf.float32, [None, 3])
    y = (x * 2.0 - 1.0) / (abs(x) + 1.0) ** 2
    assert y.shape.as_list() == [None, 3] and y.dtype == tf.float32
    with tf.Session() as sess:
        data = np.ones((2, 3), np.float32)
        np.testing.assert_allclose(sess.run(y, {x: data}), np.full((2, 3), 0.25))


def test_operators_attach_to_other_tensor_like_classes(sess):
    from tensorweave.ops.tensor_operators import attach_operators

    class Boxed:
        def __init__(self, tensor):
            self.tensor = tensor
            self.dtype = tensor.dtype

    tf.register_tensor_conversion_function(Boxed, lambda value, dtype=None, name=None, as_ref=False: value.tensor)
    attach_operators(Boxed)
    boxed = Boxed(tf.constant([1.0, 2.0]))
    assert sess.run(boxed * 3.0).tolist() == [3.0, 6.0] and sess.run(1.0 - boxed).tolist() == [0.0, -1.0]
    assert sess.run(-boxed).tolist() == [-1.0, -2.0]


def test_indexing_delegates_to_slice_helper(sess):
    x = tf.constant(np.arange(12).reshape(3, 4))
    got = sess.run([x[1], x[:, 2], x[1:, ::2], x[-1, -1]])
    data = np.arange(12).reshape(3, 4)
    for g, w in zip(got, [data[1], data[:, 2], data[1:, ::2], data[-1, -1]]):
        np.testing.assert_array_equal(g, w)
