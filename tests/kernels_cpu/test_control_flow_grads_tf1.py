"""Gradients through tf.cond and tf.while_loop against TF1's numbers, for every way a value enters a branch or
a loop (the programs are in tests/fixtures/tf1/cf_grads_programs.py, run by real TensorFlow for the fixture).

Why the older control-flow gradient tests missed dead gradients of variables read inside a cond: they all
differentiated with respect to fed placeholders (``check_gradients``), whose values enter a branch through a
float Switch. The untaken side of a float Switch gets a zero gradient that is live exactly when that side
runs, so the Merge of both sides is always live. A variable read inside a branch enters it as its resource
handle, and handles were not "trainable", so the untaken side got no zero: the handle's Switch merged the
taken side's gradient with itself, a gradient that is dead whenever that branch is not taken. Summed with
the other branch's (or any other use's) gradient, the whole gradient was dead, and an optimizer's update
silently did not run. The only tests with variables had loops and no cond.
"""

import importlib.util

import numpy as np
import pytest
from tf1_fixtures import FOLDER, array, load

import tensorweave as tf


def _programs():
    spec = importlib.util.spec_from_file_location("cf_grads_programs", FOLDER / "cf_grads_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PROGRAMS


PROGRAMS = _programs()
EXPECTED = load("cf_grads")


def _compare(got, want, where):
    """``got`` as ``run`` returned it (dicts and lists of fetched values) against the recorded ``want``."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for k in want:
            _compare(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(got, (list, tuple)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{i}]")
    elif isinstance(want, str):
        assert got == want, where
    else:
        np.testing.assert_allclose(np.asarray(got, np.float64), array(want), rtol=2e-5, atol=2e-6, err_msg=where)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradients_match_tf1(name):
    run = PROGRAMS[name](tf)
    with tf.Session() as sess:
        got = run(sess)
    _compare(got, EXPECTED[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)
