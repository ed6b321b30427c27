"""Input pipelines: producers with epochs and shuffling, batching (padded, shuffled, joined), shutdown."""

import numpy as np
import pytest

import tensorweave as tf


def _drain(sess, tensor):
    """Every value ``tensor`` yields until the pipeline runs out."""
    out = []
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while True:
            out.append(sess.run(tensor))
    except tf.errors.OutOfRangeError:
        pass
    finally:
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    return out


def _init(sess):
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])


def test_range_input_producer_gives_each_epoch_in_order(sess):
    queue = tf.train.range_input_producer(5, num_epochs=2, shuffle=False)
    _init(sess)
    assert _drain(sess, queue.dequeue()) == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]


def test_shuffled_epochs_are_permutations_and_seeded(sess):
    def epochs(seed):
        with tf.Graph().as_default(), tf.Session() as s:
            queue = tf.train.range_input_producer(10, num_epochs=3, shuffle=True, seed=seed)
            _init(s)
            return _drain(s, queue.dequeue())

    a, b = epochs(4), epochs(4)
    assert a == b
    for e in range(3):
        assert sorted(a[10 * e:10 * (e + 1)]) == list(range(10))
    assert a[:10] != list(range(10))


def test_string_input_producer_and_empty_input(sess):
    queue = tf.train.string_input_producer(["a.txt", "b.txt"], num_epochs=1, shuffle=False)
    _init(sess)
    names = _drain(sess, queue.dequeue())
    assert [v.decode() if isinstance(v, bytes) else v for v in names] == ["a.txt", "b.txt"]
    with pytest.raises(ValueError, match="non-empty"):
        tf.train.string_input_producer(np.array([], dtype=object))


