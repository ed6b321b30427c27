"""tf.TFRecordReader (plain, GZIP, ZLIB) and tf.TextLineReader fed by tf.train.string_input_producer and queue
runners, as TF1 tutorials write them, against what real TensorFlow read from the same files
(tests/fixtures/tf1/make_records.py): keys, records, and the parsed or decoded values."""

import numpy as np
import pytest
from tf1_records import FILES, TF1, as_bytes, assert_value

import tensorweave as tf

FEATURES = {"label": tf.FixedLenFeature([], tf.int64), "pixels": tf.FixedLenFeature([4], tf.float32),
            "name": tf.FixedLenFeature([], tf.string), "tags": tf.VarLenFeature(tf.string)}


def read_all(files, make_reader, up_to=None, parse=None, limit=50):
    """Every record of ``files`` (one epoch, in order) through a queue runner, as make_records.run_reader."""
    queue = tf.train.string_input_producer([str(f) for f in files], num_epochs=1, shuffle=False)
    reader = make_reader()
    key, value = reader.read_up_to(queue, up_to) if up_to else reader.read(queue)
    fetch = [key, value] if parse is None else [key, parse(value)]
    rows = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            for _ in range(limit):
                rows.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    return rows


def relative(value):
    """Keys without the folder, as the fixture keeps them."""
    prefix = str(FILES).encode() + b"/"
    if isinstance(value, bytes):
        return value.replace(prefix, b"")
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.array([relative(v) for v in value.reshape(-1)], dtype=object).reshape(value.shape)
    return value


def assert_rows(rows, case):
    want = TF1[case]["rows"]
    assert len(rows) == len(want), (case, len(rows), len(want))
    for got, expected in zip(rows, want):
        np.testing.assert_array_equal(_objects(relative(got[0])), _objects(as_bytes(expected[0])))
        if isinstance(got[1], list):  # parsed or decoded columns
            for g, w in zip(got[1], expected[1]):
                if isinstance(g, tf.SparseTensorValue):
                    assert_value(g, {"indices": w[0], "values": w[1], "dense_shape": w[2], "dtype": "object"}, case)
                else:
                    np.testing.assert_array_equal(_objects(g), _objects(as_bytes(w)))
        else:
            np.testing.assert_array_equal(_objects(got[1]), _objects(as_bytes(expected[1])))


def _objects(value):
    """As an object array, so bytes keep their trailing NULs (numpy's fixed-width bytes would drop them)."""
    out = np.empty(np.shape(value) if isinstance(value, (list, np.ndarray)) else (), dtype=object)
    out[...] = value
    return out


@pytest.mark.parametrize("case, files, make_reader", [
    ("tfrecord_plain", ["examples.tfrecord"], tf.TFRecordReader),
    ("tfrecord_gzip", ["examples.tfrecord.gz"], lambda: tf.TFRecordReader(options=tf.python_io.TFRecordOptions("GZIP"))),
    ("tfrecord_zlib", ["examples.tfrecord.zz"], lambda: tf.TFRecordReader(options="ZLIB")),
    ("text_lines", ["lines.txt", "table2.csv"], tf.TextLineReader),
])
def test_readers_read_what_tf1_read(case, files, make_reader):
    assert_rows(read_all([FILES / f for f in files], make_reader), f"reader/{case}")


def test_read_up_to_stops_at_the_end_of_each_file():
    rows = read_all([FILES / "examples.tfrecord"] * 2, tf.TFRecordReader, up_to=2)
    assert_rows(rows, "reader/tfrecord_two_files_up_to_2")


def test_records_parsed_with_parse_single_example():
    def parse(value):
        parsed = tf.parse_single_example(value, FEATURES)
        return [parsed["label"], parsed["pixels"], parsed["name"], parsed["tags"]]
    assert_rows(read_all([FILES / "examples.tfrecord"], tf.TFRecordReader, parse=parse), "reader/tfrecord_parsed")


def test_csv_lines_after_the_header_decoded():
    rows = read_all([FILES / "table.csv", FILES / "table2.csv"], lambda: tf.TextLineReader(skip_header_lines=1),
                    parse=lambda value: tf.decode_csv(value, [[0], [-1.0], ["?"]]))
    assert_rows(rows, "reader/text_lines_skip_header_csv")


