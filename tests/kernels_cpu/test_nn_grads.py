"""tf.nn gradients against float64 finite differences (first and, for the gradient ops, second order)."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.testing import check_gradients

RNG = np.random.default_rng(1)


def _away_from_kinks(shape, kinks=(0.0,), margin=0.05):
    """Random values no closer than ``margin`` to a kink, where finite differences would straddle it."""
    x = RNG.uniform(-3, 8, size=shape)
    for k in kinks:
        near = np.abs(x - k) < margin
        x[near] = k + np.where(x[near] >= k, margin, -margin) * 2
    return x


ACTIVATIONS = {
    "relu": (tf.nn.relu, (0.0,)),
    "relu6": (tf.nn.relu6, (0.0, 6.0)),
    "elu": (tf.nn.elu, (0.0,)),
    "selu": (tf.nn.selu, (0.0,)),
    "softplus": (tf.nn.softplus, ()),
    "softsign": (tf.nn.softsign, (0.0,)),
    "leaky_relu": (lambda x: tf.nn.leaky_relu(x, alpha=0.3), (0.0,)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradients(name):
    fn, kinks = ACTIVATIONS[name]
    check_gradients(fn, None, inputs=[_away_from_kinks((3, 5), kinks)])


@pytest.mark.parametrize("name", ["Relu", "Relu6", "Elu", "Selu", "Softplus", "Softsign", "LeakyRelu"])
def test_activation_gradient_ops_have_gradients(name):
    """Second derivatives: each XGrad op is differentiable in both inputs (EluGrad/SeluGrad take the output)."""
    kinks = {"Relu6": (0.0, 6.0), "Softplus": ()}.get(name, (0.0,))
    check_gradients(lambda dy, source: apply_op(f"{name}Grad", [dy, source]), None,
                    inputs=[RNG.standard_normal((2, 4)), _away_from_kinks((2, 4), kinks)])


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_and_log_softmax_gradients(axis):
    check_gradients(lambda x: tf.nn.softmax(x, axis=axis), [(3, 4)])
    check_gradients(lambda x: tf.nn.log_softmax(x, axis=axis), [(3, 4)])


@pytest.mark.parametrize("data_format,shape", [("NHWC", (2, 2, 3, 4)), ("NCHW", (2, 4, 2, 3)), ("NHWC", (3, 4))])
def test_bias_add_gradients_and_second_order(data_format, shape):
    check_gradients(lambda x, b: tf.nn.bias_add(x, b, data_format=data_format), [shape, (4,)])
    check_gradients(lambda g: apply_op("BiasAddGrad", [g], {"data_format": data_format}), [shape])


def test_l2_loss_l2_normalize_moments_batch_norm_gradients():
    check_gradients(tf.nn.l2_loss, [(3, 4)])
    check_gradients(lambda x: tf.nn.l2_normalize(x, axis=1), [(3, 4)])
    check_gradients(lambda x: tf.nn.moments(x, [0])[0], [(4, 3)])
    check_gradients(lambda x: tf.nn.moments(x, [0, 1])[1], [(4, 3)])
    check_gradients(lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3),
                    None, inputs=[RNG.standard_normal((4, 3)), RNG.standard_normal(3), RNG.uniform(0.5, 2, 3),
                                  RNG.standard_normal(3), RNG.standard_normal(3)])


def test_softmax_cross_entropy_gradients():
    labels = np.abs(RNG.standard_normal((3, 5)))
    labels /= labels.sum(1, keepdims=True)
    check_gradients(lambda x: tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x), [(3, 5)])
    check_gradients(lambda x, z: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x), None,
                    inputs=[RNG.standard_normal((3, 5)), labels])
    check_gradients(lambda x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=np.ones((2, 3, 4)) / 3, logits=x,
                                                                         dim=1), [(2, 3, 4)])


def test_softmax_cross_entropy_v1_stops_the_label_gradient():
    labels = tf.constant(np.full((2, 3), 1 / 3))
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=tf.zeros([2, 3], tf.float64))
    assert tf.gradients(loss, labels) == [None]
    loss_v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=tf.zeros([2, 3], tf.float64))
    assert tf.gradients(loss_v2, labels)[0] is not None


def test_sparse_softmax_cross_entropy_gradients():
    labels = np.array([0, 4, 2])
    check_gradients(lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x), [(3, 5)])
    check_gradients(lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels.reshape(1, 3), logits=x),
                    [(1, 3, 5)])


def test_cross_entropy_second_derivatives():
    """The gradient of the gradient (a Hessian-vector product) goes through the fused op's backprop output."""
    labels = np.array([1, 0])
    v = RNG.standard_normal((2, 3))

    def hvp_sparse(x):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x)
        (g,) = tf.gradients(tf.reduce_sum(loss), [x])
        return tf.gradients(tf.reduce_sum(g * v), [x])[0]

    def hvp_dense(x):
        loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=np.eye(3)[labels], logits=x)
        (g,) = tf.gradients(tf.reduce_sum(loss), [x])
        return tf.gradients(tf.reduce_sum(g * v), [x])[0]

    x0 = RNG.standard_normal((2, 3))
    with tf.Session() as sess:
        got_sparse, got_dense = sess.run([hvp_sparse(tf.constant(x0)), hvp_dense(tf.constant(x0))])
    e = np.exp(x0 - x0.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    want = p * v - p * (p * v).sum(1, keepdims=True)  # (diag(p) - p p^T) v per row
    np.testing.assert_allclose(got_sparse, want, atol=1e-12)
    np.testing.assert_allclose(got_dense, want, atol=1e-12)


def test_sigmoid_and_weighted_cross_entropy_gradients():
    z = RNG.uniform(0, 1, (3, 4))
    check_gradients(lambda x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x), [(3, 4)])
    check_gradients(lambda x, t: tf.nn.sigmoid_cross_entropy_with_logits(labels=t, logits=x), None,
                    inputs=[RNG.standard_normal((3, 4)), z])
    check_gradients(lambda x: tf.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=2.5), [(3, 4)])
    zero = tf.constant(np.zeros(3))  # the gradient at logit 0 is exact: sigmoid(0) - z
    labels = np.array([0.0, 0.5, 1.0])
    grad = tf.gradients(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=zero), zero)[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), 0.5 - labels)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_gradients_through_shards(strategy):
    ids = np.array([[4, 0], [1, 4]])
    check_gradients(lambda a, b: tf.nn.embedding_lookup([a, b], ids, partition_strategy=strategy), [(3, 2), (2, 2)])
    check_gradients(lambda a: tf.nn.embedding_lookup(a, ids), [(5, 3)])


