"""tf.nn.rnn_cell and the RNN drivers against TF1's numbers: every cell, the wrappers, dynamic_rnn with lengths and
time-major inputs, bidirectional, static and raw RNNs and users' cells, each checked for its variable names,
outputs, final states and the gradients w.r.t. the inputs and every weight, plus checkpoint names and a few
training steps (programs in tests/fixtures/tf1/rnn_programs.py, run by real TensorFlow for the fixture)."""

import importlib.util

import numpy as np
import pytest
from tf1_fixtures import FOLDER, array, load

import tensorweave as tf


def _programs():
    spec = importlib.util.spec_from_file_location("rnn_programs", FOLDER / "rnn_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PROGRAMS


PROGRAMS = _programs()
EXPECTED = load("rnn")


def _compare(got, want, where):
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for k in want:
            _compare(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, str):
        assert got == want, where
    elif isinstance(want, list) and want and any(isinstance(w, (str, list, dict)) for w in want) and not (
            isinstance(got, np.ndarray)):
        assert len(got) == len(want), f"{where}: {len(got)} values, TF1 has {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{i}]")
    else:
        np.testing.assert_allclose(np.asarray(got, np.float64), array(want), rtol=2e-5, atol=2e-6, err_msg=where)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_rnn_program_matches_tf1(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    _compare(got, EXPECTED[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)
