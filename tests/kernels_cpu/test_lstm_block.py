"""contrib.rnn's LSTMBlockCell and LSTMBlockFusedCell against the equivalent core LSTM in real TF (TF 2 has no
contrib: same weights, by role), with TF 1.15's contrib variable names (read from its lstm_ops.py); base64 and
contrib.layers.one_hot_encoding against TF (programs in tests/fixtures/tf1/lstm_block_programs.py)."""

import numpy as np
import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf

PROGRAMS = programs_module("lstm_block_programs").PROGRAMS
EXPECTED = load("lstm_block")


def _run(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            return run(sess), tf.global_variables()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_lstm_block_program_matches_tf1(name):
    got, _ = _run(name)
    assert_matches(got, EXPECTED[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)


@pytest.mark.parametrize("name, names", [
    ("block_cell", ["rnn/lstm_cell/bias:0", "rnn/lstm_cell/kernel:0"]),
    ("block_cell_stacked_lengths", [
        f"rnn/multi_rnn_cell/cell_{i}/lstm_cell/{v}:0" for i in (0, 1)
        for v in ("w_i_diag", "w_f_diag", "w_o_diag", "kernel", "bias")]),
    ("fused_cell", ["lstm_fused_cell/bias:0", "lstm_fused_cell/kernel:0"]),
    ("fused_cell_list_peephole_clip", [f"lstm_fused_cell/{v}:0"
                                       for v in ("w_i_diag", "w_f_diag", "w_o_diag", "kernel", "bias")]),
])
def test_variable_names_are_tf_contribs(name, names):
    _, variables = _run(name)
    assert sorted(v.name for v in variables) == sorted(names)


def test_a_second_block_cell_gets_its_own_scope_and_reuse_shares_it():
    x = tf.zeros([2, 3])
    a, b = tf.contrib.rnn.LSTMBlockCell(4), tf.contrib.rnn.LSTMBlockCell(4)
    state = a.zero_state(2, tf.float32)
    a(x, state)
    b(x, state)
    with tf.variable_scope("shared"):
        c = tf.contrib.rnn.LSTMBlockCell(4)
        c(x, state)
        c(x, state)
    assert sorted(v.name for v in tf.global_variables()) == [
        "lstm_cell/bias:0", "lstm_cell/kernel:0", "lstm_cell_1/bias:0", "lstm_cell_1/kernel:0",
        "shared/lstm_cell/bias:0", "shared/lstm_cell/kernel:0"]


def test_fused_cell_refuses_what_contrib_refuses():
    cell = tf.contrib.rnn.LSTMBlockFusedCell(3)
    with pytest.raises(ValueError, match="either initial_state or dtype"):
        cell(tf.zeros([4, 2, 3]))
    with pytest.raises(ValueError, match="\\[time, batch, depth\\]"):
        tf.contrib.rnn.LSTMBlockFusedCell(3)(tf.zeros([4, 3]), dtype=tf.float32)
    with pytest.raises(ValueError, match="\\[batch, depth\\]"):
        tf.contrib.rnn.LSTMBlockCell(3)(tf.zeros([4, 2, 3]), (tf.zeros([4, 3]), tf.zeros([4, 3])))


def test_base64_refuses_the_standard_alphabet_and_a_dangling_character():
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.decode_base64(tf.constant(["YWI", "YWI="]))), [b"ab", b"ab"])
        for bad in ("ab+c", "a/bc", "abcde", "YW=I"):
            with pytest.raises(tf.errors.InvalidArgumentError, match="web-safe"):
                sess.run(tf.io.decode_base64(tf.constant(bad)))
