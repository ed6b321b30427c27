"""float32 MatMul on oneDNN's GEMM against numpy's: every transposition and memory order of the operands, views
that are neither order, the small and large products that stay on numpy, empty ones, and the op through a Session.

oneDNN blocks the inner dimension in its own order, so results agree within float32 reassociation."""

import numpy as np
import pytest

import tensorweave as tf

from tensorweave_cpu.kernels import native

needs_onednn = pytest.mark.skipif(native.native is None or native.native.onednn is None,
                                  reason=f"{native.STATUS}; oneDNN's GEMM needs onednn-devel-cpu-gomp at build time")
RNG = np.random.default_rng(21)
LARGE = (96, 130, 120)  # M, K, N: between ONEDNN_GEMM_MIN and ONEDNN_GEMM_MAX multiply-adds


def _operand(rows, cols, order):
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    if order == "F":
        return np.asfortranarray(x)
    if order == "strided":  # every other column of a wider array: neither C- nor Fortran-ordered
        wide = RNG.standard_normal((rows, 2 * cols)).astype(np.float32)
        return wide[:, ::2]
    return x


def _reference(a, b, transpose_a, transpose_b):
    return np.matmul((a.T if transpose_a else a).astype(np.float64), (b.T if transpose_b else b).astype(np.float64))


@needs_onednn
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("order_a", ["C", "F", "strided"])
@pytest.mark.parametrize("order_b", ["C", "F"])
def test_large_products_match_numpy_in_every_layout(transpose_a, transpose_b, order_a, order_b):
    m, k, n = LARGE
    assert native.ONEDNN_GEMM_MIN <= m * k * n < native.ONEDNN_GEMM_MAX
    a = _operand(*((k, m) if transpose_a else (m, k)), order_a)
    b = _operand(*((n, k) if transpose_b else (k, n)), order_b)
    got = native.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    assert got.shape == (m, n) and got.dtype == np.float32 and got.flags.c_contiguous
    np.testing.assert_allclose(got, _reference(a, b, transpose_a, transpose_b), rtol=1e-4, atol=1e-4)


@needs_onednn
@pytest.mark.parametrize("shape", [(3, 4, 5), (260, 260, 260), (0, 300, 4000), (300, 0, 4000), (4000, 300, 0)])
def test_small_large_and_empty_products_are_numpys(shape):
    m, k, n = shape
    a, b = _operand(m, k, "C"), _operand(k, n, "C")
    got = native.matmul(a, b, transpose_a=False, transpose_b=False)
    np.testing.assert_array_equal(got, np.dot(a, b))


@needs_onednn
def test_mismatched_inner_dimensions_raise_numpys_error():
    with pytest.raises(ValueError, match="not aligned"):
        native.matmul(_operand(200, 300, "C"), _operand(301, 200, "C"), transpose_a=False, transpose_b=False)


@needs_onednn
def test_the_matmul_op_and_its_gradients_through_a_session():
    m, k, n = LARGE
    a_value, b_value = _operand(m, k, "C"), _operand(k, n, "C")
    with tf.Graph().as_default():
        a, b = tf.constant(a_value), tf.placeholder(tf.float32, [None, k])  # fed b's transpose
        product = tf.matmul(a, b, transpose_b=True)
        grads = tf.gradients(tf.reduce_sum(product * product), [a, b])
        with tf.Session() as sess:
            got, (da, db) = sess.run([product, grads], {b: b_value.T})
    want = _reference(a_value, b_value, False, False)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(da, 2 * want @ b_value.T.astype(np.float64), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(db, (2 * a_value.T.astype(np.float64) @ want).T, rtol=1e-4, atol=1e-3)
