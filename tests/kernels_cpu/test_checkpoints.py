"""Checkpoints: format round trips, Saver bookkeeping, atomic writes, corruption, crash mid-save, errors."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.formats import checkpoint_format
from tensorweave.ops import io_ops

ALL_DTYPES = [(tf.float16, np.float16), (tf.float32, np.float32), (tf.float64, np.float64), (tf.int8, np.int8),
              (tf.int32, np.int32), (tf.int64, np.int64), (tf.uint8, np.uint8), (tf.bool, np.bool_),
              (tf.complex64, np.complex64), (tf.complex128, np.complex128)]


def _value(np_type, shape, seed):
    rng = np.random.default_rng(seed)
    if np_type is np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(np_type, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np_type)
    if np.issubdtype(np_type, np.integer):
        return rng.integers(0, 100, shape).astype(np_type)
    return rng.standard_normal(shape).astype(np_type)


def _tensor_saver(values, **kwargs):
    """A Saver over constant tensors (saving works for tensors; restoring reads and verifies them)."""
    return tf.train.Saver({name: tf.constant(v, name=name) for name, v in values.items()}, **kwargs)


def test_save_v2_and_restore_v2_round_trip_every_dtype(sess, tmp_path):
    values = {f"t_{dt.name}": _value(np_type, (2, 3), i) for i, (dt, np_type) in enumerate(ALL_DTYPES)}
    values["words"] = np.array([b"alpha", b"", "\u00e9t\u00e9".encode()], dtype=object)
    values["scalar"] = np.float64(2.5)
    values["empty"] = np.zeros((0, 4), np.float32)
    prefix = str(tmp_path / "all")
    names = sorted(values)
    sess.run(io_ops.save_v2(prefix, names, [""] * len(names), [tf.constant(values[n]) for n in names]))
    dtypes = [tf.as_dtype(np.asarray(values[n]).dtype) if n != "words" else tf.string for n in names]
    restored = sess.run(io_ops.restore_v2(prefix, names, [""] * len(names), dtypes))
    for name, value in zip(names, restored):
        expected = np.asarray(values[name])
        assert value.dtype == expected.dtype and value.shape == expected.shape, name
        np.testing.assert_array_equal(value, expected)


def test_slices_of_one_tensor_are_assembled_and_cut(sess, tmp_path):
    full = np.arange(20, dtype=np.float32).reshape(5, 4)
    prefix = str(tmp_path / "sliced")
    sess.run(io_ops.save_v2(prefix, ["w", "w"], ["5 4 0,3:-", "5 4 3,2:-"], [full[:3], full[3:]]))
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "w"), full)
    assert tf.train.list_variables(prefix) == [("w", [5, 4])]
    part = sess.run(io_ops.restore_v2(prefix, ["w"], ["5 4 1,3:1,2"], [tf.float32]))[0]
    np.testing.assert_array_equal(part, full[1:4, 1:3])


def test_saver_keeps_max_to_keep_and_writes_the_state_file_last(sess, tmp_path):
    saver = _tensor_saver({"x": np.arange(3.0)}, max_to_keep=2)
    prefixes = [saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step) for step in (10, 20, 30)]
    assert prefixes == [str(tmp_path / f"model.ckpt-{s}") for s in (10, 20, 30)]
    assert saver.last_checkpoints == prefixes[1:]
    assert not tf.train.checkpoint_exists(prefixes[0]) and not os.path.exists(prefixes[0] + ".meta")
    assert all(tf.train.checkpoint_exists(p) for p in prefixes[1:])
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == prefixes[2]
    assert state.all_model_checkpoint_paths == prefixes[1:]
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[2]
    assert sorted(f for f in os.listdir(tmp_path) if ".tempstate" in f) == []


def test_relative_paths_in_the_state_file(sess, tmp_path):
    saver = _tensor_saver({"x": np.arange(3.0)}, save_relative_paths=True)
    saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    text = (tmp_path / "checkpoint").read_text()
    assert 'model_checkpoint_path: "model.ckpt-1"' in text
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-1")


def test_recover_last_checkpoints_lets_a_new_saver_continue_counting(sess, tmp_path):
    first = _tensor_saver({"x": np.arange(3.0)}, max_to_keep=2)
    for step in (1, 2):
        first.save(sess, str(tmp_path / "m"), global_step=step)
    second = _tensor_saver({"x": np.arange(3.0)}, max_to_keep=2)
    second.recover_last_checkpoints(tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths)
    second.save(sess, str(tmp_path / "m"), global_step=3)
    assert not tf.train.checkpoint_exists(str(tmp_path / "m-1"))
    assert second.last_checkpoints == [str(tmp_path / "m-2"), str(tmp_path / "m-3")]


def test_keep_checkpoint_every_n_hours_preserves_old_ones(sess, tmp_path):
    saver = _tensor_saver({"x": np.arange(3.0)}, max_to_keep=1, keep_checkpoint_every_n_hours=1e-9)
    for step in (1, 2, 3):
        time.sleep(0.01)
        saver.save(sess, str(tmp_path / "m"), global_step=step)
    assert all(tf.train.checkpoint_exists(str(tmp_path / f"m-{s}")) for s in (1, 2, 3))


def test_sharded_save_merges_into_one_checkpoint(sess, tmp_path):
    values = {"a": np.arange(4.0), "b": np.ones((2, 2), np.int32)}
    saver = _tensor_saver(values, sharded=True)
    prefix = saver.save(sess, str(tmp_path / "sharded"))
    assert tf.train.list_variables(prefix) == [("a", [4]), ("b", [2, 2])]
    assert not [f for f in os.listdir(tmp_path) if "_temp_" in f]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "b"), values["b"])


def test_re_saving_a_prefix_replaces_it_and_leaves_no_stale_data(sess, tmp_path):
    prefix = str(tmp_path / "same")
    x = tf.placeholder(tf.float32, [3])
    save = io_ops.save_v2(prefix, ["x"], [""], [x])
    for i in range(3):
        sess.run(save, {x: np.full(3, i, np.float32)})
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "x"), [2, 2, 2])
    assert len([f for f in os.listdir(tmp_path) if ".data-" in f]) == 1


def test_a_failure_between_write_and_rename_leaves_the_previous_checkpoint(sess, tmp_path, monkeypatch):
    saver = _tensor_saver({"x": np.arange(3.0)})
    good = saver.save(sess, str(tmp_path / "m"), global_step=1)
    state_before = (tmp_path / "checkpoint").read_text()
    real_commit = checkpoint_format.commit

    def crash_on_index(tmp, path):
        if path.endswith(".index"):
            raise OSError("simulated crash before the index rename")
        real_commit(tmp, path)

    monkeypatch.setattr(checkpoint_format, "commit", crash_on_index)
    with pytest.raises(tf.errors.OpError, match="simulated crash"):
        saver.save(sess, str(tmp_path / "m"), global_step=2)
    monkeypatch.undo()
    assert (tmp_path / "checkpoint").read_text() == state_before
    assert not tf.train.checkpoint_exists(str(tmp_path / "m-2"))
    assert tf.train.latest_checkpoint(str(tmp_path)) == good
    saver.restore(sess, good)
    assert not [f for f in os.listdir(tmp_path) if ".tempstate" in f]


def test_truncated_or_corrupted_data_raises_data_loss_naming_the_file(sess, tmp_path):
    saver = _tensor_saver({"x": np.arange(1000.0)})
    prefix = saver.save(sess, str(tmp_path / "m"))
    data = next(f for f in os.listdir(tmp_path) if ".data-" in f)
    path = tmp_path / data
    blob = path.read_bytes()
    path.write_bytes(blob[:-100])
    with pytest.raises(tf.errors.DataLossError, match=f"{data}.*truncated"):
        saver.restore(sess, prefix)
    corrupted = bytearray(blob)
    corrupted[len(blob) // 2] ^= 0xFF
    path.write_bytes(bytes(corrupted))
    with pytest.raises(tf.errors.DataLossError, match=f"{data}.*corrupted"):
        tf.train.load_variable(prefix, "x")
    (tmp_path / "m.index").write_bytes(b'{"format": "tensorweave-checkpoint/1", "crc32": 1, "bo')
    with pytest.raises(tf.errors.DataLossError, match=r"m\.index.*truncated or corrupted"):
        tf.train.list_variables(prefix)


def test_latest_checkpoint_falls_back_to_the_newest_intact_one(sess, tmp_path):
    saver = _tensor_saver({"x": np.arange(10.0)}, max_to_keep=3)
    prefixes = [saver.save(sess, str(tmp_path / "m"), global_step=s) for s in (1, 2, 3)]
    newest_data = next(f for f in os.listdir(tmp_path) if f.startswith("m-3.data-"))
    (tmp_path / newest_data).write_bytes(b"partial")
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[1]
    os.remove(prefixes[1] + ".index")
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[0]
    (tmp_path / "checkpoint").write_text("garbage that does not parse\n")
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefixes[0]


def test_missing_names_and_shape_mismatches_name_the_variable(tmp_path):
    def restore_into(values, prefix):
        with tf.Graph().as_default(), tf.Session() as s:
            _tensor_saver(values).restore(s, prefix)

    with tf.Graph().as_default(), tf.Session() as s:
        prefix = _tensor_saver({"a": np.zeros((2, 3), np.float32)}).save(s, str(tmp_path / "m"))
    with pytest.raises(tf.errors.NotFoundError, match="(?s)'b' not found in checkpoint.*var_list"):
        restore_into({"a": np.zeros((2, 3), np.float32), "b": np.zeros(1)}, prefix)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"'a' has shape \[2, 3\].*has shape \[3, 2\]"):
        restore_into({"a": np.zeros((3, 2), np.float32)}, prefix)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'a' is float32 in checkpoint.*float64"):
        restore_into({"a": np.zeros((2, 3))}, prefix)


def test_paths_that_are_not_prefixes_get_a_friendly_error(sess, tmp_path):
    saver = _tensor_saver({"x": np.arange(3.0)})
    prefix = saver.save(sess, str(tmp_path / "m"))
    data = next(str(tmp_path / f) for f in os.listdir(tmp_path) if ".data-" in f)
    for path, expected in ((prefix + ".index", "index file.*pass its prefix"),
                           (data, "data file.*pass its prefix"),
                           (str(tmp_path), "is a directory; pass a checkpoint prefix such as tf.train.latest_checkpoint")):
        with pytest.raises(ValueError, match=expected):
            saver.restore(sess, path)
    with pytest.raises(ValueError, match="not a valid checkpoint"):
        saver.restore(sess, str(tmp_path / "nothing_here"))
    with pytest.raises(ValueError, match="parent directory .* does not exist"):
        saver.save(sess, str(tmp_path / "missing_dir" / "m"))
    assert tf.train.list_variables(str(tmp_path)) == [("x", [3])]  # a directory means its latest checkpoint


def test_meta_graph_restores_into_a_program_that_did_not_build_the_model(tmp_path):
    with tf.Graph().as_default(), tf.Session() as s:
        saver = _tensor_saver({"x": np.arange(3.0)})
        tf.add_to_collection("outputs", tf.get_default_graph().get_tensor_by_name("x:0"))
        prefix = saver.save(s, str(tmp_path / "m"))
    with tf.Graph().as_default(), tf.Session() as s:
        restorer = tf.train.import_meta_graph(prefix + ".meta")
        restorer.restore(s, prefix)
        np.testing.assert_array_equal(s.run(tf.get_collection("outputs")[0]), np.arange(3.0))


_SAVING_LOOP = textwrap.dedent("""
    import os, sys
    import numpy as np
    import tensorweave as tf
    directory = os.path.dirname(sys.argv[1])
    for i in range(1, 100_000):
        with tf.Graph().as_default():
            saver = tf.train.Saver({"step": tf.constant(i, tf.int64), "big": tf.constant(np.full(1_000_000, float(i)))},
                                   max_to_keep=3)
            state = tf.train.get_checkpoint_state(directory)
            if state is not None:
                saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
            with tf.Session() as s:
                saver.save(s, sys.argv[1], global_step=i)
        print(i, flush=True)
