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


@pytest.mark.parametrize("kind", ["depthwise", "separable", "conv3d", "pool3d", "depth_to_space"])
def test_channels_first_gives_the_channels_last_numbers(kind):
    """TF's CPU kernels take only channels-last for these ops, so NCHW/NCDHW are checked against NHWC/NDHWC."""
    rng = np.random.RandomState(4)
    if kind in ("conv3d", "pool3d"):
        x = rng.randn(2, 4, 5, 3, 2)
        to_first, to_last = (0, 4, 1, 2, 3), (0, 2, 3, 4, 1)
    else:
        x = rng.randn(2, 4, 6, 4)
        to_first, to_last = (0, 3, 1, 2), (0, 2, 3, 1)
    w = rng.randn(2, 3, 4, 2)

    def build(value, fmt):
        first = fmt.startswith("NC")
        if kind == "depthwise":
            return tf.nn.depthwise_conv2d(value, w, [1, 1, 2, 1] if first else [1, 2, 1, 1], "SAME", rate=None,
                                          data_format=fmt)
        if kind == "separable":
            return tf.nn.separable_conv2d(value, w, rng.randn(1, 1, 8, 3) * 0 + 0.5, [1, 1, 1, 1], "VALID",
                                          rate=[2, 1], data_format=fmt)
        if kind == "conv3d":
            return tf.nn.conv3d(value, np.ones([2, 2, 2, 2, 3]), [1, 1, 1, 2, 2] if first else [1, 1, 2, 2, 1],
                                "SAME", data_format=fmt)
        if kind == "pool3d":
            return [tf.nn.max_pool3d(value, [2, 2, 2], [2, 2, 1], "SAME", data_format=fmt),
                    tf.nn.avg_pool3d(value, 3, 1, "SAME", data_format=fmt)]
        return tf.nn.space_to_depth(tf.nn.depth_to_space(value, 2, data_format=fmt) * 2.0, 2, data_format=fmt)

    xt = tf.constant(x)
    last = build(xt, "NDHWC" if x.ndim == 5 else "NHWC")
    first = build(tf.transpose(xt, to_first), "NCDHW" if x.ndim == 5 else "NCHW")
    last, first = (v if isinstance(v, list) else [v] for v in (last, first))
    grads_last = tf.gradients(tf.add_n([tf.reduce_sum(t * t) for t in last]), xt)
    grads_first = tf.gradients(tf.add_n([tf.reduce_sum(t * t) for t in first]), xt)
    with tf.Session() as sess:
        last, first, grads_last, grads_first = sess.run([last, first, grads_last, grads_first])
    for a, b in zip(last, first):
        np.testing.assert_allclose(np.transpose(b, to_last), a, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(grads_first[0], grads_last[0], rtol=1e-10, atol=1e-10)
