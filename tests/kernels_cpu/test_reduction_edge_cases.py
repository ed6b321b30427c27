"""Reductions and their gradients against TF1's numbers (tests/fixtures/tf1/make_reduction_gradients.py): scalars,
empty axis lists, negative axes, keep_dims, zero-size inputs, and inputs of a rank known only when fed."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

CASES = load("reduction_gradients")


def build(case):
    """The case's reduction, built the way the fixture script built it in TF."""
    x = array(case["x"], np.bool_ if case["fn"] in ("reduce_any", "reduce_all") else np.float64).reshape(case["shape"])
    dtype = tf.bool if x.dtype == np.bool_ else tf.float64
    axis, feeds = case["axis"], {}
    if case["feed"] == "unknown_rank":
        t = tf.placeholder(dtype)
        feeds[t] = x
    elif case["feed"] == "unknown_dims":
        t = tf.placeholder(dtype, [None] * x.ndim)
        feeds[t] = x
    else:
        t = tf.constant(x, dtype)
    if case["feed"] == "fed_axes":
        axes = tf.placeholder(tf.int32, [None])
        feeds[axes] = np.asarray(axis, np.int32).reshape(-1)
        axis = axes
    fn = getattr(tf.math, case["fn"])
    return fn(t, axis, keepdims=case["keepdims"]), t, feeds


@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")  # reduce_std's 0 * inf
@pytest.mark.parametrize("name", sorted(CASES))
def test_reduction_and_gradient_match_tf1(name):
    case = CASES[name]
    y, t, feeds = build(case)
    fetches = {"out": y}
    if "grad" in case:
        grad_ys = array(case["grad_ys"], np.float64).reshape(case["out_shape"])
        fetches["grad"] = tf.gradients(y, t, grad_ys=tf.constant(grad_ys))[0]
    with tf.Session() as sess:
        got = sess.run(fetches, feeds)
    for key, value in got.items():
        want = array(case[key], np.bool_ if case["fn"] in ("reduce_any", "reduce_all") and key == "out" else None)
        want = want.reshape(case[f"{key}_shape"])
        assert np.shape(value) == want.shape, f"{key}: shape {np.shape(value)}, TF's {want.shape}"
        np.testing.assert_allclose(value, want, rtol=1e-10, atol=1e-12, err_msg=key)


def test_unknown_rank_placeholder_fed_a_scalar_linear_regression():
    """The public linear-regression program that stopped at 'Integer division by zero in FloorMod'."""
    x, y = tf.placeholder("float"), tf.placeholder("float")
    w, b = tf.Variable(0.5), tf.Variable(0.0)
    cost = tf.reduce_sum(tf.pow(x * w + b - y, 2)) / 2
    step = tf.train.GradientDescentOptimizer(0.1).minimize(cost)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step, {x: 2.0, y: 3.0})
        # d/dw of (2w + b - 3)^2 / 2 at w=0.5, b=0 is (1 - 3) * 2 = -4; d/db is -2
        np.testing.assert_allclose(sess.run([w, b]), [0.5 + 0.4, 0.2], rtol=1e-6)
        sess.run(step, {x: [1.0, 2.0], y: [2.0, 4.0]})  # the same graph fed vectors


def test_integer_modulo_by_zero_of_an_empty_tensor_is_empty():
    """TF divides nothing when the result is empty, so a zero divisor is no error there."""
    with tf.Session() as sess:
        assert sess.run(tf.floormod(tf.zeros([0], tf.int32), 0)).shape == (0,)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
            sess.run(tf.floormod(tf.constant([1, 2]), tf.constant([1, 0])))


def test_reducing_a_scalar_over_axis_zero_is_refused():
    with pytest.raises(ValueError, match="Invalid reduction dimension 0 for input with 0 dimensions"):
        tf.reduce_sum(tf.constant(1.0), 0)
