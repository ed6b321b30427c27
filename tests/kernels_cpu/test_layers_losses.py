"""tf.layers (dense, conv2d, pooling, flatten, dropout) and tf.losses, against numpy."""

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(11)


def _init(sess):
    sess.run(tf.global_variables_initializer())


# ---- layers ---------------------------------------------------------------------------------------------
def test_dense_computes_activation_of_xw_plus_b_with_tf1_names(sess):
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    out = tf.layers.dense(x, 5, activation=tf.nn.relu, bias_initializer=tf.constant_initializer(0.1))
    second = tf.layers.dense(out, 2, use_bias=False)
    assert [v.name for v in tf.trainable_variables()] == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0"]
    assert out.op.name.startswith("dense/") and out.shape.as_list() == [4, 5]
    _init(sess)
    kernel, bias, kernel2 = sess.run(tf.trainable_variables())
    want = np.maximum(x @ kernel + bias, 0)
    np.testing.assert_allclose(sess.run(out), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.run(second), want @ kernel2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bias, np.full(5, 0.1, np.float32))


def test_dense_on_rank_3_inputs_multiplies_the_last_axis(sess):
    x = tf.placeholder(tf.float64, [None, 3, 4])
    out = tf.layers.dense(x, 2)
    assert out.shape.as_list() == [None, 3, 2]
    _init(sess)
    value = RNG.standard_normal((2, 3, 4))
    kernel, bias = sess.run(tf.trainable_variables())
    np.testing.assert_allclose(sess.run(out, {x: value}), value @ kernel + bias)


def test_dense_layers_share_variables_by_name_and_reuse(sess):
    x = tf.constant(np.ones((1, 3), np.float32))
    a = tf.layers.dense(x, 2, name="fc")
    b = tf.layers.dense(x, 2, name="fc", reuse=True)
    with pytest.raises(ValueError, match="Variable fc/kernel already exists"):
        tf.layers.dense(x, 2, name="fc")
    with tf.variable_scope("tower"):
        tf.layers.dense(x, 2)
    with tf.variable_scope("tower", reuse=True):
        tf.layers.dense(x, 2)
    assert [v.name for v in tf.global_variables()] == ["fc/kernel:0", "fc/bias:0", "tower/dense/kernel:0",
                                                       "tower/dense/bias:0"]
    _init(sess)
    np.testing.assert_array_equal(*sess.run([a, b]))


