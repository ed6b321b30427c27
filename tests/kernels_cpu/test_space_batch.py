"""SpaceToBatchND/BatchToSpaceND (each the other's gradient) and what TF1 builds on them: dilated
``tf.nn.convolution`` and ``tf.nn.pool``, ``atrous_conv2d`` and ``with_space_to_batch``, against TF1's numbers
(programs in tests/fixtures/tf1/space_batch_programs.py, run by real TensorFlow for the fixture)."""

import numpy as np
import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf


PROGRAMS = programs_module("space_batch_programs").PROGRAMS
EXPECTED = load("space_batch")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_space_batch_program_matches_tf1(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    assert_matches(got, EXPECTED[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)


def test_dilated_convolution_is_built_as_tf1_builds_it():
    x = tf.placeholder(tf.float32, [1, 8, 8, 2])
    tf.nn.convolution(x, tf.zeros([3, 3, 2, 3]), "SAME", dilation_rate=[2, 2])
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert types.index("SpaceToBatchND") < types.index("Conv2D") < types.index("BatchToSpaceND")


def test_static_shapes_and_their_errors():
    x = tf.placeholder(tf.float32, [2, 5, None, 3])
    assert tf.space_to_batch_nd(x, [2, 3], [[1, 0], [0, 1]]).shape.as_list() == [12, 3, None, 3]
    assert tf.batch_to_space_nd(tf.zeros([12, 3, 4, 1]), [2, 3], [[1, 0], [0, 1]]).shape.as_list() == [2, 5, 11, 1]
    with pytest.raises(ValueError, match="padded dimension 1 .* is not divisible by block_shape\\[0\\] = 2"):
        tf.space_to_batch_nd(x, [2, 3], [[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="batch 10 is not divisible by the product of block_shape"):
        tf.batch_to_space_nd(tf.zeros([10, 3, 4, 1]), [2, 3], [[0, 0], [0, 0]])


def test_the_kernel_refuses_a_fed_shape_that_does_not_divide():
    x = tf.placeholder(tf.float32, None)
    y = tf.space_to_batch_nd(x, [2], [[0, 0]])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="not divisible by block_shape"):
        sess.run(y, {x: np.zeros([1, 3, 2])})


def test_pool_refuses_what_tf1_refuses():
    x = tf.zeros([1, 8, 8, 1])
    with pytest.raises(ValueError, match="'SAME' padding is not implemented for dilation_rate > 1"):
        tf.nn.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2])
    with pytest.raises(ValueError, match="strides > 1 not supported in conjunction with dilation_rate > 1"):
        tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 2], strides=[2, 2])
    with pytest.raises(ValueError, match="strides > window_shape"):
        tf.nn.pool(x, [2, 2], "AVG", "VALID", strides=[3, 1])
    with pytest.raises(ValueError, match="strides > 1 not supported in conjunction with dilation_rate > 1"):
        tf.nn.convolution(x, tf.zeros([2, 2, 1, 1]), "VALID", strides=[2, 2], dilation_rate=[2, 1])