def test_dynamic_partition_and_stitch_gradients():
    partitions = np.array([1, 0, 1, 1], np.int32)
    check_gradients(lambda d: tf.dynamic_partition(d, partitions, 2)[1], [(4, 2)])
    check_gradients(lambda a, b: tf.dynamic_stitch([[0, 3], [1, 2]], [a, b]), [(2, 3), (2, 3)])


def test_top_k_gradient_goes_to_the_picked_positions():
    x = RNG.permutation(24).reshape(2, 3, 4) / 4.0  # distinct values
    check_gradients(lambda v: tf.nn.top_k(v, 2)[0], None, inputs=[x])


def test_dropout_gradient_is_the_mask_over_keep_prob(sess):
    x = tf.constant(RNG.standard_normal((50, 20)))
    y = tf.nn.dropout(x, keep_prob=0.7, seed=2)
    (grad,) = tf.gradients(tf.reduce_sum(y), [x])
    got_y, got_grad = sess.run([y, grad])
    np.testing.assert_allclose(got_grad, (got_y != 0) / 0.7)


@pytest.mark.parametrize("radius", [0, 2, 5])
def test_local_response_normalization_gradient(radius):
    check_gradients(lambda x: tf.nn.local_response_normalization(x, radius, bias=1.5, alpha=0.3, beta=0.75),
                    [(2, 2, 2, 6)])


def test_sampled_losses_gradients():
    labels = np.array([[1], [4]])
    values = (np.array([0, 3, 5]), np.array([[0.5], [0.2]], np.float32), np.array([0.3, 0.4, 0.6], np.float32))
    check_gradients(lambda w, b, x: tf.nn.nce_loss(w, b, labels, x, 3, 6, sampled_values=values),
                    [(6, 3), (6,), (2, 3)])
    check_gradients(lambda w, b, x: tf.nn.sampled_softmax_loss(w, b, labels, x, 3, 6, sampled_values=values),
                    [(6, 3), (6,), (2, 3)])
