"""tf.metrics against TF1: the programs in tests/fixtures/tf1/metrics_programs.py run here and in real TensorFlow
(metrics.json); each compares the update op's and the value's results over three batches, the reset by
tf.local_variables_initializer(), and the names and collections of the metric variables."""

import numpy as np
import pytest
from tf1_fixtures import assert_matches, load, programs_module

import tensorweave as tf


PROGRAMS = programs_module("metrics_programs").PROGRAMS
CASES = load("metrics")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_metric_matches_tf1(name):
    want = CASES[name]
    with tf.Graph().as_default():
        run = PROGRAMS[name](tf)
        with tf.Session() as sess:
            got = run(sess)
    assert_matches(got, want, name, rtol=1e-5, atol=1e-6)


def test_every_program_has_reference_values():
    assert sorted(PROGRAMS) == sorted(CASES)


def test_bad_arguments_say_what_to_change():
    with tf.Graph().as_default():
        labels, predictions = tf.placeholder(tf.int64, [4]), tf.placeholder(tf.float32, [4])
        with pytest.raises(ValueError, match="Curve must be either ROC or PR"):
            tf.metrics.auc(labels, predictions, curve="roc")
        with pytest.raises(ValueError, match="summation_method"):
            tf.metrics.auc(labels, predictions, summation_method="simpson")
        with pytest.raises(ValueError, match="metrics_collections must be a list"):
            tf.metrics.mean(predictions, metrics_collections="m")
        with pytest.raises(ValueError, match="do not match labels"):
            tf.metrics.accuracy(labels, tf.placeholder(tf.int64, [5]))
        with pytest.raises(ValueError, match="cannot be broadcast"):
            tf.metrics.mean(tf.placeholder(tf.float32, [4, 3]), weights=tf.placeholder(tf.float32, [4, 2]))


def test_auc_refuses_predictions_outside_0_1_when_it_runs():
    with tf.Graph().as_default():
        labels, predictions = tf.placeholder(tf.int64, [None]), tf.placeholder(tf.float32, [None])
        _, update = tf.metrics.auc(labels, predictions)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"predictions must be in \[0, 1\]"):
                sess.run(update, {labels: [0, 1], predictions: [0.5, 1.5]})



def test_an_evaluation_loop_as_tf1_programs_write_it(tmp_path):
    """Accuracy of argmax predictions accumulated over batches in a MonitoredSession (whose scaffold runs the local
    initializer), then read once; a Saver leaves the metric variables out of the checkpoint."""
    rng = np.random.RandomState(3)
    batches = [(rng.normal(size=(5, 4)).astype(np.float32), rng.randint(0, 4, 5)) for _ in range(4)]
    with tf.Graph().as_default():
        logits, labels = tf.placeholder(tf.float32, [None, 4]), tf.placeholder(tf.int64, [None])
        weights = tf.Variable(np.eye(4, dtype=np.float32), name="weights")
        predictions = tf.argmax(tf.matmul(logits, weights), 1)
        accuracy, update = tf.metrics.accuracy(labels=labels, predictions=predictions)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "model"))
        with tf.train.MonitoredSession() as sess:
            for x, y in batches:
                sess.run(update, {logits: x, labels: y})
            got = sess.run(accuracy)
    want = np.mean(np.concatenate([np.argmax(x, 1) == y for x, y in batches]))
    assert got == pytest.approx(want)
    assert [name for name, _ in tf.train.list_variables(path)] == ["weights"]

