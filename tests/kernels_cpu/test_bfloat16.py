"""tf.bfloat16 (backed by ml_dtypes' bfloat16): the dtype's properties, casts, feeds and fetches, variables and
checkpoints in both formats (TensorFlow's checked with real TF when it is at hand). Rounding and the gradient
through casts are checked against TF in test_conv_layers.py (``dtype_bfloat16_round_trip``), computation in
test_bfloat16_compute.py."""

import textwrap

import ml_dtypes
import numpy as np
import pytest
from tf1_fixtures import NO_TF_REASON, run_in_tf, tf_python

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


_BF16_IN_TF = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    reader = tf.train.load_checkpoint(sys.argv[1])
    raw = reader.get_tensor("bf")
    v = tf.get_variable("bf", [3], tf.bfloat16)
    w = tf.Variable(tf.constant([[0.1, -7.0], [1e-3, 250.0]], tf.bfloat16), name="written_by_tf")
    with tf.Session() as sess:
        sess.run(w.initializer)
        tf.train.Saver([v]).restore(sess, sys.argv[1])
        got = sess.run(tf.cast(v, tf.float32))
        tf.train.Saver([w]).save(sess, sys.argv[2])
    print(json.dumps({"dtype": str(reader.get_variable_to_dtype_map()["bf"].name), "raw": raw.astype(np.float32).tolist(),
                      "restored": got.tolist()}))
""")


@pytest.mark.skipif(tf_python() is None, reason=NO_TF_REASON)
def test_tensorflow_format_round_trip_with_real_tensorflow(tmp_path):
    """A bfloat16 variable saved in TensorFlow's format restores here and in real TF; one TF saved restores here."""
    values = np.array([1.5, -2.25, 3e38], np.float32).astype(ml_dtypes.bfloat16)
    v = tf.Variable(tf.constant(values), name="bf")
    saver = tf.train.Saver(checkpoint_format="tensorflow")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model"))
        sess.run(v.assign(tf.zeros([3], tf.bfloat16)))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), values)
    got = run_in_tf(_BF16_IN_TF, path, tmp_path / "from_tf")
    assert got["dtype"] == "bfloat16"
    assert got["raw"] == got["restored"] == values.astype(np.float32).tolist()
    with tf.Graph().as_default():
        w = tf.Variable(tf.zeros([2, 2], tf.bfloat16), name="written_by_tf")
        with tf.Session() as sess:
            tf.train.Saver([w]).restore(sess, str(tmp_path / "from_tf"))
            restored = sess.run(w)
    assert restored.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(restored, np.array([[0.1, -7.0], [1e-3, 250.0]], np.float32).astype(ml_dtypes.bfloat16))


def test_optimizers_take_bfloat16_variables_as_tf1s_do():
    """TF 1.15's optimizers accept bfloat16 (its _valid_dtypes); a gradient-descent step rounds as bfloat16 does."""
    start = np.array([1.0, -2.0, 3.0], np.float32).astype(ml_dtypes.bfloat16)
    v = tf.Variable(tf.constant(start), name="bf_trained")
    step = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(tf.square(v)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        got = sess.run(v)
    grad = (start.astype(np.float32) * 2).astype(ml_dtypes.bfloat16)
    want = start - (grad * ml_dtypes.bfloat16(0.1))
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
