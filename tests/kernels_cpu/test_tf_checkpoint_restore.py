"""Checkpoints of real TensorFlow restored and run here (tests/fixtures/tf1/make_tf_checkpoints.py), the
graph-free readers on them, Saver writing TensorFlow's format, and the round trip through real TensorFlow when
an interpreter with it is at hand ($TENSORWEAVE_TF_PYTHON or /work/tf-venv/bin/python)."""

import importlib.util
import json
import os
import shutil
import subprocess
import textwrap

import numpy as np
import pytest
from tf1_fixtures import FOLDER, NO_TF_REASON, array, load, tf_python

import tensorweave as tf
from tensorweave.formats import checkpoint_format, tf_bundle

CASES = load("tf_checkpoints")
CHECKPOINTS = FOLDER / "tf_checkpoints"


def _programs():
    spec = importlib.util.spec_from_file_location("tf_checkpoints_programs", FOLDER / "tf_checkpoints_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROGRAMS = _programs()


@pytest.mark.parametrize("partitions", [3, 1, 2])
def test_encoder_restored_from_tensorflow_gives_its_output(partitions):
    """TF saved the embedding in three parts; restored whole, in three or in two parts the output is TF's."""
    case = CASES["encoder"]
    tokens = tf.placeholder(tf.int32, [None, PROGRAMS.LENGTH])
    output = PROGRAMS.encoder(tf, tokens, partitions)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(str(CHECKPOINTS / "encoder")))
        got = sess.run(output, {tokens: array(case["tokens"], np.int32)})
    np.testing.assert_allclose(got, array(case["output"]), rtol=1e-5, atol=1e-5)


def test_every_dtype_restores_into_variables():
    tensors = CASES["dtypes"]["tensors"]
    names = ["floats", "scope/doubles", "int32_scalar", "int64s", "bools", "strings", "string_scalar", "empty"]
    made = {}
    for name in names:
        saved = tensors[name]
        initial = np.zeros(saved["shape"], saved["dtype"]) if saved["dtype"] != "string" else \
            np.full(saved["shape"], b"?", dtype=object)
        made[name] = tf.Variable(initial, name=name)
    whole = tf.get_variable("partitioned", [7, 4])
    saver = tf.train.Saver(list(made.values()) + [whole])
    with tf.Session() as sess:
        saver.restore(sess, str(CHECKPOINTS / CASES["dtypes"]["prefix"]))
        values = sess.run(made)
        np.testing.assert_array_equal(sess.run(whole), array(tensors["partitioned"]["value"], np.float32))
    for name in names:
        saved = tensors[name]
        if saved["dtype"] == "string":
            assert [v.decode("latin-1") for v in np.reshape(values[name], -1)] == saved["value"]
        else:
            np.testing.assert_array_equal(values[name], np.reshape(array(saved["value"], saved["dtype"]),
                                                                   saved["shape"]))


def test_two_shards_restore():
    tensors = CASES["sharded"]["tensors"]
    a = tf.Variable(np.zeros(4, np.float32), name="on_cpu0")
    b = tf.Variable(np.zeros([3, 2], np.int64), name="on_cpu1")
    c = tf.get_variable("partitioned_cpu1", [5, 2], tf.float64, partitioner=tf.fixed_size_partitioner(3))
    saver = tf.train.Saver([a, b, c])
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(str(CHECKPOINTS / "sharded")))
        got_a, got_b, got_c = sess.run([a, b, c.as_tensor()])
    np.testing.assert_array_equal(got_a, array(tensors["on_cpu0"]["value"]))
    np.testing.assert_array_equal(got_b, array(tensors["on_cpu1"]["value"]))
    np.testing.assert_array_equal(got_c, array(tensors["partitioned_cpu1"]["value"]))