def test_a_tutorial_input_pipeline_batches_parsed_examples():
    """string_input_producer -> TFRecordReader -> parse_single_example -> tf.train.batch -> a model's input."""
    queue = tf.train.string_input_producer([str(FILES / "examples.tfrecord.gz")], num_epochs=2, shuffle=False)
    _, record = tf.TFRecordReader(options=tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.GZIP)).read(queue)
    parsed = tf.parse_single_example(record, FEATURES)
    labels, pixels = tf.train.batch([parsed["label"], parsed["pixels"]], batch_size=2)
    mean = tf.reduce_mean(pixels, axis=1)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = [sess.run([labels, mean]) for _ in range(3)]
        coord.request_stop()
        coord.join(threads)
    assert [list(b[0]) for b in got] == [[1, -7], [2 ** 40, 1], [-7, 2 ** 40]]
    np.testing.assert_allclose(got[0][1], [2.0, (0.0 - 1.0 + 1e-3 + 3.25) / 4], rtol=1e-6)


def test_a_damaged_file_fails_one_read_and_the_next_file_is_read(tmp_path):
    data = (FILES / "examples.tfrecord").read_bytes()
    damaged = bytearray(data)
    damaged[len(data) - 20] ^= 0x40  # inside the last record's data
    (tmp_path / "damaged.tfrecord").write_bytes(bytes(damaged))
    queue = tf.FIFOQueue(4, tf.string)
    key, value = tf.TFRecordReader().read(queue)
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[str(tmp_path / "damaged.tfrecord"), str(FILES / "examples.tfrecord")]]))
        sess.run(queue.close())
        assert sess.run(key).endswith(b"damaged.tfrecord:0")
        assert sess.run(key).endswith(b"damaged.tfrecord:103")
        with pytest.raises(tf.errors.DataLossError, match=r"corrupted record at 221 .*damaged.tfrecord"):
            sess.run(key)
        assert sess.run(key).endswith(b"examples.tfrecord:0")


def test_a_missing_tfrecord_file_is_not_found(tmp_path):
    queue = tf.FIFOQueue(2, tf.string)
    key, _ = tf.TFRecordReader().read(queue)
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[str(tmp_path / "missing.tfrecord"), str(FILES / "examples.tfrecord")]]))
        with pytest.raises(tf.errors.NotFoundError, match="missing.tfrecord"):
            sess.run(key)
        assert sess.run(key).endswith(b"examples.tfrecord:0")


def test_an_unknown_compression_type_is_refused_when_building():
    with pytest.raises(ValueError, match='Not a valid compression_type: "LZ4"'):
        tf.TFRecordReader(options="LZ4")


def test_the_mnist_tutorials_convert_to_records_and_read_back(tmp_path):
    """TF1's fully_connected_reader pattern: images written as raw bytes in Examples, read with a TFRecordReader,
    decoded with decode_raw, shaped with set_shape, cast and batched with shuffle_batch."""
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(6, 28 * 28), dtype=np.uint8)
    labels = np.arange(6) % 3
    with tf.python_io.TFRecordWriter(str(tmp_path / "train.tfrecords")) as writer:
        for image, label in zip(images, labels):
            example = tf.train.Example(features=tf.train.Features(feature={
                "height": tf.train.Feature(int64_list=tf.train.Int64List(value=[28])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
                "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()]))}))
            writer.write(example.SerializeToString())
    queue = tf.train.string_input_producer([str(tmp_path / "train.tfrecords")], num_epochs=1)
    _, serialized = tf.TFRecordReader().read(queue)
    features = tf.parse_single_example(serialized, features={
        "image_raw": tf.FixedLenFeature([], tf.string), "label": tf.FixedLenFeature([], tf.int64)})
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    image.set_shape([28 * 28])
    image = tf.cast(image, tf.float32) * (1.0 / 255) - 0.5
    label = tf.cast(features["label"], tf.int32)
    batch_images, batch_labels = tf.train.shuffle_batch([image, label], batch_size=3, num_threads=2,
                                                        capacity=10, min_after_dequeue=2, seed=1)
    assert batch_images.shape.as_list() == [3, 784]
    seen = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        try:
            while not coord.should_stop():
                seen.append(sess.run([batch_images, batch_labels]))
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    got = {tuple(np.round((img + 0.5) * 255).astype(np.uint8)): lab for b in seen for img, lab in zip(*b)}
    assert got == {tuple(img): lab for img, lab in zip(images, labels)}
