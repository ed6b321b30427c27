"""The example third-party plugin, installed from its own package, used from a graph."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import plugins

plugin = pytest.importorskip("tensorweave_example_plugin")


def _swish(x):
    return x / (1.0 + np.exp(-x))


def test_listed_with_distribution_ops_kernels_and_device():
    info = {p.name: p for p in plugins.list_plugins()}["example"]
    assert info.ok and info.distribution == "tensorweave-example-plugin"
    assert info.ops == ["Swish", "SwishGrad"]
    assert "Swish@CPU" in info.kernels and "Swish@TOY" in info.kernels
    assert info.devices == ["TOY"]


def test_op_runs_on_cpu_with_shape_inference():
    x = tf.placeholder(tf.float64, [None, 3])
    y = plugin.swish(x)
    assert y.shape.as_list() == [None, 3]
    data = np.linspace(-2, 2, 6).reshape(2, 3)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(y, {x: data}), _swish(data))


def test_op_on_the_plugin_device_copies_through_device_memory():
    x = tf.placeholder(tf.float32, [3])
    with tf.device("/device:TOY:0"):
        y = plugin.swish(x)
    with tf.Session() as s:
        np.testing.assert_allclose(s.run(y, {x: [-1.0, 0.0, 2.0]}), _swish(np.array([-1.0, 0.0, 2.0])), rtol=1e-6)
        toy = next(d for d in s.list_devices() if d.device_type == "TOY")
        assert toy.copies_in == 1 and toy.copies_out == 1


def test_plugin_gradient_matches_finite_differences():
    from tensorweave.testing import check_gradients
    assert check_gradients(plugin.swish, [(4,)]) < 1e-6


def test_plugin_op_checked_in_one_line():
    from tensorweave.testing import check_op
    assert check_op(plugin.swish, _swish, [[(3,)], [(2, 5)]]) == 4
