"""tf.TensorArray: reads and writes, stack/unstack, gather/scatter, concat/split, sizes, errors, gradients."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_gradients


def test_write_read_and_stack(sess):
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, [1.0, 2.0]).write(2, [5.0, 6.0]).write(1, tf.constant([3.0, 4.0]))
    first = ta.read(0)
    assert first.shape.as_list() == [2]
    stacked = tf.TensorArray(tf.float32, size=2, clear_after_read=False).write(0, [1.0]).write(1, [2.0]).stack()
    got = sess.run([first, ta.size(), stacked])
    np.testing.assert_allclose(got[0], [1.0, 2.0])
    assert got[1] == 3
    np.testing.assert_allclose(got[2], [[1.0], [2.0]])


def test_unstack_gather_scatter_concat_split(sess):
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    ta = tf.TensorArray(tf.float32, size=4).unstack(x)
    np.testing.assert_allclose(sess.run(ta.gather([3, 1])), x[[3, 1]])
    scattered = tf.TensorArray(tf.float32, size=4).scatter([2, 0, 3, 1], x).stack()
    np.testing.assert_allclose(sess.run(scattered), x[[1, 3, 0, 2]])
    pieces = tf.TensorArray(tf.float32, size=3).split(x, [1, 2, 1])
    np.testing.assert_allclose(sess.run(pieces.read(1)), x[1:3])
    np.testing.assert_allclose(sess.run(pieces.concat()), x)


def test_dynamic_size_grows_on_write(sess):
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    _, ta = tf.while_loop(lambda i, ta: tf.less(i, 7), lambda i, ta: (tf.add(i, 1), ta.write(i, tf.multiply(i, i))),
                          [0, ta])
    got = sess.run([ta.size(), ta.stack()])
    assert got[0] == 7
    np.testing.assert_array_equal(got[1], np.arange(7) ** 2)


def test_misuse_fails_with_the_array_name_and_index(sess):
    ta = tf.TensorArray(tf.float32, size=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="index 5 is out of range for its size 2.*dynamic_size"):
        sess.run(ta.write(5, 1.0).flow)
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not write to index 0 because it has already"):
        sess.run(ta.write(0, 1.0).write(0, 2.0).flow)
    written = ta.write(0, 1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not read index 0 twice"):
        sess.run(tf.add(written.read(0), written.identity().read(0)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not been written to"):
        sess.run(ta.read(1))
    with pytest.raises(TypeError, match="holds float32, but write got a int32 tensor"):
        ta.write(0, tf.constant(1))
    rows = tf.TensorArray(tf.float32, size=2, name="rows")
    with pytest.raises(ValueError, match="'rows': write has element shape \\(3,\\), but the array's elements have "
                                         "shape \\(2,\\)"):
        rows.write(0, [1.0, 2.0]).write(1, [1.0, 2.0, 3.0])


def test_element_shape_is_checked_at_run_time_for_every_write(sess):
    """Shapes known only when fed: each write is checked, also after writes of other shapes have passed."""
    first, second = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    ta = tf.TensorArray(tf.float32, size=2, element_shape=[None, 2], name="pairs")
    stacked = ta.write(0, first).write(1, second).stack()
    assert sess.run(stacked, {first: np.ones((3, 2)), second: np.zeros((3, 2))}).shape == (2, 3, 2)
    for shapes, at in ((((3, 2), (2, 3)), 1), (((3, 2), (3,)), 1), (((2, 3), (3, 2)), 0)):
        bad = shapes[at]
        feed = {first: np.ones(shapes[0]), second: np.ones(shapes[1])}
        with pytest.raises(tf.errors.InvalidArgumentError, match=(
                rf"'pairs': cannot write an element of shape \[{', '.join(map(str, bad))}\] at index {at}; its "
                rf"elements have shape \(\?, 2\)")):
            sess.run(stacked, feed)


def test_each_step_gets_fresh_arrays(sess):
    x = tf.placeholder(tf.float32, [2])
    y = tf.TensorArray(tf.float32, size=1).write(0, x).read(0)
    for v in ([1.0, 2.0], [3.0, 4.0]):
        np.testing.assert_allclose(sess.run(y, {x: v}), v)


def test_gradients_through_reads_writes_and_stacking():
    def read_back(x):
        ta = tf.TensorArray(tf.float64, size=3).unstack(x)
        return tf.add(tf.multiply(ta.read(0), ta.read(2)), tf.sin(ta.read(1)))

    check_gradients(read_back, [(3, 2)])

    def write_and_stack(x, y):
        ta = tf.TensorArray(tf.float64, size=2).write(0, tf.sin(x)).write(1, tf.multiply(x, y))
        return ta.stack()

    check_gradients(write_and_stack, [(2,), (2,)])

    def split_and_concat(x):
        ta = tf.TensorArray(tf.float64, size=2).split(x, [1, 3])
        return tf.multiply(ta.concat(), tf.sin(x))

    check_gradients(split_and_concat, [(4, 2)])

    def scatter_and_gather(x):
        ta = tf.TensorArray(tf.float64, size=3).scatter([2, 0, 1], x)
        return tf.multiply(ta.gather([1, 2]), 3.0)

    check_gradients(scatter_and_gather, [(3, 2)])


def test_unwritten_elements_get_zero_gradient(sess):
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=3).unstack(x)
    g = tf.gradients(tf.reduce_sum(ta.read(1)), x)[0]
    np.testing.assert_allclose(sess.run(g, {x: np.ones((3, 2))}), [[0, 0], [1, 1], [0, 0]])
