"""``tf.losses`` weights of every shape against TF1 (tests/fixtures/tf1/make_loss_weights.py): values under each
reduction, and the same refusals (while building, or when the step runs for weights of unknown shape)."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

FIXTURE = load("loss_weights")
PROBLEMS, WEIGHTS = FIXTURE.pop("problems"), FIXTURE.pop("weights")


def build(case):
    problem = PROBLEMS[case["problem"]]
    inputs = {k: array(v, np.int32 if k == "labels" and problem["loss"] == "sparse_softmax_cross_entropy"
                       else np.float32) for k, v in problem["inputs"].items()}
    weights, feeds = array(WEIGHTS[case["weights"]], np.float32), {}
    if case["feed_weights"]:
        placeholder = tf.placeholder(tf.float32)
        feeds[placeholder] = weights
        weights = placeholder
    elif weights.ndim == 0:
        weights = float(weights)
    kwargs = dict(inputs, **problem["options"], weights=weights)
    if case["reduction"] is not None:
        kwargs["reduction"] = case["reduction"]
    return getattr(tf.losses, problem["loss"])(**kwargs), feeds


@pytest.mark.parametrize("name", sorted(FIXTURE))
def test_loss_with_weights_matches_tf1(name):
    case = FIXTURE[name]
    if "error" in case:
        error = ValueError if case["error"] == "ValueError" else tf.errors.InvalidArgumentError
        with pytest.raises(error) as info:
            loss, feeds = build(case)
            with tf.Session() as sess:
                sess.run(loss, feeds)
        assert "weights" in str(info.value).split("created at")[0], str(info.value)
        return
    loss, feeds = build(case)
    assert loss in tf.get_collection(tf.GraphKeys.LOSSES) or case["reduction"] == tf.losses.Reduction.NONE
    with tf.Session() as sess:
        value = sess.run(loss, feeds)
    assert np.shape(value) == tuple(case["shape"])
    np.testing.assert_allclose(value, array(case["value"]), rtol=2e-6, atol=1e-6)


def test_refusal_says_what_to_do():
    with pytest.raises(ValueError, match=r"weights of shape \(4, 1\) cannot be broadcast to losses of shape "
                                         r"\(4,\).*tf.squeeze\(weights, -1\)"):
        tf.losses.mean_squared_error(np.zeros(4), np.ones(4), weights=np.ones((4, 1)))


def test_weights_with_an_unknown_batch_size_are_checked_when_run():
    weights = tf.placeholder(tf.float32, [None])
    loss = tf.losses.mean_squared_error(np.zeros((2, 3)), np.ones((2, 3)), weights=tf.reshape(weights, [-1, 1]))
    with tf.Session() as sess:
        assert sess.run(loss, {weights: [1.0, 0.0]}) == pytest.approx(1.0)
        with pytest.raises(tf.errors.InvalidArgumentError, match="weights cannot be broadcast to losses"):
            sess.run(loss, {weights: [1.0, 0.0, 1.0]})
