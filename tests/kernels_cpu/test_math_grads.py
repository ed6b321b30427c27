"""Gradients of the math ops against float64 central finite differences (and exact values at kinks and ties)."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_gradients

BROADCAST_SHAPES = [[(3, 4), (3, 4)], [(2, 3), (3,)], [(3, 1), (1, 4)], [(), (2, 3)], [(2, 1, 3), (4, 1)]]


def unknown_shapes(fn):
    """``fn`` applied to its inputs with their static shapes hidden (the run-time broadcast path)."""
    def hidden(*xs):
        return fn(*(tf.placeholder_with_default(x, shape=[None] * x.shape.ndims) for x in xs))
    hidden.__name__ = f"hidden_{fn.__name__}"
    return hidden


def gradient(y, xs, grad_ys=None):
    with tf.Session() as sess:
        return sess.run(tf.gradients(y, xs, grad_ys=grad_ys))


@pytest.mark.parametrize("fn, options", [
    (tf.add, {}), (tf.subtract, {}), (tf.multiply, {}), (tf.maximum, {}), (tf.minimum, {}),
    (tf.squared_difference, {}), (tf.realdiv, {"positive": True}), (tf.pow, {"positive": True}),
    (tf.div_no_nan, {"positive": True}), (tf.floormod, {"positive": True}), (tf.truncatemod, {"positive": True}),
], ids=lambda v: getattr(v, "__name__", ""))
def test_binary_gradients_with_broadcasting(fn, options):
    for shapes in BROADCAST_SHAPES:
        check_gradients(fn, shapes, **options)


@pytest.mark.parametrize("fn", [tf.add, tf.multiply, tf.maximum, tf.realdiv], ids=lambda f: f.__name__)
def test_binary_gradients_when_shapes_are_known_only_at_run_time(fn):
    for shapes in [[(3, 1), (1, 4)], [(2, 3), (3,)], [(2, 1, 3), (4, 1)]]:
        check_gradients(unknown_shapes(fn), shapes, positive=True)


def test_unknown_batch_size_needs_no_run_time_shapes():
    x, bias = tf.placeholder(tf.float32, [None, 3]), tf.placeholder(tf.float32, [3])
    grads = tf.gradients((x + bias) * bias, [x, bias], grad_ys=tf.placeholder(tf.float32, [None, 3]))
    ops_used = {op.type for op in tf.get_default_graph().get_operations()}
    assert "Shape" not in ops_used and "BroadcastGradientArgs" not in ops_used
    assert grads[0].shape.as_list() == [None, 3] and grads[1].shape.as_list() == [3]


def test_max_and_min_give_ties_to_x():
    x, y = tf.constant([1.0, 2.0, 3.0]), tf.constant([2.0, 2.0, 2.0])
    grads = gradient([tf.maximum(x, y), tf.minimum(x, y) * 10.0], [x, y])
    assert grads[0].tolist() == [10.0, 11.0, 1.0] and grads[1].tolist() == [1.0, 0.0, 10.0]


def test_pow_gradient_at_zero_and_negative_bases():
    x, y = tf.constant([0.0, 2.0, -2.0]), tf.constant([2.0, 3.0, 2.0])
    dx, dy = gradient(tf.pow(x, y), [x, y])
    np.testing.assert_allclose(dx, [0.0, 12.0, -4.0])
    np.testing.assert_allclose(dy, [0.0, 8.0 * np.log(2.0), 0.0])  # log(x) is taken as 0 where x <= 0


def test_complex_multiplication_gradient_is_conjugated():
    x, y = tf.constant([1 + 2j]), tf.constant([3 - 1j])
    dx, = gradient(x * y, [x], grad_ys=tf.constant([1 + 0j]))
    assert dx.tolist() == [3 + 1j]


UNARY = {
    "negative": (tf.negative, {}), "abs": (tf.abs, {}), "square": (tf.square, {}), "exp": (tf.exp, {}),
    "expm1": (tf.expm1, {}), "log": (tf.log, {"positive": True}), "log1p": (tf.log1p, {"positive": True}),
    "sqrt": (tf.sqrt, {"positive": True}), "rsqrt": (tf.rsqrt, {"positive": True}),
    "reciprocal": (tf.reciprocal, {"positive": True}), "tanh": (tf.tanh, {}), "sigmoid": (tf.sigmoid, {}),
    "sin": (tf.sin, {}), "cos": (tf.cos, {}),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_gradients(name):
    fn, options = UNARY[name]
    check_gradients(fn, [(3, 4)], **options)
    check_gradients(fn, [()], **options)


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "sqrt", "rsqrt", "reciprocal", "exp", "log", "square", "sin"])
def test_second_derivatives_through_the_gradient_ops(name):
    fn, options = UNARY[name]

    def first_derivative(x, upstream):
        return tf.gradients(fn(x), x, grad_ys=upstream)[0]

    first_derivative.__name__ = f"d_{name}"
    check_gradients(first_derivative, [(2, 3), (2, 3)], **options)


def test_rounding_and_predicates_pass_no_gradient():
    x = tf.constant([1.5, -0.5])
    grads = gradient([tf.floor(x) + tf.ceil(x) + tf.round(x) + x], [x])
    assert grads[0].tolist() == [1.0, 1.0]
    assert tf.gradients(tf.cast(tf.is_nan(x), tf.float32), x) == [None]
    assert gradient(tf.sign(x) * 3.0 + x, [x])[0].tolist() == [1.0, 1.0]


def test_cast_passes_gradients_between_floats_only():
    x = tf.constant([1.0, 2.0], tf.float32)
    dx, = gradient(tf.cast(x, tf.float64) * 3.0, [x])
    assert dx.dtype == np.float32 and dx.tolist() == [3.0, 3.0]
    assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]


def test_add_n_gradient():
    check_gradients(lambda a, b, c: tf.add_n([a, b, c, a]), [(2, 3)] * 3)


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_gradients(transpose_a, transpose_b):
    a_shape, b_shape = (4, 3) if transpose_a else (3, 4), (2, 4) if transpose_b else (4, 2)
    check_gradients(lambda a, b: tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b),
                    [a_shape, b_shape])


@pytest.mark.parametrize("a_shape, b_shape, adjoint_a, adjoint_b", [
    ((2, 3, 4), (2, 4, 2), False, False), ((2, 4, 3), (2, 4, 2), True, False), ((3, 4), (2, 2, 4), False, True),
    ((2, 1, 4, 3), (3, 2, 4), True, True), ((2, 3, 4), (4, 2), False, False),
])
def test_batch_matmul_gradients_sum_over_broadcast_batches(a_shape, b_shape, adjoint_a, adjoint_b):
    def product(a, b):
        return tf.matmul(a, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)
    check_gradients(product, [a_shape, b_shape])
    check_gradients(unknown_shapes(product), [a_shape, b_shape])


def test_batch_matmul_with_equal_batches_gradient():
    def product(a, b):
        return tf.extension.apply_op("BatchMatMul", [a, b], {"adj_x": True})
    check_gradients(product, [(2, 4, 3), (2, 4, 5)])


@pytest.mark.parametrize("fn", [tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_min, tf.reduce_prod,
                                tf.reduce_logsumexp], ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (-1, True), ([0, 2], False), ([0, 2], True)])
def test_reduction_gradients(fn, axis, keepdims):
    def reduce(x):
        return fn(x, axis, keepdims=keepdims)
    check_gradients(reduce, [(2, 3, 4)])


@pytest.mark.parametrize("fn", [tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_prod],
                         ids=lambda f: f.__name__)
def test_reduction_gradients_with_run_time_shapes_and_axes(fn):
    check_gradients(unknown_shapes(lambda x: fn(x, [0, 2])), [(2, 3, 4)])
    check_gradients(lambda x: fn(tf.placeholder_with_default(x, shape=None), 1), [(3, 4)])

    def fed_axes(x):
        return fn(x, tf.placeholder_with_default(np.array([1], np.int32), shape=[None]))
    check_gradients(fed_axes, [(3, 4)])


def test_reduce_max_splits_ties_evenly():
    x = tf.constant([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    np.testing.assert_allclose(gradient(tf.reduce_max(x, 1), [x])[0], [[0, 0.5, 0.5], [0.5, 0, 0.5]])


def test_reduce_prod_gradient_is_exact_with_zeros():
    data = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]])
    x = tf.constant(data)
    np.testing.assert_allclose(gradient(tf.reduce_prod(x, 1), [x])[0], [[6, 0, 0], [0, 0, 0], [8, 4, 2]])
    check_gradients(lambda t: tf.reduce_prod(t, [0, 1]), None, inputs=[data])


def test_reduce_logsumexp_gradient_is_softmax():
    data = np.array([[1000.0, 1000.0, 999.0], [-3.0, 0.0, 2.0]])
    x = tf.constant(data)
    softmax = np.exp(data - data.max(1, keepdims=True))
    np.testing.assert_allclose(gradient(tf.reduce_logsumexp(x, 1), [x])[0], softmax / softmax.sum(1, keepdims=True))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_gradients(exclusive, reverse):
    check_gradients(lambda x: tf.cumsum(x, 1, exclusive=exclusive, reverse=reverse), [(3, 4)])
    check_gradients(lambda x: tf.cumprod(x, 0, exclusive=exclusive, reverse=reverse), [(3, 4)], positive=True)


def test_select_and_where_gradients():
    condition = np.array([[True, False, True], [False, False, True]])
    check_gradients(lambda x, y: tf.where(condition, x, y), [(2, 3), (2, 3)])
    check_gradients(lambda x, y: tf.where(np.array([True, False]), x, y), [(2, 3), (2, 3)])
    check_gradients(lambda x, y: tf.where_v2(condition[:, :1], x, y), [(3,), (2, 1)])


def test_clip_by_value_gradients():
    t = np.array([[-2.0, -0.5, 0.25], [0.75, 1.5, 3.0]])
    check_gradients(lambda x, low, high: tf.clip_by_value(x, low, high), None,
                    inputs=[t, np.array([-1.0, 0.0, 0.5]), np.array(1.0)])


def test_segment_sum_gradients():
    ids = np.array([[0, 2, -1], [2, 2, 0]])
    check_gradients(lambda data: tf.unsorted_segment_sum(data, ids, 4), [(2, 3, 2)])
    check_gradients(lambda data: tf.segment_sum(data, np.array([0, 0, 1, 3])), [(4, 2)])


def test_indexed_slices_become_dense_through_unsorted_segment_sum():
    params = tf.constant(np.arange(8.0).reshape(4, 2))
    sliced = tf.IndexedSlices(tf.constant(np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])), tf.constant([3, 0, 3]),
                              tf.constant([4, 2]))
    with tf.Session() as sess:
        dense = sess.run(tf.convert_to_tensor(sliced) + params)
    np.testing.assert_array_equal(dense, np.arange(8.0).reshape(4, 2) + [[2, 2], [0, 0], [0, 0], [4, 4]])
