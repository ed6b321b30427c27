"""tf.data transformations beyond the TF fixtures: experimental helpers, files that are damaged, caches that must
be recomputed, generators with nested structures, and the leniencies documented in docs/api.md."""

import os

import crc32c
import numpy as np
import pytest
from tf1_fixtures import FOLDER

import tensorweave as tf


def _drain(sess, element, feed=None, limit=1000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element, feed))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("the iterator did not end")


def _values(dataset):
    x = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return _drain(sess, x)


def _write_tfrecords(path, records):
    import importlib.util
    spec = importlib.util.spec_from_file_location("tf_data_programs", FOLDER / "tf_data_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_tfrecords_with(crc32c.crc32c)(path, records, "")


def test_parallel_interleave_and_prefetch_to_device_keep_the_plain_order():
    def inner(x):
        return tf.data.Dataset.range(x).map(lambda y: x * 10 + y)

    base = tf.data.Dataset.range(1, 6)
    plain = _values(base.interleave(inner, cycle_length=2, block_length=2))
    parallel = _values(base.apply(tf.data.experimental.parallel_interleave(inner, cycle_length=2, block_length=2,
                                                                            sloppy=True)))
    on_device = _values(base.apply(tf.data.experimental.prefetch_to_device("/gpu:0")))
    assert parallel == plain and on_device == [1, 2, 3, 4, 5]


def test_unbatch_helper_and_apply_checks_its_result():
    assert _values(tf.data.Dataset.range(5).batch(2).apply(tf.data.experimental.unbatch())) == [0, 1, 2, 3, 4]
    with pytest.raises(TypeError, match="must return a Dataset"):
        tf.data.Dataset.range(3).apply(lambda ds: 3)


def test_matching_files_is_sorted(tmp_path):
    for name in ("b.txt", "a.txt", "c.bin"):
        (tmp_path / name).write_text("")
    with tf.Session() as sess:
        found = sess.run(tf.matching_files(str(tmp_path / "*.txt")))
    assert [os.path.basename(f.decode()) for f in found] == ["a.txt", "b.txt"]


def test_a_damaged_tfrecord_is_data_loss_after_the_good_records(tmp_path):
    path = str(tmp_path / "d.tfrecord")
    _write_tfrecords(path, [b"good", b"damaged"])
    data = bytearray(open(path, "rb").read())
    data[-6] ^= 0xFF  # a byte of the second record's data
    open(path, "wb").write(bytes(data))
    x = tf.data.TFRecordDataset(path).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(x) == b"good"
        with pytest.raises(tf.errors.DataLossError, match="corrupted record"):
            sess.run(x)


def test_filenames_fed_at_initialization(tmp_path):
    paths = []
    for i in range(2):
        paths.append(str(tmp_path / f"{i}.txt"))
        open(paths[-1], "w").write(f"file {i}\n")
    names = tf.placeholder(tf.string, [None])
    it = tf.data.TextLineDataset(names).make_initializable_iterator()
    x = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {names: paths[::-1]})
        assert _drain(sess, x) == [b"file 1", b"file 0"]


def test_memory_cache_is_recomputed_after_reinitialization():
    counter = tf.Variable(0, dtype=tf.int64)
    ds = tf.data.Dataset.range(2).map(lambda x: x + 0 * tf.assign_add(counter, 1)).cache().repeat(3)
    it = ds.make_initializable_iterator()
    x = it.get_next()
    with tf.Session() as sess:
        sess.run(counter.initializer)
        for expected_calls in (2, 4):
            sess.run(it.initializer)
            assert _drain(sess, x) == [0, 1] * 3
            assert sess.run(counter) == expected_calls  # one pass computed per initialization, then replayed


def test_generator_with_dict_elements_args_and_strings():
    def gen(n, prefix):
        for i in range(n):
            yield {"id": i, "name": prefix.decode() + str(i), "pair": np.array([i, -i])}

    ds = tf.data.Dataset.from_generator(gen, {"id": tf.int32, "name": tf.string, "pair": tf.int64},
                                        {"id": [], "name": [], "pair": [2]}, args=(2, "n"))
    got = _values(ds.padded_batch(2, {"id": [], "name": [], "pair": [3]}))
    assert got[0]["name"].tolist() == [b"n0", b"n1"] and got[0]["pair"].tolist() == [[0, 0, 0], [1, -1, 0]]
    assert ds.output_shapes["pair"].as_list() == [2]


