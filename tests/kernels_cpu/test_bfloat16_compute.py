"""bfloat16 as a compute dtype, against TF's CPU kernels: matmul, conv2d, elementwise math, activations,
reductions, casts, softmax and cross-entropies, forward and gradients (programs in
tests/fixtures/tf1/bfloat16_programs.py). Tensorweave computes a bfloat16 node in float32 and rounds each output
once (runtime/kernels.py), as TF's CPU kernels do."""

import ml_dtypes
import numpy as np
import pytest
from tf1_fixtures import array, load, programs_module

import tensorweave as tf

PROGRAMS = programs_module("bfloat16_programs").PROGRAMS
EXPECTED = load("bfloat16")
STEP = 2.0 ** -8  # half a bfloat16 step at 1.0: bfloat16 keeps 8 significant bits
SINGLE_ROUNDING = ("casts", "elementwise", "matmul")
"""Programs whose every op is one rounding in TF's kernels too: there the numbers are TF's, bit for bit."""


def _run(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            return run(sess)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_bfloat16_program_is_as_close_to_exact_as_tf(name):
    """Within twice TF's own distance from the exact (float64) result, or 3 half-steps of the largest value:
    TF's kernels round inside composite formulas (elu, selu, softsign, log_softmax) and sum in other orders, so
    some bits differ; the exact result says whose rounding is worse."""
    got, want = _run(name), EXPECTED[name]
    assert got["dtypes"] == want["dtypes"]
    for key in ("outputs", "grads"):
        assert len(got[key]) == len(want[key]) == len(want["exact_" + key])
        for i, (g, w, e) in enumerate(zip(got[key], want[key], want["exact_" + key])):
            g, w, e = np.asarray(g, np.float64), array(w, np.float64), array(e, np.float64)
            unit = max(np.abs(e).max(), 1e-30) * STEP
            ours, tfs = np.abs(g - e).max() / unit, np.abs(w - e).max() / unit
            assert ours <= max(2 * tfs, 3.0), f"{name}: {key}[{i}] is {ours:.2f} half-steps off, TF {tfs:.2f}"
            if name in SINGLE_ROUNDING and key == "outputs":
                np.testing.assert_array_equal(g, w, err_msg=f"{name}: {key}[{i}]")


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)


def test_a_bfloat16_node_rounds_once_from_float32():
    """exp computed in float32 then rounded, not in float64: the same as rounding numpy's float32 exp."""
    values = np.linspace(-3, 3, 101).astype(ml_dtypes.bfloat16)
    with tf.Session() as sess:
        got = sess.run(tf.exp(tf.constant(values)))
    want = np.exp(values.astype(np.float32)).astype(ml_dtypes.bfloat16)
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def test_bfloat16_through_a_while_loop_and_cond():
    x = tf.placeholder(tf.bfloat16, [3])
    w = tf.Variable(tf.constant([[0.5, -1.0, 2.0]] * 3, tf.bfloat16))
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.nn.relu(tf.matmul(v[None], w)[0])), [0, x])
    z = tf.cond(tf.reduce_sum(y) > 0, lambda: tf.nn.softmax(y), lambda: y)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(z, {x: np.array([1.0, 2.0, 3.0])})
    assert got.dtype == ml_dtypes.bfloat16
    v = np.array([1.0, 2.0, 3.0], np.float32)
    for _ in range(3):
        v = np.maximum(v.astype(ml_dtypes.bfloat16).astype(np.float32) @ np.array([[0.5, -1.0, 2.0]] * 3, np.float32),
                       0).astype(ml_dtypes.bfloat16).astype(np.float32)
    e = np.exp(v - v.max())
    np.testing.assert_allclose(got.astype(np.float32), e / e.sum(), rtol=2 ** -7)