def test_graph_free_readers():
    directory = str(CHECKPOINTS / "dtypes")
    tensors = CASES["dtypes"]["tensors"]
    assert tf.train.list_variables(directory) == sorted((n, t["shape"]) for n, t in tensors.items())
    np.testing.assert_array_equal(tf.train.load_variable(directory, "int64s:0"), [2 ** 40, -3])
    reader = tf.train.NewCheckpointReader(os.path.join(directory, "model.ckpt-1"))
    assert reader.has_tensor("partitioned") and not reader.has_tensor("partitioned/part_0")
    assert reader.get_variable_to_shape_map()["empty"] == [0, 3]
    assert reader.get_variable_to_dtype_map()["halfs"] is tf.float16
    assert reader.get_tensor("global_step") == 1  # the first of the two saves
    with pytest.raises(tf.errors.NotFoundError, match="'nope' not found"):
        reader.get_tensor("nope")


def test_damaged_checkpoint_fails_restore_naming_the_file(tmp_path):
    shutil.copytree(CHECKPOINTS / "encoder", tmp_path / "encoder")
    prefix = str(tmp_path / "encoder" / "model.ckpt")
    with open(prefix + ".data-00000-of-00001", "r+b") as f:
        f.seek(100)
        f.write(b"\x00\x01\x02\x03")
    PROGRAMS.encoder(tf, tf.placeholder(tf.int32, [None, PROGRAMS.LENGTH]))
    saver = tf.train.Saver()
    with tf.Session() as sess, pytest.raises(tf.errors.DataLossError, match=r"model\.ckpt\.data-00000-of-00001"):
        saver.restore(sess, prefix)
    os.remove(prefix + ".data-00000-of-00001")
    assert tf.train.latest_checkpoint(str(tmp_path / "encoder")) is None


def test_restores_past_a_tensor_of_a_dtype_tensorweave_lacks(tmp_path):
    prefix = str(tmp_path / "m")
    checkpoint_format.write_checkpoint(prefix, [("a", "", np.ones(2, np.float32), tf.float32),
                                                ("b", "", np.arange(3.0), tf.float64)], "tensorflow")
    index, shards = tf_bundle.read_index_entries(prefix)
    index[b"a"].dtype = 11  # DT_QINT8, as quantized checkpoints hold
    (tmp_path / "m.index").write_bytes(tf_bundle.index_bytes(index, shards))
    b = tf.Variable(np.zeros(3), name="b")
    with tf.Session() as sess:
        tf.train.Saver([b]).restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(b), np.arange(3.0))
    a = tf.Variable(np.zeros(2, np.float32), name="a")
    with tf.Session() as sess, pytest.raises(tf.errors.UnimplementedError, match="'a'.*qint8"):
        tf.train.Saver([a]).restore(sess, prefix)


# ---- writing TensorFlow's format ---------------------------------------------------------------------------
def _model():
    weights = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="dense/kernel")
    words = tf.Variable(np.array([b"a", b"\x00b", b""], dtype=object), name="words")
    table = tf.get_variable("table", [5, 2], partitioner=tf.fixed_size_partitioner(2),
                            initializer=tf.random_uniform_initializer(seed=1))
    return weights, words, table


def test_saver_writes_tensorflows_format_and_restores_it(tmp_path):
    weights, words, table = _model()
    saver = tf.train.Saver(checkpoint_format="tensorflow", max_to_keep=1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run([weights, words, table.as_tensor()])
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=2)
        assert tf_bundle.is_tf_checkpoint(path)
        assert sorted(f for f in os.listdir(tmp_path) if f.startswith("model")) == [
            "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index", "model.ckpt-2.meta"]
        sess.run(tf.global_variables_initializer())
        sess.run(weights.assign(tf.zeros([2, 3])))
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        got = sess.run([weights, words, table.as_tensor()])
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)
    assert tf.train.list_variables(str(tmp_path)) == [("dense/kernel", [2, 3]), ("table", [5, 2]), ("words", [3])]


