"""tf.nn's depthwise, separable, atrous and 3-D convolutions and pooling, and tf.layers' convolution and pooling
layers (functions and classes), against TF1's numbers: variable names and shapes, outputs, and the gradients
w.r.t. the input and every weight (programs in tests/fixtures/tf1/conv_layers_programs.py, run by real TensorFlow
for the fixture)."""

import importlib.util

import numpy as np
import pytest
from tf1_fixtures import FOLDER, array, load

import tensorweave as tf


def _programs():
    spec = importlib.util.spec_from_file_location("conv_layers_programs", FOLDER / "conv_layers_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PROGRAMS


PROGRAMS = _programs()
EXPECTED = load("conv_layers")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_conv_program_matches_tf1(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    want = EXPECTED[name]
    for key in ("names", "shapes", "trainable", "out_shapes"):
        assert got[key] == want[key], f"{name}: {key}"
    for key in ("outputs", "grads"):
        assert len(got[key]) == len(want[key])
        for i, (g, w) in enumerate(zip(got[key], want[key])):
            np.testing.assert_allclose(g, array(w), rtol=2e-5, atol=2e-5, err_msg=f"{name}: {key}[{i}]")


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(EXPECTED)
