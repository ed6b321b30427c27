"""Shape inference of the linear-algebra and math ops of issue 18, graph only (no kernel package needed): batch
dimensions carried through, unknown dimensions kept unknown, known ones found, and bad shapes refused while
building with the op's name."""

import pytest

import tensorweave as tf


def _shape(t):
    return None if t.shape.ndims is None else t.shape.as_list()


@pytest.mark.parametrize("build,expected", [
    (lambda x: tf.qr(x)[0], [None, 5, 3]),
    (lambda x: tf.qr(x)[1], [None, 3, 3]),
    (lambda x: tf.qr(x, full_matrices=True)[0], [None, 5, 5]),
    (lambda x: tf.svd(x)[0], [None, 3]),
    (lambda x: tf.svd(x)[1], [None, 5, 3]),
    (lambda x: tf.svd(x, full_matrices=True)[2], [None, 3, 3]),
    (lambda x: tf.svd(x, compute_uv=False), [None, 3]),
    (lambda x: tf.matrix_diag_part(x), [None, 3]),
    (lambda x: tf.matrix_band_part(x, 1, 0), [None, 5, 3]),
    (lambda x: tf.matrix_set_diag(x, tf.ones([4, 3])), [4, 5, 3]),
    (lambda x: tf.trace(x), [None]),
    (lambda x: tf.einsum("bij,bjk->bik", x, tf.ones([4, 3, 2])), [4, 5, 2]),
    (lambda x: tf.einsum("...ij->...ji", x), [None, 3, 5]),
    (lambda x: tf.tensordot(x, tf.ones([3, 7]), 1), [None, 5, 7]),
    (lambda x: tf.norm(x, axis=[1, 2]), [None]),
    (lambda x: tf.norm(x, axis=-1, keepdims=True), [None, 5, 1]),
    (lambda x: tf.segment_max(x, tf.constant([0, 0])), [None, 5, 3]),
    (lambda x: tf.unsorted_segment_prod(x, tf.constant([1, 0]), 4), [4, 5, 3]),
    (lambda x: tf.sort(x, axis=1), [None, 5, 3]),
    (lambda x: tf.argsort(x), [None, 5, 3]),
    (lambda x: tf.lgamma(x), [None, 5, 3]),
])
def test_shapes_with_an_unknown_batch(build, expected):
    x = tf.placeholder(tf.float32, [None, 5, 3])
    assert _shape(build(x)) == expected


@pytest.mark.parametrize("build,expected", [
    (lambda x: tf.matrix_inverse(x), [None, 4, 4]),
    (lambda x: tf.cholesky(x), [None, 4, 4]),
    (lambda x: tf.matrix_determinant(x), [None]),
    (lambda x: tf.linalg.slogdet(x)[1], [None]),
    (lambda x: tf.self_adjoint_eig(x)[0], [None, 4]),
    (lambda x: tf.self_adjoint_eig(x)[1], [None, 4, 4]),
    (lambda x: tf.self_adjoint_eigvals(x), [None, 4]),
    (lambda x: tf.matrix_solve(x, tf.placeholder(tf.float32, [2, None, 6])), [2, 4, 6]),
    (lambda x: tf.matrix_triangular_solve(x, tf.placeholder(tf.float32, [None, 4, 1])), [None, 4, 1]),
    (lambda x: tf.cholesky_solve(x, tf.placeholder(tf.float32, [None, 4, 2])), [None, 4, 2]),
    (lambda x: tf.linalg.lu(x)[0], [None, 4, 4]),
    (lambda x: tf.linalg.lu(x)[1], [None, 4]),
])
def test_square_matrix_ops_merge_the_two_inner_dimensions(build, expected):
    x = tf.placeholder(tf.float32, [None, 4, None])
    assert _shape(build(x)) == expected


def test_unknown_rank_stays_unknown():
    x = tf.placeholder(tf.float32)
    assert _shape(tf.matrix_inverse(x)) is None and _shape(tf.qr(x)[0]) is None
    assert _shape(tf.matrix_determinant(x)) is None and _shape(tf.svd(x)[0]) is None


def test_eye_linspace_and_meshgrid_shapes():
    assert _shape(tf.eye(3, 4, batch_shape=[2])) == [2, 3, 4]
    assert _shape(tf.eye(tf.placeholder(tf.int32, []))) == [None, None]
    assert _shape(tf.linspace(0.0, 1.0, 5)) == [5]
    assert _shape(tf.linspace(0.0, 1.0, tf.placeholder(tf.int32, []))) == [None]
    x, y = tf.meshgrid(tf.ones([3]), tf.placeholder(tf.float32, [None]))
    assert _shape(x) == _shape(y) == [None, 3]


@pytest.mark.parametrize("build,message", [
    (lambda: tf.matrix_inverse(tf.ones([2, 3]), name="inv"), "MatrixInverse 'inv'.*square"),
    (lambda: tf.qr(tf.ones([3]), name="q"), "Qr 'q'.*rank >= 2"),
    (lambda: tf.matrix_solve(tf.ones([2, 2]), tf.ones([3, 1]), name="s"), "MatrixSolve 's'.*does not fit"),
    (lambda: tf.diag_part(tf.ones([2, 3]), name="d"), "DiagPart 'd'"),
    (lambda: tf.einsum("ij,jk->ik", tf.ones([2, 2])), "names 2 operands"),
    (lambda: tf.tensordot(tf.ones([2, 2]), tf.ones([2, 2]), 3), r"axes=3 must be in \[0, 2\]"),
    (lambda: tf.segment_max(tf.ones([3, 2]), tf.constant([0, 1])), "one entry per row"),
])
def test_bad_shapes_are_refused_while_building(build, message):
    with pytest.raises(ValueError, match=message):
        build()
