"""Linear algebra and math (issue 18) against TF1's numbers: forward values, static shapes and gradients of the
programs in tests/fixtures/tf1/linalg_programs.py (batched inputs, Python lists, unknown dimensions), then what
the fixture cannot hold: Python lists where TF 2's einsum refuses them, errors that name the op, and the
numbers of inputs TF's reference values do not reach (complex, large batches) against numpy."""

import numpy as np
import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf


PROGRAMS = programs_module("linalg_programs").PROGRAMS
EXPECTED = load("linalg")
FLOAT32_PROGRAMS = {"fused_batch_norm_training", "fused_batch_norm_inference"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_tf1(name):
    graph = tf.Graph()
    with graph.as_default():
        run = PROGRAMS[name](tf)
        with tf.Session(graph=graph) as sess:
            got = run(sess)
    tolerance = 2e-4 if name in FLOAT32_PROGRAMS else 1e-7
    assert_matches(got, EXPECTED[name], name, rtol=tolerance, atol=tolerance)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)


def _run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed)


# ---- what the fixture cannot hold ------------------------------------------------------------------------------
def test_einsum_takes_python_lists_as_tf1_did():
    dot, matvec = _run(tf.einsum("i,i->", [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
                       tf.einsum("ij,j->i", [[1.0, 2.0], [3.0, 4.0]], [1.0, -1.0]))
    assert dot == 32.0
    np.testing.assert_array_equal(matvec, [-1.0, -1.0])


@pytest.mark.parametrize("equation,shapes", [
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]), ("ij,ij->i", [(3, 4), (3, 4)]), ("i,i,i->", [(4,), (4,), (4,)]),
    ("bii->bi", [(2, 3, 3)]), ("iij->j", [(3, 3, 2)]), ("...i,...i->...", [(2, 3, 4), (3, 4)]),
    ("ab,cd->", [(2, 3), (4, 5)]), ("ba,ab->", [(3, 2), (2, 3)]), ("bij,bkj->bik", [(2, 3, 4), (1, 5, 4)]),
])
def test_einsum_against_numpy(equation, shapes):
    rng = np.random.RandomState(0)
    values = [rng.randn(*s) for s in shapes]
    (got,) = _run(tf.einsum(equation, *[tf.constant(v) for v in values]))
    np.testing.assert_allclose(got, np.einsum(equation, *values), rtol=1e-10, atol=1e-12)


def test_einsum_of_operands_of_unknown_rank_takes_the_subscripts_rank():
    """Before, an operand of unknown rank (a placeholder without a shape) failed while building."""
    a = tf.placeholder(tf.float64)
    product = tf.einsum("ij,jk->ik", a, a)
    assert product.shape.as_list() == [None, None]
    value = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(_run(product, feed={a: value})[0], value @ value)
    with pytest.raises(tf.errors.InvalidArgumentError):
        _run(product, feed={a: np.ones(3)})


def test_einsum_errors_name_the_equation():
    with pytest.raises(ValueError, match="names 2 operands"):
        tf.einsum("ij,jk->ik", tf.ones([2, 2]))
    with pytest.raises(ValueError, match="name 2 dimensions"):
        tf.einsum("ij->j", tf.ones([2, 2, 2]))
    with pytest.raises(ValueError, match="output subscripts"):
        tf.einsum("ij->k", tf.ones([2, 2]))


def test_tensordot_with_unknown_rank_is_refused_with_the_shapes():
    with pytest.raises(ValueError, match="known rank"):
        tf.tensordot(tf.placeholder(tf.float32), tf.ones([2, 2]), 1)


