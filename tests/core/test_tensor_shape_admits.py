"""TensorShape.admits: the run-time check of a concrete shape (feeds, TensorArray writes, EnsureShape) agrees
with is_compatible_with for every pair."""

import itertools

import pytest

import tensorweave as tf

PARTIAL = [None, [], [None], [3], [None, 2], [3, 2], [3, None], [None, None, 2], [1, 2, 3]]
CONCRETE = [(), (0,), (3,), (4,), (3, 2), (2, 3), (0, 2), (3, 1), (5, 5, 2), (1, 2, 3), (1, 2, 3, 4)]


@pytest.mark.parametrize("partial, concrete", list(itertools.product(PARTIAL, CONCRETE)))
def test_admits_agrees_with_is_compatible_with(partial, concrete):
    shape = tf.TensorShape(partial)
    assert shape.admits(concrete) == shape.is_compatible_with(tf.TensorShape(concrete))


def test_a_fed_value_of_another_shape_is_refused_before_anything_runs():
    x = tf.placeholder(tf.float32, [None, 2], name="pairs")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"cannot feed value of shape \(2, 3\) for tensor 'pairs:0', which has shape \[\?, 2\]"):
            sess.run(x, {x: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]})