def test_string_components_pad_with_empty_strings():
    ds = tf.data.Dataset.from_tensor_slices(np.array([b"a", b"b", b"c"])).map(lambda s: tf.stack([s, s]))
    got = _values(ds.batch(1).unbatch().padded_batch(2, [3]))
    assert got[0].tolist() == [[b"a", b"a", b""], [b"b", b"b", b""]]


def test_integer_tensors_of_another_dtype_are_cast_for_counts():
    n = tf.placeholder(tf.int32, [])
    it = tf.data.Dataset.range(n).batch(tf.constant(2)).make_initializable_iterator()
    x = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {n: 3})
        assert [v.tolist() for v in _drain(sess, x)] == [[0, 1], [2]]


def test_filter_with_a_captured_placeholder_and_constants_returned_by_map():
    limit = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.range(6).filter(lambda x: x < limit).map(lambda x: (x, 7.5))
    it = ds.make_initializable_iterator()
    x = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {limit: 2})
        assert _drain(sess, x) == [(0, 7.5), (1, 7.5)]


def test_string_elements_come_out_as_bytes_as_in_tf():
    names = tf.constant(["a.png", "b.png"])  # the core keeps a str constant's items as str
    assert _values(tf.data.Dataset.from_tensor_slices(names)) == [b"a.png", b"b.png"]
    assert _values(tf.data.Dataset.from_tensors(names).map(lambda s: s[::-1]))[0].tolist() == [b"b.png", b"a.png"]


@pytest.mark.parametrize("build", [
    lambda ds: ds.shuffle(5, seed=1).repeat(3).skip(3).take(25).batch(4),
    lambda ds: ds.repeat(2).shuffle(7, seed=2).batch(6, drop_remainder=True),
    lambda ds: ds.skip(7).batch(3).concatenate(ds.skip(-1).batch(2)),
    lambda ds: ds.take(5).repeat().take(12).batch(5).unbatch(),
    lambda ds: ds.shuffle(20, seed=3, reshuffle_each_iteration=False).repeat(2).batch(7),
    lambda ds: ds.repeat(5).shuffle(3, seed=4).batch(10),  # slots drawn several times within one batch
])
def test_batches_of_slices_gather_what_stacking_the_slices_gives(build):
    """Slices of from_tensor_slices (repeated, shuffled, taken, skipped) are batched by one gather per component;
    a map in between makes every element a tensor of its own, batched by stacking: the same seeds must give
    the same batches either way."""
    data = (np.arange(12 * 2).reshape(12, 2), np.array([str(i).encode() for i in range(12)], dtype=object))
    gathered = _values(build(tf.data.Dataset.from_tensor_slices(data)))
    stacked = _values(build(tf.data.Dataset.from_tensor_slices(data).map(lambda a, b: (a, b))))
    assert len(gathered) == len(stacked) > 0
    for (a1, b1), (a2, b2) in zip(gathered, stacked):
        assert np.asarray(a1).tolist() == np.asarray(a2).tolist()
        assert np.asarray(b1).tolist() == np.asarray(b2).tolist()


def test_the_first_shuffled_element_is_uniform_over_the_buffer():
    """TF's buffer semantics: the first element out is drawn uniformly from the first ``buffer_size`` inputs
    (the support is checked against TF in test_data_tf1; here the frequencies, over 200 fixed seeds)."""
    firsts = [tf.data.Dataset.range(10).shuffle(4, seed=s).make_one_shot_iterator().get_next() for s in range(200)]
    with tf.Session() as sess:
        counts = np.bincount(sess.run(firsts), minlength=10)
    assert counts[4:].sum() == 0 and all(30 <= c <= 70 for c in counts[:4]), counts


def test_matching_files_sees_files_made_after_the_first_run(tmp_path):
    found = tf.matching_files(str(tmp_path / "*.txt"))
    with tf.Session() as sess:
        assert sess.run(found).tolist() == []
        (tmp_path / "new.txt").write_text("")
        assert len(sess.run(found)) == 1  # not folded into a constant when the plan was built


def test_list_files_works_with_a_one_shot_iterator(tmp_path):
    (tmp_path / "a.txt").write_text("")
    x = tf.data.Dataset.list_files(str(tmp_path / "*.txt")).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(x).endswith(b"a.txt")