def test_linalg_ops_on_complex_matrices_match_numpy():
    rng = np.random.RandomState(1)
    a = rng.randn(2, 3, 3) + 1j * rng.randn(2, 3, 3) + 3 * np.eye(3)
    b = rng.randn(2, 3, 2) + 1j * rng.randn(2, 3, 2)
    hermitian = a @ np.conj(np.swapaxes(a, -1, -2))
    x = tf.constant(a)
    inverse, det, solve, chol, eigvals, q_r, solve_adjoint = _run(
        tf.matrix_inverse(x), tf.matrix_determinant(x), tf.matrix_solve(x, b), tf.cholesky(hermitian),
        tf.self_adjoint_eigvals(hermitian), tf.matmul(*tf.qr(x)), tf.matrix_solve(x, b, adjoint=True))
    np.testing.assert_allclose(inverse, np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(det, np.linalg.det(a), atol=1e-10)
    np.testing.assert_allclose(solve, np.linalg.solve(a, b), atol=1e-12)
    np.testing.assert_allclose(solve_adjoint, np.linalg.solve(np.conj(np.swapaxes(a, -1, -2)), b), atol=1e-12)
    np.testing.assert_allclose(chol, np.linalg.cholesky(hermitian), atol=1e-12)
    np.testing.assert_allclose(eigvals, np.linalg.eigvalsh(hermitian), atol=1e-10)
    np.testing.assert_allclose(q_r, a, atol=1e-12)


@pytest.mark.parametrize("build,message", [
    (lambda: tf.matrix_inverse(tf.zeros([2, 2])), "not invertible"),
    # TF 1.15 refuses a matrix that is not positive definite (TF 2.21 returns NaNs, so the fixture cannot say)
    (lambda: tf.cholesky(tf.constant([[1.0, 2.0], [2.0, 1.0]])), "positive"),
    (lambda: tf.matrix_solve(tf.zeros([2, 2]), tf.ones([2, 1])), "not invertible"),
    (lambda: tf.linspace(0.0, 1.0, tf.placeholder_with_default(0, [])), "num > 0"),
    (lambda: tf.segment_max(tf.ones([3]), [1, 0, 0]), "sorted"),
])
def test_run_time_errors_name_the_op(build, message):
    t = build()
    with pytest.raises(tf.errors.InvalidArgumentError, match=message) as caught:
        _run(t)
    assert t.op.name in str(caught.value)


@pytest.mark.parametrize("build,message", [
    (lambda: tf.matrix_inverse(tf.ones([2, 3])), "square"),
    (lambda: tf.matrix_determinant(tf.ones([3])), "rank >= 2"),
    (lambda: tf.matrix_solve(tf.ones([2, 2]), tf.ones([3, 1])), "does not fit"),
    (lambda: tf.matrix_set_diag(tf.ones([2, 3]), tf.ones([3])), "diagonal"),
    (lambda: tf.diag_part(tf.ones([2, 3])), "D1..Dk"),
    (lambda: tf.norm(tf.ones([2, 2]), ord="nuclear", axis=[0, 1]), "matrix norm"),
    (lambda: tf.norm(tf.ones([2, 2]), ord=-1), "vector norm"),
    (lambda: tf.linspace(0.0, 1.0, 0), "num > 0"),
    (lambda: tf.nn.fused_batch_norm(tf.ones([1, 2, 2, 3], tf.float64), tf.ones([3]), tf.zeros([3])), "float32"),
])
def test_graph_time_errors_say_what_was_wrong(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


def test_svd_gradient_needs_the_inner_shape_unless_only_values_were_computed():
    x = tf.placeholder(tf.float64, [None, None])
    with pytest.raises(NotImplementedError, match="set_shape"):
        tf.gradients(tf.reduce_sum(tf.svd(x)[1]), x)
    grad = tf.gradients(tf.reduce_sum(tf.svd(x, compute_uv=False)), x)[0]
    value = np.array([[3.0, 1.0], [0.0, 2.0], [1.0, 1.0]])
    u, _, vh = np.linalg.svd(value, full_matrices=False)
    np.testing.assert_allclose(_run(grad, feed={x: value})[0], u @ vh, atol=1e-12)


def test_large_batch_of_solves_matches_numpy():
    rng = np.random.RandomState(2)
    a = rng.randn(64, 4, 4) + 4 * np.eye(4)
    b = rng.randn(64, 4, 3)
    lower, inverse_det = _run(tf.matrix_triangular_solve(a, b), tf.linalg.slogdet(a)[1])
    np.testing.assert_allclose(lower, np.linalg.solve(np.tril(a), b), atol=1e-12)
    np.testing.assert_allclose(inverse_det, np.linalg.slogdet(a)[1], atol=1e-12)


def test_linalg_ops_inside_a_while_loop_capture_the_matrix():
    a = tf.constant(np.array([[2.0, 1.0], [1.0, 3.0]]))

    def body(i, x):
        return i + 1, tf.matrix_solve(a, x)

    _, out = tf.while_loop(lambda i, _: i < 3, body, [tf.constant(0), tf.constant([[1.0], [1.0]], tf.float64)])
    grad = tf.gradients(tf.reduce_sum(out), a)[0]
    value, g = _run(out, grad)
    inv = np.linalg.inv([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(value, inv @ inv @ inv @ np.ones((2, 1)), atol=1e-12)
    eps, base = 1e-6, np.array([[2.0, 1.0], [1.0, 3.0]])
    numeric = np.zeros((2, 2))
    for i in range(2):
        for j in range(2):
            d = np.zeros((2, 2))
            d[i, j] = eps
            f = [np.sum(np.linalg.matrix_power(np.linalg.inv(base + s * d), 3) @ np.ones((2, 1))) for s in (1, -1)]
            numeric[i, j] = (f[0] - f[1]) / (2 * eps)
    np.testing.assert_allclose(g, numeric, rtol=1e-6)


def test_least_squares_without_fast_has_no_gradient_as_in_tf():
    a = tf.placeholder(tf.float64, [3, 2])
    x = tf.linalg.lstsq(a, tf.ones([3, 1], tf.float64), fast=False)
    with pytest.raises(ValueError, match="not defined for fast=False"):
        tf.gradients(tf.reduce_sum(x), a)
