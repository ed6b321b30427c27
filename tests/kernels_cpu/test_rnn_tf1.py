"""tf.nn.rnn_cell and the RNN drivers against TF1's numbers: every cell, the wrappers, dynamic_rnn with lengths and
time-major inputs, bidirectional, static and raw RNNs and users' cells, each checked for its variable names,
outputs, final states and the gradients w.r.t. the inputs and every weight, plus checkpoint names and a few
training steps (programs in tests/fixtures/tf1/rnn_programs.py, run by real TensorFlow for the fixture)."""

import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf


PROGRAMS = programs_module("rnn_programs").PROGRAMS
EXPECTED = load("rnn")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rnn_program_matches_tf1(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    assert_matches(got, EXPECTED[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)
