"""tf.decode_raw and tf.decode_csv against real TensorFlow (tests/fixtures/tf1/make_parsing.py): values,
dtypes, static shapes, byte order, CSV quoting, defaults, NA values, selected columns, and TF's errors."""

import numpy as np
import pytest
from tf1_records import TF1, as_bytes, assert_outcome, outcome

import tensorweave as tf

RAW = sorted(k for k in TF1 if k.startswith("decode_raw/"))
CSV = sorted(k for k in TF1 if k.startswith("decode_csv/"))


@pytest.mark.parametrize("name", RAW)
def test_decode_raw_as_tf1(name):
    case = TF1[name]
    assert_outcome(outcome(lambda: tf.decode_raw(as_bytes(case["input"]), tf.as_dtype(case["out_type"]),
                                                 little_endian=case["little_endian"])), name)


def _default(value, dtype):
    return tf.constant(as_bytes(value) if dtype == "string" else value, tf.as_dtype(dtype))


@pytest.mark.parametrize("name", CSV)
def test_decode_csv_as_tf1(name):
    case = TF1[name]
    assert_outcome(outcome(lambda: tf.decode_csv(as_bytes(case["records"]),
                                                 [_default(v, d) for v, d in case["defaults"]], **case["kwargs"])),
                   name)


def test_python_defaults_and_the_old_bytes_argument():
    with tf.Session() as sess:
        ids, score = sess.run(tf.io.decode_csv(["1,2.5", ",0"], [[-1], [0.0]]))
        np.testing.assert_array_equal(ids, [1, -1])
        assert ids.dtype == np.int32 and score.dtype == np.float32
        raw = sess.run(tf.decode_raw(bytes=np.array([1, 2], "<u2").tobytes(), out_type=tf.uint16))
        np.testing.assert_array_equal(raw, [1, 2])


def test_decoding_a_fed_batch_of_unknown_shape():
    records = tf.placeholder(tf.string)
    columns = tf.decode_csv(records, [[0.0], ["?"]])
    pixels = tf.decode_raw(records, tf.uint8)
    assert columns[0].shape.ndims is None and pixels.shape.ndims is None
    with tf.Session() as sess:
        out = sess.run(columns, {records: [["1,a"], ["2,"]]})
        np.testing.assert_array_equal(out[1], np.array([[b"a"], [b"?"]], dtype=object))
        np.testing.assert_array_equal(sess.run(pixels, {records: [b"\x01\x02", b"\x03\x04"]}), [[1, 2], [3, 4]])
