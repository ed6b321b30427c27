"""tf.linalg.diag/diag_part/set_diag (tf.matrix_diag...) with k (a diagonal or a band), num_rows, num_cols,
padding_value and align (ops MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3), values and gradients, against
TF1's numbers (programs in tests/fixtures/tf1/matrix_band_programs.py, run by real TensorFlow for the fixture)."""

import numpy as np
import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf


PROGRAMS = programs_module("matrix_band_programs").PROGRAMS
EXPECTED = load("matrix_band")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matrix_band_program_matches_tf1(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    assert_matches(got, EXPECTED[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)


def test_sizes_that_do_not_fit_the_band_are_refused_in_tf_words():
    d = tf.zeros([2, 3, 4])
    with pytest.raises(ValueError, match="num_rows 3 is too small"):
        tf.linalg.diag(d, k=(0, 2), num_rows=3, num_cols=6)
    with pytest.raises(ValueError, match="asks for 2"):
        tf.linalg.diag(d, k=(0, 1))
    with pytest.raises(ValueError, match="got a diagonal of shape \\(2, 4\\)"):
        tf.linalg.set_diag(tf.zeros([2, 4, 3]), tf.zeros([2, 4]), k=-1)
    with pytest.raises(ValueError, match="must not be greater"):
        tf.linalg.diag_part(tf.zeros([3, 3]), k=(1, 0))
    with pytest.raises(ValueError, match="align must be one of"):
        tf.linalg.diag_part(tf.zeros([3, 3]), k=1, align="CENTER")


def test_a_fed_k_is_checked_by_the_kernel():
    k = tf.placeholder(tf.int32, [2])
    part = tf.linalg.diag_part(tf.reshape(tf.range(12.0), [3, 4]), k=k)
    assert part.shape.ndims is None
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(part, {k: [0, 1]}), [[1.0, 6.0, 11.0], [0.0, 5.0, 10.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="lo <= hi"):
            sess.run(part, {k: [1, 0]})