def test_slice_input_producer_keeps_rows_together(sess):
    images = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.arange(6, dtype=np.int32) * 10
    image, label = tf.train.slice_input_producer([images, labels], num_epochs=1, shuffle=True, seed=1)
    _init(sess)
    rows = _drain(sess, [image, label])
    assert sorted(int(lbl) for _, lbl in rows) == list(labels)
    for img, lbl in rows:
        np.testing.assert_array_equal(img, images[lbl // 10])


def test_batch_keeps_order_and_allows_a_smaller_final_batch(sess):
    value = tf.train.range_input_producer(7, num_epochs=1, shuffle=False).dequeue()
    [batch] = tf.train.batch([value], 3, allow_smaller_final_batch=True)  # a list in, a list out
    _init(sess)
    assert [b.tolist() for b in _drain(sess, batch)] == [[0, 1, 2], [3, 4, 5], [6]]


def test_batch_of_a_dict_with_enqueue_many(sess):
    features = {"x": np.arange(8, dtype=np.float32).reshape(4, 2), "y": np.arange(4, dtype=np.int32)}
    batch = tf.train.batch(features, 2, enqueue_many=True, capacity=10)
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    out = sess.run(batch)
    assert set(out) == {"x", "y"} and out["x"].shape == (2, 2)
    assert out["x"][0, 0] == 2 * out["y"][0]
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)


def test_dynamic_pad_pads_variable_lengths(sess):
    source = tf.PaddingFIFOQueue(10, [tf.int32], shapes=[[None]])
    x = tf.placeholder(tf.int32, [None])
    fill = source.enqueue([x])
    [batch] = tf.train.batch([source.dequeue()], 2, dynamic_pad=True)
    for row in ([1], [2, 3, 4]):
        sess.run(fill, {x: row})
    sess.run(source.close())
    out = _drain(sess, batch)
    np.testing.assert_array_equal(out[0], [[1, 0, 0], [2, 3, 4]])
    with pytest.raises(ValueError, match="fully defined .* dynamic_pad"):
        tf.train.batch([tf.placeholder(tf.int32, [None])], 2)


def test_shuffle_batch_mixes_and_loses_nothing(sess):
    value = tf.train.range_input_producer(40, num_epochs=1, shuffle=False).dequeue()
    [batch] = tf.train.shuffle_batch([value], 8, capacity=30, min_after_dequeue=10, seed=3,
                                   allow_smaller_final_batch=True)
    _init(sess)
    got = np.concatenate(_drain(sess, batch))
    assert sorted(got.tolist()) == list(range(40))
    assert got.tolist() != list(range(40))


def test_batch_join_merges_several_sources(sess):
    first = tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
    second = tf.add(tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue(), 100)
    [batch] = tf.train.batch_join([[first], [second]], 2, allow_smaller_final_batch=True)
    _init(sess)
    got = sorted(np.concatenate(_drain(sess, batch)).tolist())
    assert got == [0, 1, 2, 3, 100, 101, 102, 103]


def test_limit_epochs_raises_out_of_range_after_the_limit(sess):
    limited = tf.train.limit_epochs(tf.constant(7), num_epochs=2)
    _init(sess)
    assert [sess.run(limited) for _ in range(2)] == [7, 7]
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(limited)
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(tf.constant(1), 0)


def test_shuffle_batch_join_draws_from_every_source(sess):
    first = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    second = tf.add(tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue(), 100)
    [batch] = tf.train.shuffle_batch_join([[first], [second]], 5, capacity=20, min_after_dequeue=5, seed=2,
                                          allow_smaller_final_batch=True)
    _init(sess)
    got = np.concatenate(_drain(sess, batch)).tolist()
    assert sorted(got) == list(range(10)) + list(range(100, 110))


# ---- readers ----------------------------------------------------------------------------------------------
def _file_queue(sess, paths):
    queue = tf.FIFOQueue(len(paths) + 1, tf.string, shapes=[])
    sess.run(queue.enqueue_many([[str(p) for p in paths]]))
    sess.run(queue.close())
    return queue


def _read_all(sess, fetch):
    out = []
    with pytest.raises(tf.errors.OutOfRangeError):
        while True:
            out.append(sess.run(fetch))
    return out


def test_text_line_reader_reads_lines_file_after_file(sess, tmp_path):
    (tmp_path / "a.csv").write_text("header\n1,2\n3,4\n")
    (tmp_path / "b.csv").write_text("header\r\n5,6\r\n")
    queue = _file_queue(sess, [tmp_path / "a.csv", tmp_path / "b.csv"])
    reader = tf.TextLineReader(skip_header_lines=1)
    records = _read_all(sess, reader.read(queue))
    assert [(k.decode(), v) for k, v in records] == [(f"{tmp_path / 'a.csv'}:2", b"1,2"),
                                                     (f"{tmp_path / 'a.csv'}:3", b"3,4"),
                                                     (f"{tmp_path / 'b.csv'}:2", b"5,6")]
    assert sess.run([reader.num_records_produced(), reader.num_work_units_completed()]) == [3, 2]
    sess.run(reader.reset())
    assert sess.run(reader.num_records_produced()) == 0


def test_read_up_to_stops_at_the_end_of_each_file(sess, tmp_path):
    for name, n in (("x", 3), ("y", 1)):
        (tmp_path / name).write_text("".join(f"{name}{i}\n" for i in range(n)))
    queue = _file_queue(sess, [tmp_path / "x", tmp_path / "y"])
    keys, values = tf.TextLineReader().read_up_to(queue, 2)
    batches = [v.tolist() for _, v in _read_all(sess, [keys, values])]
    assert batches == [[b"x0", b"x1"], [b"x2"], [b"y0"]]


def test_whole_file_identity_and_fixed_length_readers(sess, tmp_path):
    import gzip
    (tmp_path / "w").write_bytes(b"\x00binary\xff")
    raw = b"HD" + bytes(range(10)) + b"F"
    (tmp_path / "fixed").write_bytes(raw)
    (tmp_path / "fixed.gz").write_bytes(gzip.compress(raw))
    whole = tf.WholeFileReader().read(_file_queue(sess, [tmp_path / "w"]))
    assert _read_all(sess, whole) == [[str(tmp_path / "w").encode(), b"\x00binary\xff"]]
    identity = tf.IdentityReader().read(_file_queue(sess, ["work-1", "work-2"]))
    assert [v for _, v in _read_all(sess, identity)] == [b"work-1", b"work-2"]
    for path, encoding in ((tmp_path / "fixed", None), (tmp_path / "fixed.gz", "GZIP")):
        reader = tf.FixedLengthRecordReader(4, header_bytes=2, footer_bytes=1, hop_bytes=3, encoding=encoding)
        values = [v for _, v in _read_all(sess, reader.read(_file_queue(sess, [path])))]
        assert values == [bytes([0, 1, 2, 3]), bytes([3, 4, 5, 6]), bytes([6, 7, 8, 9])]


def test_a_missing_file_fails_one_read_and_reading_goes_on(sess, tmp_path):
    (tmp_path / "ok").write_text("fine\n")
    queue = _file_queue(sess, [tmp_path / "missing", tmp_path / "ok"])
    key, value = tf.TextLineReader().read(queue)
    with pytest.raises(tf.errors.NotFoundError, match="missing; No such file or directory"):  # TF's message
        sess.run(value)
    assert sess.run(value) == b"fine"


def test_threads_sharing_a_reader_get_every_record_once(sess, tmp_path):
    """Many short files: reads race at every file boundary (two threads serving at once once lost a file)."""
    from thread_helpers import start
    paths = []
    for f in range(120):
        paths.append(tmp_path / f"part{f}")
        paths[-1].write_text("".join(f"{f}-{i}\n" for i in range(3)))
    queue = _file_queue(sess, paths)
    key, value = tf.TextLineReader().read(queue)
    workers = [start(_read_all, sess, value) for _ in range(4)]
    got = [v for w in workers for v in w.finish(30)]
    assert sorted(got) == sorted(f"{f}-{i}".encode() for f in range(120) for i in range(3))


def test_a_read_goes_past_thousands_of_empty_files(sess, tmp_path):
    """Work units that come at once are taken in a loop, not by recursion."""
    paths = []
    for f in range(3000):
        paths.append(tmp_path / f"empty{f}")
        paths[-1].write_text("")
    (tmp_path / "last").write_text("found\n")
    reader = tf.TextLineReader()
    key, value = reader.read(_file_queue(sess, paths + [tmp_path / "last"]))
    assert sess.run(value) == b"found"
    assert sess.run(reader.num_work_units_completed()) == 3000
