"""tf.data's file datasets read the files real TensorFlow wrote as TF's own readers read them (the values of
records.json, made by tests/fixtures/tf1/make_records.py), through the core's one record and line reader."""

import numpy as np
import pytest
from tf1_records import FILES, TF1, as_bytes

import tensorweave as tf


def _drain(dataset):
    x = dataset.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(x))
            except tf.errors.OutOfRangeError:
                return out


def _values(case):
    return [as_bytes(value) for _, value in TF1[f"reader/{case}"]["rows"]]


@pytest.mark.parametrize("case, name, compression", [
    ("tfrecord_plain", "examples.tfrecord", None), ("tfrecord_gzip", "examples.tfrecord.gz", "GZIP"),
    ("tfrecord_zlib", "examples.tfrecord.zz", "ZLIB")])
def test_tfrecord_dataset_reads_the_records_tensorflow_wrote(case, name, compression):
    got = _drain(tf.data.TFRecordDataset(str(FILES / name), compression_type=compression))
    assert got == _values(case) and len(got) > 1


def test_tfrecord_dataset_parsed_in_a_map_gives_what_tf1_parsed():
    features = {"label": tf.FixedLenFeature([], tf.int64), "pixels": tf.FixedLenFeature([4], tf.float32),
                "name": tf.FixedLenFeature([], tf.string)}
    got = _drain(tf.data.TFRecordDataset(str(FILES / "examples.tfrecord")).map(
        lambda record: tf.parse_single_example(record, features)))
    want = [value for _, value in TF1["reader/tfrecord_parsed"]["rows"]]
    assert [int(g["label"]) for g in got] == [w[0] for w in want]
    assert [g["pixels"].tolist() for g in got] == [np.float32(w[1]).tolist() for w in want]
    assert [g["name"] for g in got] == [as_bytes(w[2]) for w in want]


def test_text_line_dataset_splits_lines_as_tf1s_text_line_reader():
    got = _drain(tf.data.TextLineDataset([str(FILES / "lines.txt"), str(FILES / "table2.csv")]))
    assert got == _values("text_lines")
