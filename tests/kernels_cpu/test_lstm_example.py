"""examples/lstm_sequence.py: the while_loop LSTM matches the unrolled model, gradients included, and learns."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tensorweave as tf

_PATH = pathlib.Path(__file__).resolve().parents[2] / "examples" / "lstm_sequence.py"
_spec = importlib.util.spec_from_file_location("lstm_sequence", _PATH)
lstm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lstm)


def test_adding_problem_data():
    inputs, lengths, targets = lstm.adding_problem(50, 10, np.random.default_rng(0))
    assert inputs.shape == (50, 10, 2) and lengths.min() >= 5 and lengths.max() <= 10
    assert (inputs[..., 1].sum(axis=1) == 2).all()
    np.testing.assert_allclose(targets, (inputs[..., 0] * inputs[..., 1]).sum(axis=1), rtol=1e-6)
    for b, n in enumerate(lengths):
        assert not inputs[b, n:].any()  # nothing after the sequence's end


def test_loop_lstm_and_its_gradients_match_the_unrolled_model(sess):
    rng = np.random.default_rng(3)
    max_len, units = 7, 5
    inputs_v, lengths_v, _ = lstm.adding_problem(4, max_len, rng)
    values = lstm.initial_parameters(2, units, rng, dtype=np.float64)
    values = {k: v + rng.normal(scale=0.3, size=v.shape) for k, v in values.items()}
    params = {k: tf.placeholder(tf.float64, v.shape) for k, v in values.items()}
    inputs = tf.placeholder(tf.float64, [None, max_len, 2])
    lengths = tf.placeholder(tf.int32, [None])
    feed = {params[k]: v for k, v in values.items()}
    feed.update({inputs: inputs_v.astype(np.float64), lengths: lengths_v})
    wrt = [inputs] + [params[k] for k in sorted(params)]
    results = []
    for unrolled in (None, max_len):
        prediction = lstm.predict(inputs, lengths, params, unrolled_steps=unrolled)
        loss = tf.reduce_sum(tf.square(prediction - 1.0))
        results.append(sess.run([prediction] + tf.gradients(loss, wrt), feed))
    for looped, unrolled in zip(*results):
        np.testing.assert_allclose(looped, unrolled, rtol=1e-9, atol=1e-12)
    assert np.abs(results[0][1]).sum() > 0


@pytest.mark.parametrize("length", [3, 7])
def test_sequences_stop_at_their_own_length(sess, length):
    """A sequence's prediction does not depend on padding after its end."""
    rng = np.random.default_rng(1)
    values = lstm.initial_parameters(2, 4, rng, dtype=np.float64)
    params = {k: tf.constant(v) for k, v in values.items()}
    inputs = tf.placeholder(tf.float64, [None, 7, 2])
    lengths = tf.placeholder(tf.int32, [None])
    prediction = lstm.predict(inputs, lengths, params)
    x = rng.uniform(size=(1, 7, 2))
    padded = x.copy()
    padded[:, length:] = rng.uniform(size=(1, 7 - length, 2))
    feeds = [{inputs: v, lengths: [length]} for v in (x, padded)]
    assert sess.run(prediction, feeds[0]) == pytest.approx(sess.run(prediction, feeds[1]))


def test_training_reduces_the_loss():
    history = lstm.train(steps=120, max_len=6, num_units=8, batch=32, learning_rate=0.02, eval_every=40,
                         target_accuracy=1.1, log=lambda line: None)
    assert [h["step"] for h in history] == [0, 40, 80, 120]
    assert history[-1]["loss"] < 0.5 * history[0]["loss"]
