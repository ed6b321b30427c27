"""tf.parse_example, tf.parse_single_example and tf.parse_single_sequence_example against real TensorFlow
(tests/fixtures/tf1/make_parsing.py): values, dtypes, static shapes, and the errors with TF's messages."""

import numpy as np
import pytest
from tf1_records import TF1, as_bytes, assert_outcome, features, outcome

import tensorweave as tf

EXAMPLES = sorted(k for k in TF1 if k.startswith("example/"))
SEQUENCES = sorted(k for k in TF1 if k.startswith("sequence/"))


def _parse(case):
    serialized = tf.constant(as_bytes(case["serialized"]), tf.string)
    parse = tf.parse_single_example if case["op"] == "single" else tf.parse_example
    return parse(serialized, features(case["features"]), example_names=case["example_names"])


@pytest.mark.parametrize("name", EXAMPLES)
def test_parse_example_as_tf1(name):
    assert_outcome(outcome(lambda: _parse(TF1[name])), name)


@pytest.mark.parametrize("name", SEQUENCES)
def test_parse_single_sequence_example_as_tf1(name):
    case = TF1[name]
    assert_outcome(outcome(lambda: tf.parse_single_sequence_example(
        as_bytes(case["serialized"]), features(case["context"]), features(case["lists"]),
        example_name=case["example_name"])), name)


def _example(**values):
    feature = {}
    for key, v in values.items():
        if isinstance(v[0], bytes):
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
        elif isinstance(v[0], float):
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        else:
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_a_fed_batch_of_unknown_size_and_the_io_aliases(sess):
    serialized = tf.placeholder(tf.string, [None])
    parsed = tf.io.parse_example(serialized, {"x": tf.io.FixedLenFeature([2], tf.float32),
                                              "ids": tf.io.VarLenFeature(tf.int64)})
    assert parsed["x"].shape.as_list() == [None, 2]
    out = sess.run(parsed, {serialized: [_example(x=[1.0, 2.0], ids=[4, 5, 6]), _example(x=[3.0, 4.0], ids=[7])]})
    np.testing.assert_array_equal(out["x"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out["ids"].indices, [[0, 0], [0, 1], [0, 2], [1, 0]])
    np.testing.assert_array_equal(out["ids"].dense_shape, [2, 3])


def test_parsed_features_feed_the_model_inside_a_cond(sess):
    serialized = tf.placeholder(tf.string, [])
    parsed = tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([], tf.float32, default_value=-1.0)})
    flag = tf.placeholder(tf.bool, [])
    y = tf.cond(flag, lambda: parsed["x"] * 2.0, lambda: parsed["x"] + 1.0)
    assert sess.run(y, {serialized: _example(x=[3.0]), flag: True}) == 6.0
    assert sess.run(y, {serialized: _example(), flag: False}) == 0.0


def test_an_error_names_the_op_that_parsed(sess):
    parsed = tf.parse_single_example(_example(x=[1, 2]), {"x": tf.FixedLenFeature([3], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: x") as info:
        sess.run(parsed["x"])
    assert "ParseSingleExample" in str(info.value) or "ParseSingleExample" in str(info.value.op)


@pytest.fixture
def sess():
    with tf.Session() as s:
        yield s