def test_layer_objects_build_once_and_report_their_variables(sess):
    layer = tf.layers.Dense(3, kernel_regularizer=lambda w: 0.5 * tf.reduce_sum(w * w),
                            activity_regularizer=lambda out: tf.reduce_sum(out))
    x = tf.constant(RNG.standard_normal((2, 4)).astype(np.float32))
    y1, y2 = layer(x), layer(x)
    assert layer.built and layer.name == "dense" and len(layer.variables) == 2
    assert layer.trainable_variables == [layer.kernel, layer.bias] and len(tf.global_variables()) == 2
    losses = tf.losses.get_regularization_losses()
    assert len(losses) == 3 and len(layer.losses) == 2  # kernel regularizer once, activity once per call
    _init(sess)
    kernel = sess.run(layer.kernel)
    np.testing.assert_allclose(sess.run(losses[0]), 0.5 * (kernel ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(*sess.run([y1, y2]))
    with pytest.raises(ValueError, match="last dimension of the inputs to `Dense` should be defined"):
        tf.layers.dense(tf.placeholder(tf.float32, [2, None]), 3)


def _conv_numpy(x, k, stride, same):
    kh, kw = k.shape[:2]
    if same:
        oh, ow = -(-x.shape[1] // stride), -(-x.shape[2] // stride)
        ph = max((oh - 1) * stride + kh - x.shape[1], 0)
        pw = max((ow - 1) * stride + kw - x.shape[2], 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, k.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


@pytest.mark.parametrize("padding,stride", [("valid", 1), ("same", 1), ("same", 2)])
def test_conv2d_layer_matches_numpy(padding, stride, sess):
    x = RNG.standard_normal((2, 7, 6, 3))
    out = tf.layers.conv2d(x, 4, (3, 2), strides=stride, padding=padding, activation=tf.nn.relu)
    kernel_var, bias_var = tf.trainable_variables()
    assert kernel_var.name == "conv2d/kernel:0" and kernel_var.shape.as_list() == [3, 2, 3, 4]
    _init(sess)
    kernel, bias = sess.run([kernel_var, bias_var])
    want = np.maximum(_conv_numpy(x, kernel, stride, padding == "same") + bias, 0)
    np.testing.assert_allclose(sess.run(out), want, rtol=1e-10, atol=1e-12)


def test_pooling_flatten_and_channels_first(sess):
    x = RNG.standard_normal((2, 4, 6, 3))
    pooled = tf.layers.max_pooling2d(x, 2, 2)
    averaged = tf.layers.average_pooling2d(x, (2, 3), (2, 3))
    flat = tf.layers.flatten(pooled)
    assert pooled.op.name.startswith("max_pooling2d/") and flat.shape.as_list() == [2, 2 * 3 * 3]
    np.testing.assert_allclose(sess.run(pooled), x.reshape(2, 2, 2, 3, 2, 3).max(axis=(2, 4)))
    np.testing.assert_allclose(sess.run(averaged), x.reshape(2, 2, 2, 2, 3, 3).mean(axis=(2, 4)))
    np.testing.assert_allclose(sess.run(flat), sess.run(pooled).reshape(2, -1))
    nchw = tf.layers.flatten(np.transpose(x, (0, 3, 1, 2)), data_format="channels_first")
    np.testing.assert_allclose(sess.run(nchw), x.reshape(2, -1))
    unknown = tf.placeholder(tf.float64, [None, 4, 6, 3])
    assert tf.layers.flatten(unknown).shape.as_list() == [None, 72]
    with pytest.raises(ValueError, match="padding must be 'valid' or 'same'"):
        tf.layers.max_pooling2d(x, 2, 2, padding="full")


def test_dropout_only_when_training(sess):
    x = np.ones((200, 50), np.float32)
    np.testing.assert_array_equal(sess.run(tf.layers.dropout(x, 0.3)), x)
    dropped = sess.run(tf.layers.dropout(x, 0.3, training=True, seed=1))
    kept = dropped != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(dropped[kept], 1 / 0.7, rtol=1e-6)
    training = tf.placeholder(tf.bool, [])
    switchable = tf.layers.dropout(x, 0.5, training=training)
    np.testing.assert_array_equal(sess.run(switchable, {training: False}), x)
    assert (sess.run(switchable, {training: True}) == 0).any()


# ---- losses --------------------------------------------------------------------------------------------------
def _log_softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def test_softmax_cross_entropies_with_weights_and_smoothing(sess):
    logits = RNG.standard_normal((6, 4))
    labels = RNG.integers(0, 4, 6)
    onehot = np.eye(4)[labels]
    per_example = -(onehot * _log_softmax(logits)).sum(1)
    np.testing.assert_allclose(sess.run(tf.losses.softmax_cross_entropy(onehot, logits)), per_example.mean())
    np.testing.assert_allclose(sess.run(tf.losses.sparse_softmax_cross_entropy(labels, logits)), per_example.mean())
    np.testing.assert_allclose(sess.run(tf.losses.sparse_softmax_cross_entropy(labels[:, None], logits)),
                               per_example.mean())
    weights = np.array([1.0, 0.0, 2.0, 0.0, 1.0, 1.0])
    np.testing.assert_allclose(sess.run(tf.losses.softmax_cross_entropy(onehot, logits, weights=weights)),
                               (per_example * weights).sum() / 4, rtol=1e-6)
    smooth = onehot * 0.8 + 0.2 / 4
    np.testing.assert_allclose(sess.run(tf.losses.softmax_cross_entropy(onehot, logits, label_smoothing=0.2)),
                               -(smooth * _log_softmax(logits)).sum(1).mean(), rtol=1e-6)
    assert len(tf.losses.get_losses()) == 5
    with pytest.raises(ValueError, match="onehot_labels must not be None"):
        tf.losses.softmax_cross_entropy(None, logits)


def test_sigmoid_cross_entropy_and_regression_losses(sess):
    logits = RNG.standard_normal((3, 4))
    labels = RNG.integers(0, 2, (3, 4)).astype(np.float64)
    want = np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(sess.run(tf.losses.sigmoid_cross_entropy(labels, logits)), want.mean(), rtol=1e-6)
    predictions = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(sess.run(tf.losses.mean_squared_error(labels, predictions)),
                               ((predictions - labels) ** 2).mean(), rtol=1e-6)
    np.testing.assert_allclose(sess.run(tf.losses.absolute_difference(labels, predictions)),
                               np.abs(predictions - labels).mean(), rtol=1e-6)
    error = np.abs(predictions - labels)
    huber = np.where(error <= 0.5, 0.5 * error ** 2, 0.5 * 0.25 + 0.5 * (error - 0.5))
    np.testing.assert_allclose(sess.run(tf.losses.huber_loss(labels, predictions, delta=0.5)), huber.mean(),
                               rtol=1e-6)


@pytest.mark.parametrize("reduction,expected", [
    ("none", lambda l, w: l * w), ("weighted_sum", lambda l, w: (l * w).sum()),
    ("weighted_mean", lambda l, w: (l * w).sum() / np.broadcast_to(w, l.shape).sum()),
    ("weighted_sum_over_batch_size", lambda l, w: (l * w).sum() / l.size),
    ("weighted_sum_by_nonzero_weights", lambda l, w: (l * w).sum() / np.count_nonzero(np.broadcast_to(w, l.shape)))])
def test_reductions(reduction, expected, sess):
    losses = RNG.uniform(0, 1, (4, 3)).astype(np.float32)
    weights = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)
    got = sess.run(tf.losses.compute_weighted_loss(losses, weights, reduction=reduction))
    np.testing.assert_allclose(got, expected(losses, weights), rtol=1e-5)


def test_all_zero_weights_give_zero_not_nan(sess):
    loss = tf.losses.mean_squared_error(np.ones(3), np.zeros(3), weights=np.zeros(3))
    assert sess.run(loss) == 0.0


def test_loss_collections_and_total_loss(sess):
    with pytest.raises(ValueError, match="No losses found"):
        tf.losses.get_total_loss()
    assert sess.run(tf.losses.get_regularization_loss()) == 0.0
    tf.losses.mean_squared_error([1.0, 2.0], [1.0, 4.0])
    tf.losses.add_loss(tf.constant(3.0))
    tf.get_variable("w", initializer=[2.0], regularizer=lambda w: tf.reduce_sum(w))
    sess.run(tf.global_variables_initializer())
    assert sess.run(tf.losses.get_regularization_loss()) == 2.0
    assert sess.run(tf.losses.get_total_loss()) == 2.0 + 3.0 + 2.0
    assert sess.run(tf.losses.get_total_loss(add_regularization_losses=False)) == 5.0
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        tf.losses.compute_weighted_loss([1.0], reduction="average")
