"""tf.layers.batch_normalization against numpy: batch statistics when training, moving statistics otherwise,
moving-average update ops in GraphKeys.UPDATE_OPS (TF1's formula, Bessel-corrected for 4-D inputs as TF1's
fused path), a bool tensor for ``training``, variable sharing, and training with the update ops."""

import numpy as np
import pytest

import tensorweave as tf

RNG = np.random.default_rng(4)


def reference(x, axis, gamma, beta, eps=1e-3, mean=None, var=None):
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    if mean is None:
        mean, var = x.mean(axes), x.var(axes)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("shape, axis", [((8, 3), -1), ((4, 5, 5, 3), 3), ((4, 3, 5, 5), 1), ((6, 4, 3), 1)])
def test_training_normalizes_with_batch_moments_and_moves_the_averages(shape, axis, sess):
    x = tf.placeholder(tf.float64, shape)
    gamma, beta = RNG.uniform(0.5, 2, shape[axis]), RNG.normal(size=shape[axis])
    y = tf.layers.batch_normalization(x, axis=axis, momentum=0.9, training=True,
                                      gamma_initializer=tf.constant_initializer(gamma),
                                      beta_initializer=tf.constant_initializer(beta))
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    assert sorted(v.name for v in tf.trainable_variables()) == ["batch_normalization/beta:0",
                                                                 "batch_normalization/gamma:0"]
    moving = [v for v in tf.global_variables() if "moving" in v.name]
    assert [v.name for v in moving] == ["batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"]
    sess.run(tf.global_variables_initializer())
    data = RNG.normal(loc=2.0, scale=3.0, size=shape)
    got, _ = sess.run([y, updates], {x: data})
    np.testing.assert_allclose(got, reference(data, axis, gamma, beta), rtol=1e-10, atol=1e-10)
    axes = tuple(i for i in range(len(shape)) if i != axis % len(shape))
    n = data.size / shape[axis]
    variance = data.var(axes) * (n / (n - 1) if len(shape) == 4 else 1.0)
    mean_v, var_v = sess.run(moving)
    np.testing.assert_allclose(mean_v, 0.1 * data.mean(axes), rtol=1e-10)
    np.testing.assert_allclose(var_v, 0.9 + 0.1 * variance, rtol=1e-10)


def test_inference_uses_the_moving_statistics(sess):
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.layers.batch_normalization(x, epsilon=0.01, moving_mean_initializer=tf.constant_initializer([1.0, -1.0]),
                                      moving_variance_initializer=tf.constant_initializer([4.0, 0.25]))
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    sess.run(tf.global_variables_initializer())
    data = np.array([[3.0, 0.0], [1.0, -1.0]], np.float32)
    np.testing.assert_allclose(sess.run(y, {x: data}), (data - [1.0, -1.0]) / np.sqrt(np.array([4.0, 0.25]) + 0.01),
                               rtol=1e-6)


def test_training_as_a_bool_tensor(sess):
    x = tf.placeholder(tf.float64, [None, 3])
    training = tf.placeholder(tf.bool, [])
    y = tf.layers.batch_normalization(x, training=training, momentum=0.5)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
    sess.run(tf.global_variables_initializer())
    data = RNG.normal(size=(5, 3)) + 4.0
    ones = np.ones(3)
    out, _ = sess.run([y, updates], {x: data, training: False})
    np.testing.assert_allclose(out, reference(data, -1, ones, 0 * ones, mean=0 * ones, var=ones))
    np.testing.assert_array_equal(sess.run(moving_mean), np.zeros(3))  # nothing moves when not training
    out, _ = sess.run([y, updates], {x: data, training: True})
    np.testing.assert_allclose(out, reference(data, -1, ones, 0 * ones))
    np.testing.assert_allclose(sess.run(moving_mean), 0.5 * data.mean(0))


def test_reuse_shares_the_variables_and_errors_are_clear():
    x = tf.placeholder(tf.float32, [None, 4])
    tf.layers.batch_normalization(x, name="bn")
    tf.layers.batch_normalization(x, name="bn", reuse=True, training=True)
    assert len(tf.global_variables()) == 4
    with pytest.raises(ValueError, match="already exists"):
        tf.layers.batch_normalization(x, name="bn")
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        tf.layers.batch_normalization(x, axis=2)
    with pytest.raises(ValueError, match="must be known"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [None, None]))


def test_training_with_the_update_ops_learns_and_tracks_the_data_statistics(sess):
    tf.set_random_seed(7)  # the dense layers' initial weights: unseeded, about 1 start in 10 did not learn enough
    x = tf.placeholder(tf.float32, [None, 2])
    labels = tf.placeholder(tf.int32, [None])
    training = tf.placeholder_with_default(False, [])
    hidden = tf.layers.batch_normalization(tf.layers.dense(x, 8), training=training, momentum=0.8)
    logits = tf.layers.dense(tf.nn.relu(hidden), 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
    rng = np.random.default_rng(7)
    data = (rng.normal(size=(256, 2)) * [10.0, 0.1] + [50.0, -3.0]).astype(np.float32)  # wildly different scales
    target = ((data[:, 0] - 50.0) / 10.0 - (data[:, 1] + 3.0) / 0.1 > 0).astype(np.int32)
    sess.run(tf.global_variables_initializer())
    for _ in range(300):
        sess.run(train, {x: data, labels: target, training: True})
    accuracy = (sess.run(logits, {x: data}).argmax(1) == target).mean()  # inference: moving statistics
    assert accuracy > 0.95
    for _ in range(40):  # the weights stay: the moving mean settles on this layer's batch mean (0.8**40 ~ 1e-4)
        sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS), {x: data, training: True})
    moving_mean = sess.run([v for v in tf.global_variables() if "moving_mean" in v.name][0])
    dense_out = sess.run(tf.get_default_graph().get_tensor_by_name("dense/BiasAdd:0"), {x: data})
    np.testing.assert_allclose(moving_mean, dense_out.mean(0), rtol=1e-3, atol=1e-3)
