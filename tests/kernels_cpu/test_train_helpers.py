"""tf.train's helpers and optimizers against TF1: the programs in tests/fixtures/tf1/train_helpers_programs.py run
here and in real TensorFlow (train_helpers.json): ExponentialMovingAverage's averages and names, and the Adadelta,
Ftrl, ProximalAdagrad, AdagradDA and ProximalGradientDescent updates of a dense weight and of an embedding
(IndexedSlices gradients with repeated ids) over several steps, with their slots and slot names."""

import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf


PROGRAMS = programs_module("train_helpers_programs").PROGRAMS
CASES = load("train_helpers")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_tf1(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    assert_matches(got, CASES[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(CASES)