@pytest.mark.parametrize("same_prefix", [False, True])
def test_a_crash_before_the_index_rename_leaves_no_mixed_checkpoint(tmp_path, monkeypatch, same_prefix):
    """A new step's checkpoint fails whole and the previous stays; re-saving one prefix (TF's data file names
    are fixed) fails with no checkpoint at it rather than the old index over the new data."""
    v = tf.Variable(np.arange(3.0), name="v")
    saver = tf.train.Saver(checkpoint_format="tensorflow")
    real_commit = checkpoint_format.commit

    def crash_on_index(tmp, path):
        if path.endswith(".index"):
            raise OSError("simulated crash before the index rename")
        real_commit(tmp, path)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        good = saver.save(sess, str(tmp_path / "m"), global_step=None if same_prefix else 1)
        sess.run(v.assign([7.0, 8.0, 9.0]))
        monkeypatch.setattr(checkpoint_format, "commit", crash_on_index)
        with pytest.raises(tf.errors.OpError, match="simulated crash"):
            saver.save(sess, str(tmp_path / "m"), global_step=None if same_prefix else 2)
        monkeypatch.undo()
    assert not [f for f in os.listdir(tmp_path) if ".tempstate" in f or f.startswith("m-2")]
    if same_prefix:
        assert not tf.train.checkpoint_exists(good) and tf.train.latest_checkpoint(str(tmp_path)) is None
    else:
        assert tf.train.latest_checkpoint(str(tmp_path)) == good
        np.testing.assert_array_equal(tf.train.load_variable(good, "v"), np.arange(3.0))


def test_sharded_save_in_tensorflows_format(tmp_path):
    with tf.device("/cpu:0"):
        a = tf.Variable(np.arange(3.0), name="a")
    with tf.device("/cpu:1"):
        b = tf.get_variable("b", [4, 2], partitioner=tf.fixed_size_partitioner(2),
                            initializer=tf.random_uniform_initializer(seed=2))
    saver = tf.train.Saver(sharded=True, checkpoint_format="tensorflow")
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(b.as_tensor())
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
    assert sorted(f for f in os.listdir(tmp_path) if f.startswith("model.ckpt.data")) == [
        "model.ckpt.data-00000-of-00002", "model.ckpt.data-00001-of-00002"]
    np.testing.assert_array_equal(tf.train.load_variable(path, "b"), expected)
    np.testing.assert_array_equal(tf.train.load_variable(path, "a"), np.arange(3.0))


def test_the_format_travels_with_the_meta_graph(tmp_path):
    tf.Variable(np.arange(3.0), name="v")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = tf.train.Saver(checkpoint_format="tensorflow").save(sess, str(tmp_path / "m"), global_step=1)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(first + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, first)
            second = saver.save(sess, str(tmp_path / "m"), global_step=2)
    assert tf_bundle.is_tf_checkpoint(second)
    np.testing.assert_array_equal(tf.train.load_variable(second, "v"), np.arange(3.0))


def test_format_from_the_environment(tmp_path, monkeypatch):
    tf.Variable(1.0, name="v")
    monkeypatch.setenv("TENSORWEAVE_CHECKPOINT_FORMAT", "tensorflow")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert tf_bundle.is_tf_checkpoint(saver.save(sess, str(tmp_path / "m")))
    monkeypatch.setenv("TENSORWEAVE_CHECKPOINT_FORMAT", "tf")
    with pytest.raises(ValueError, match=r"\$TENSORWEAVE_CHECKPOINT_FORMAT is 'tf'"):
        tf.train.Saver()


# ---- with real TensorFlow ------------------------------------------------------------------------------------
_RESTORE_IN_TF = textwrap.dedent("""
    import json, sys
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    weights = tf.get_variable("dense/kernel", [2, 3])
    words = tf.Variable(["", "", ""], name="words")
    table = tf.get_variable("table", [5, 2], partitioner=tf.fixed_size_partitioner(3))
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, tf.train.latest_checkpoint(sys.argv[1]))
        w, s, t = sess.run([weights, words, table.as_tensor()])
    print(json.dumps({"weights": w.tolist(), "words": [v.decode("latin-1") for v in s], "table": t.tolist()}))
""")


@pytest.mark.skipif(tf_python() is None, reason=NO_TF_REASON)
def test_real_tensorflow_restores_what_tensorweave_wrote(tmp_path):
    weights, words, table = _model()
    saver = tf.train.Saver(checkpoint_format="tensorflow")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run([weights, words, table.as_tensor()])
        saver.save(sess, str(tmp_path / "model.ckpt"), global_step=7)
    proc = subprocess.run([tf_python(), "-c", _RESTORE_IN_TF, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_array_equal(got["weights"], expected[0])
    assert got["words"] == [v.decode("latin-1") for v in expected[1]]
    np.testing.assert_array_equal(np.float32(got["table"]), expected[2])
