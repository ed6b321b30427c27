"""tf.train.warm_start with vocabulary remapping against TF1 (programs in
tests/fixtures/tf1/warm_start_programs.py, values from make_warm_start.py): embeddings remapped by rows and output
layers by columns, partitioned, renamed, with OOV buckets and backup initializers; then the ops underneath
(GenerateVocabRemapping, LoadAndRemapMatrix) on what the fixture does not reach."""

import os

import numpy as np
import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf

module = programs_module("warm_start_programs")
CASES = load("warm_start")


@pytest.mark.parametrize("name", sorted(module.PROGRAMS))
def test_matches_tf1(name):
    with tf.Graph().as_default():
        run = module.PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    assert_matches(got, CASES[name], name)


def test_every_program_has_reference_values():
    assert sorted(module.PROGRAMS) == sorted(CASES)


def test_a_random_backup_initializer_fills_only_the_new_rows():
    with tf.Graph().as_default():
        paths = module._files(tf)
        emb = tf.get_variable("emb", [6, 2])
        tf.train.warm_start(paths["ckpt"], var_name_to_vocab_info={"emb": tf.train.VocabInfo(
            paths["new"], 5, 1, paths["old"], backup_initializer=tf.random_uniform_initializer(10.0, 11.0))})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(emb)
    np.testing.assert_array_equal(value[[0, 2, 4]], module.EMB[[2, 0, 3]])
    fresh = value[[1, 3, 5]]
    assert ((fresh >= 10.0) & (fresh < 11.0)).all() and len(np.unique(fresh)) == fresh.size


def test_the_files_are_read_when_the_initializer_runs():
    """As TF's ops: the vocabulary files are read by the initializer, not while building."""
    with tf.Graph().as_default():
        paths = module._files(tf)
        emb = tf.get_variable("emb", [5, 2])
        tf.train.warm_start(paths["ckpt"], var_name_to_vocab_info={"emb": tf.train.VocabInfo(
            paths["new"], 5, 0, paths["old"])})
        with open(paths["new"], "w") as f:
            f.write("kiwi\nbanana\nx\ny\nz\n")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(emb)
    np.testing.assert_array_equal(value, np.concatenate([module.EMB[[3, 1]], np.zeros((3, 2), np.float32)]))


def test_remapping_reads_lines_as_tf_and_says_what_is_wrong(tmp_path):
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("a\nb\na\n")
    new.write_text("b\r\nc\n")
    remapping, present = _remap(new, old, 0, 2, 2)
    too_many = _remap(new, old, 1, 2, 2)
    duplicated = _remap(new, old, 0, 2, -1)
    with tf.Session() as sess:
        assert sess.run(remapping).tolist() == [1, -1] and sess.run(present) == 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="has 2 lines"):
            sess.run(too_many)
        with pytest.raises(tf.errors.InvalidArgumentError, match="twice"):
            sess.run(duplicated)


def _remap(new, old, offset, count, old_size):
    from tensorweave.ops.checkpoint_remap_ops import generate_vocab_remapping
    return generate_vocab_remapping(str(new), str(old), offset, count, old_size)


def test_load_and_remap_matrix_counts_the_initializing_values(tmp_path):
    from tensorweave.ops.checkpoint_remap_ops import load_and_remap_matrix
    with tf.Graph().as_default():
        tf.get_variable("m", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, os.path.join(str(tmp_path), "model"))
    good = load_and_remap_matrix(prefix, "m", [1, -1], [2, -1, 0], [7.0, 8.0, 9.0, 10.0], 2, 3)
    short = load_and_remap_matrix(prefix, "m", [1, -1], [2, -1, 0], [7.0], 2, 3)
    outside = load_and_remap_matrix(prefix, "m", [5, -1], [], [7.0, 8.0], 2, 1)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(good), [[5.0, 7.0, 3.0], [8.0, 9.0, 10.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="1 initializing values for 4 new cells"):
            sess.run(short)
        with pytest.raises(tf.errors.InvalidArgumentError, match="outside 'm'"):
            sess.run(outside)


def test_warm_start_settings_hold_warm_starts_arguments():
    from tensorweave.train.warm_starting import WarmStartSettings
    settings = WarmStartSettings("/tmp/ckpt", var_name_to_vocab_info={"emb": tf.train.VocabInfo("n", 3, 0, "o")})
    assert settings.vars_to_warm_start == ".*" and settings.var_name_to_prev_var_name == {}
    assert settings.var_name_to_vocab_info["emb"].old_vocab_size == -1
    with pytest.raises(ValueError, match="ckpt_to_initialize_from"):
        WarmStartSettings("")
