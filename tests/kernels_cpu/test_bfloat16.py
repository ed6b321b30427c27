"""tf.bfloat16 (backed by ml_dtypes' bfloat16): the dtype's properties, casts, feeds and fetches, variables and
checkpoints. Rounding and the gradient through casts are checked against TF in test_conv_layers.py
(``dtype_bfloat16_round_trip``)."""

import ml_dtypes
import numpy as np
import pytest

import tensorweave as tf


def test_dtype_properties_and_lookups():
    bf = tf.bfloat16
    assert bf.is_floating and bf.is_numeric and not bf.is_integer and bf.size == 2
    assert bf.as_numpy_dtype is ml_dtypes.bfloat16 and bf.as_datatype_enum == 14
    assert tf.as_dtype("bfloat16") is bf and tf.as_dtype(14) is bf and tf.as_dtype(ml_dtypes.bfloat16) is bf
    assert bf.max == pytest.approx(3.3895313892515355e38) and bf.min == -bf.max
    assert repr(bf) == "tf.bfloat16"


def test_feed_fetch_cast_and_arithmetic():
    p = tf.placeholder(tf.bfloat16, [3])
    scalar = tf.placeholder(tf.bfloat16, [])
    y = p * scalar + tf.constant(1.0, tf.bfloat16)
    with tf.Session() as sess:
        got, as_float = sess.run([y, tf.cast(y, tf.float32)], {p: np.array([1.0, 2.7, -3.14159]), scalar: 2.5})
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(as_float, np.array([3.5, 7.75, -6.84375], np.float32))


def test_a_python_float_beyond_bfloat16_range_is_refused():
    p = tf.placeholder(tf.bfloat16, [])
    with tf.Session() as sess, pytest.raises(TypeError, match="would become inf"):
        sess.run(p, {p: 1e39})


def test_variables_save_and_restore(tmp_path):
    v = tf.Variable(tf.constant([1.5, -2.25, 3e38], tf.bfloat16), name="bf")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model"))
        sess.run(v.assign(tf.zeros([3], tf.bfloat16)))
        saver.restore(sess, path)
        restored = sess.run(v)
    assert restored.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(restored.astype(np.float32),
                                  np.array([1.5, -2.25, 3e38], np.float32).astype(ml_dtypes.bfloat16).astype(np.float32))
    assert tf.train.load_variable(path, "bf").dtype == ml_dtypes.bfloat16