""")


def test_killing_a_process_mid_save_leaves_a_valid_latest_checkpoint(tmp_path):
    script = tmp_path / "saving_loop.py"
    script.write_text(_SAVING_LOOP)
    prefix = str(tmp_path / "ckpt" / "m")
    os.makedirs(os.path.dirname(prefix))
    rng = np.random.default_rng(0)
    for _ in range(4):
        proc = subprocess.Popen([sys.executable, str(script), prefix], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip()  # at least one save completed
            time.sleep(rng.uniform(0.05, 0.3))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        latest = tf.train.latest_checkpoint(os.path.dirname(prefix))
        step = int(tf.train.load_variable(latest, "step"))
        assert latest.endswith(f"-{step}")
        np.testing.assert_array_equal(tf.train.load_variable(latest, "big"), np.full(1_000_000, float(step)))
        for kept in tf.train.get_checkpoint_state(os.path.dirname(prefix)).all_model_checkpoint_paths:
            if tf.train.checkpoint_exists(kept):
                assert int(tf.train.load_variable(kept, "step")) == int(kept.rsplit("-", 1)[1])


# ---- variables ------------------------------------------------------------------------------------------
def test_saver_saves_and_restores_variables(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
        step = tf.Variable(7, dtype=tf.int64, name="step", trainable=False)
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            prefix = saver.save(s, str(tmp_path / "model.ckpt"), global_step=step)
            s.run([w.assign(np.zeros((2, 3), np.float32)), step.assign(0)])
            saver.restore(s, prefix)
            np.testing.assert_array_equal(s.run(w), np.arange(6).reshape(2, 3))
            assert s.run(step) == 7
    assert prefix.endswith("model.ckpt-7")
    assert tf.train.list_variables(str(tmp_path)) == [("step", []), ("w", [2, 3])]
    with tf.Graph().as_default():
        w = tf.Variable(np.zeros((2, 3), np.float32), name="w")
        with tf.Session() as s:
            tf.train.Saver([w]).restore(s, prefix)  # restoring initializes: no initializer run needed
            np.testing.assert_array_equal(s.run(w), np.arange(6).reshape(2, 3))


def test_saver_var_list_as_dict_renames_and_partitioned_variables_save_as_one(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="local_name")
        parts = tf.get_variable("emb", shape=[6, 2], initializer=tf.constant_initializer(np.arange(12.0)),
                                partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            prefix = tf.train.Saver({"checkpoint_name": v}).save(s, str(tmp_path / "a"))
            emb_prefix = tf.train.Saver([parts]).save(s, str(tmp_path / "b"))
            full = s.run(tf.concat(list(parts), 0))
    assert tf.train.list_variables(prefix) == [("checkpoint_name", [2])]
    assert tf.train.list_variables(emb_prefix) == [("emb", [6, 2])]
    np.testing.assert_array_equal(tf.train.load_variable(emb_prefix, "emb"), full)


def test_a_damaged_checkpoint_changes_no_variable(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable(np.ones(1000), name="a")
        b = tf.Variable(np.ones(1000), name="b")
        saver = tf.train.Saver(sharded=False)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            prefix = saver.save(s, str(tmp_path / "m"))
            data = next(tmp_path / f for f in os.listdir(tmp_path) if ".data-" in f)
            blob = bytearray(data.read_bytes())
            blob[-10] ^= 0xFF
            data.write_bytes(bytes(blob))
            s.run([a.assign(np.zeros(1000)), b.assign(np.zeros(1000))])
            with pytest.raises(tf.errors.DataLossError, match="corrupted"):
                saver.restore(s, prefix)
            assert s.run(a).sum() == 0 and s.run(b).sum() == 0


def test_saver_without_variables_says_so():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="no variables to save"):
            tf.train.Saver()
        assert tf.train.Saver(allow_empty=True).save(None, "unused") is None


def test_latest_filename_names_a_separate_state_file(sess, tmp_path):
    saver = _tensor_saver({"x": np.arange(3.0)})
    saver.save(sess, str(tmp_path / "a"), latest_filename="a_state")
    saver.save(sess, str(tmp_path / "b"), latest_filename="b_state")
    assert tf.train.latest_checkpoint(str(tmp_path), "a_state") == str(tmp_path / "a")
    assert tf.train.get_checkpoint_state(str(tmp_path), "b_state").model_checkpoint_path == str(tmp_path / "b")
    assert not (tmp_path / "checkpoint").exists()
