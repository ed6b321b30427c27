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


def _sparse(sequences):
    indices = [[b, i] for b, seq in enumerate(sequences) for i in range(len(seq))]
    return tf.SparseTensor(tf.constant(indices, tf.int64), tf.constant([c for s in sequences for c in s], tf.int32),
                           tf.constant([len(sequences), max(map(len, sequences))], tf.int64))


def test_ctc_loss_refuses_dense_labels_blank_labels_and_too_little_time():
    x = tf.zeros([3, 1, 4])
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.nn.ctc_loss(tf.constant([[1, 2]]), x, [3])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="outside \\[0, num_classes - 1 = 3\\)"):
            sess.run(tf.nn.ctc_loss(_sparse([[1, 3]]), x, [3]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="required: 3, available: 2"):
            sess.run(tf.nn.ctc_loss(_sparse([[0, 1, 2]]), x, [2]))


def test_conv_ops_with_unknown_batch_and_a_layer_in_a_while_loop():
    """Shapes unknown until run time, and a layer built inside tf.while_loop's body (its variables made once)."""
    x = tf.placeholder(tf.float32, [None, 4, 4, 2])
    y = tf.layers.conv2d_transpose(x, 3, 2, strides=2, padding="same")
    z = tf.nn.separable_conv2d(x, tf.ones([2, 2, 2, 1]), tf.ones([1, 1, 2, 3]), [1, 1, 1, 1], "SAME")
    assert y.shape.as_list() == [None, 8, 8, 3] and z.shape.as_list() == [None, 4, 4, 3]
    layer = tf.layers.Conv1D(2, 2, padding="same", name="loop_conv")
    seq = tf.ones([1, 5, 2])
    _, out = tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, layer(s)), [0, seq])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        y_value, z_value, out_value = sess.run([y, z, out], {x: np.ones([3, 4, 4, 2])})
    assert y_value.shape == (3, 8, 8, 3) and z_value.shape == (3, 4, 4, 3) and out_value.shape == (1, 5, 2)
    assert [v.op.name for v in tf.global_variables() if "loop_conv" in v.op.name] == ["loop_conv/kernel",
                                                                                      "loop_conv/bias"]
