"""tf.train's helpers and optimizers against TF1: the programs in tests/fixtures/tf1/train_helpers_programs.py run
here and in real TensorFlow (train_helpers.json): ExponentialMovingAverage's averages and names, and the Adadelta,
Ftrl, ProximalAdagrad, AdagradDA and ProximalGradientDescent updates of a dense weight and of an embedding
(IndexedSlices gradients with repeated ids) over several steps, with their slots and slot names."""

import importlib.util

import numpy as np
import pytest
from tf1_fixtures import FOLDER, array, load

import tensorweave as tf


def _programs():
    spec = importlib.util.spec_from_file_location("train_helpers_programs", FOLDER / "train_helpers_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PROGRAMS


PROGRAMS = _programs()
CASES = load("train_helpers")


def _numeric(value):
    try:
        return array(value, np.float64)
    except (ValueError, TypeError):
        return None


def _compare(got, want, where):
    """Dicts key by key, strings exactly, numbers (nested lists of one shape) within float32 rounding."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            _compare(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, str):
        assert got == want, where
    elif isinstance(want, list) and _numeric(want) is None:
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{where}[{i}]")
    else:
        np.testing.assert_allclose(np.asarray(got, np.float64), _numeric(want), rtol=2e-5, atol=2e-6, err_msg=where)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_tf1(name):
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    _compare(got, CASES[name], name)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(CASES)
