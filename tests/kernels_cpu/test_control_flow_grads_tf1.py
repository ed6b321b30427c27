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

import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf


PROGRAMS = programs_module("cf_grads_programs").PROGRAMS
EXPECTED = load("cf_grads")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradients_match_tf1(name):
    run = PROGRAMS[name](tf)
    with tf.Session() as sess:
        got = run(sess)
    assert_matches(got, EXPECTED[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)
