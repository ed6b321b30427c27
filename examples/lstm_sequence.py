"""An LSTM written with tf.while_loop over variable-length sequences, trained on the adding problem.

Each example is a sequence of (value, marker) pairs whose length varies between ``max_len // 2`` and
``max_len``; the target is the sum of the two values whose marker is 1, one in each half of the
sequence, so the network must remember the first value across the sequence. The lengths are a tensor
fed with every batch: the loop runs ``max(lengths)`` iterations, and each sequence's state stops
changing after its own length. A prediction counts as correct within 0.04 of the target (the usual
threshold for this task; guessing the mean scores about 8%).

    python examples/lstm_sequence.py            # trains until 95% of a held-out set is correct
    python examples/lstm_sequence.py --steps 300 --max-len 20
"""

import argparse
import time

import numpy as np

import tensorweave as tf

TOLERANCE = 0.04


def adding_problem(batch, max_len, rng):
    """(inputs [batch, max_len, 2], lengths [batch], targets [batch]) for the adding problem."""
    lengths = rng.integers(max_len // 2, max_len + 1, size=batch)
    values = rng.uniform(0.0, 1.0, size=(batch, max_len))
    markers = np.zeros((batch, max_len))
    for b, n in enumerate(lengths):
        markers[b, rng.integers(0, n // 2)] = 1.0
        markers[b, rng.integers(n // 2, n)] = 1.0
    valid = np.arange(max_len)[None, :] < lengths[:, None]
    inputs = np.stack([values * valid, markers], axis=-1).astype(np.float32)
    targets = (values * markers).sum(axis=1).astype(np.float32)
    return inputs, lengths.astype(np.int32), targets


def initial_parameters(num_inputs, num_units, rng, dtype=np.float32):
    """LSTM weights [inputs + units, 4 * units] (gates i, f, o, g), forget bias 1, a linear read-out."""
    scale = 1.0 / np.sqrt(num_inputs + num_units)
    bias = np.zeros(4 * num_units)
    bias[num_units:2 * num_units] = 1.0
    return {"kernel": rng.uniform(-scale, scale, size=(num_inputs + num_units, 4 * num_units)).astype(dtype),
            "bias": bias.astype(dtype),
            "out_kernel": rng.uniform(-scale, scale, size=(num_units, 1)).astype(dtype),
            "out_bias": np.zeros(1, dtype)}


def lstm_cell(x, h, c, kernel, bias):
    z = tf.matmul(tf.concat([x, h], 1), kernel) + bias
    i, f, o, g = tf.split(z, 4, axis=1)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    return tf.sigmoid(o) * tf.tanh(c), c


def last_hidden_state(inputs, lengths, params, unrolled_steps=None):
    """The LSTM's hidden state after each sequence's last element, [batch, units].

    A tf.while_loop over t < max(lengths); with ``unrolled_steps`` the same cell is unrolled in Python
    instead (to check the loop against).
    """
    num_units = params["out_kernel"].shape[0]
    batch = tf.shape(inputs)[0]
    dtype = inputs.dtype
    h = c = tf.zeros(tf.stack([batch, num_units]), dtype=dtype)

    def step(t, h, c, x):
        new_h, new_c = lstm_cell(x, h, c, params["kernel"], params["bias"])
        alive = tf.expand_dims(tf.cast(tf.less(t, lengths), dtype), 1)  # finished sequences keep their state
        return new_h * alive + h * (1.0 - alive), new_c * alive + c * (1.0 - alive)

    if unrolled_steps is not None:
        for t in range(unrolled_steps):
            h, c = step(t, h, c, inputs[:, t, :])
        return h
    time_major = tf.TensorArray(dtype, size=tf.shape(inputs)[1]).unstack(tf.transpose(inputs, [1, 0, 2]))

    def body(t, h, c):
        h, c = step(t, h, c, time_major.read(t))
        return t + 1, h, c

    _, h, _ = tf.while_loop(lambda t, h, c: t < tf.reduce_max(lengths), body, [tf.constant(0), h, c])
    return h


def predict(inputs, lengths, params, unrolled_steps=None):
    h = last_hidden_state(inputs, lengths, params, unrolled_steps)
    return tf.reshape(tf.matmul(h, params["out_kernel"]) + params["out_bias"], [-1])


def build_model(max_len, num_units, learning_rate, seed):
    """Placeholders, variables, loss, accuracy and the Adam training op, in the default graph."""
    rng = np.random.default_rng(seed)
    inputs = tf.placeholder(tf.float32, [None, max_len, 2], name="inputs")
    lengths = tf.placeholder(tf.int32, [None], name="lengths")
    targets = tf.placeholder(tf.float32, [None], name="targets")
    params = {k: tf.Variable(v, name=k) for k, v in initial_parameters(2, num_units, rng).items()}
    prediction = predict(inputs, lengths, params)
    loss = tf.reduce_mean(tf.square(prediction - targets))
    accuracy = tf.reduce_mean(tf.cast(tf.less(tf.abs(prediction - targets), TOLERANCE), tf.float32))
    train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss)
    return {"inputs": inputs, "lengths": lengths, "targets": targets, "loss": loss, "accuracy": accuracy,
            "train_op": train_op}


def train(steps, max_len=50, num_units=32, batch=64, learning_rate=0.01, target_accuracy=0.95,
          eval_every=100, seed=0, log=print):
    """Trains until ``target_accuracy`` on 1000 held-out sequences (or ``steps``); returns the history."""
    rng = np.random.default_rng(seed)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        model = build_model(max_len, num_units, learning_rate, seed)
        held_out = adding_problem(1000, max_len, np.random.default_rng(seed + 1))
        eval_feed = dict(zip([model["inputs"], model["lengths"], model["targets"]], held_out))
        history = []
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            start = time.perf_counter()

            def evaluate(step):
                accuracy, loss = sess.run([model["accuracy"], model["loss"]], eval_feed)
                elapsed = time.perf_counter() - start
                history.append({"step": step, "loss": float(loss), "accuracy": float(accuracy), "seconds": elapsed})
                log(f"step {step:5d}  held-out loss {loss:.5f}  accuracy {accuracy:6.1%}  {elapsed:6.1f} s")
                return accuracy >= target_accuracy

            evaluate(0)
            for step in range(1, steps + 1):
                x, n, y = adding_problem(batch, max_len, rng)
                sess.run(model["train_op"], {model["inputs"]: x, model["lengths"]: n, model["targets"]: y})
                if (step % eval_every == 0 or step == steps) and evaluate(step):
                    break
    return history


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--max-len", type=int, default=50)
    parser.add_argument("--units", type=int, default=32)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--target-accuracy", type=float, default=0.95)
    args = parser.parse_args()
    history = train(args.steps, args.max_len, args.units, args.batch, args.learning_rate, args.target_accuracy)
    last = history[-1]
    print(f"done: {last['accuracy']:.1%} of held-out sequences within {TOLERANCE} of the target after "
          f"{last['step']} steps, {last['seconds']:.1f} s")


if __name__ == "__main__":
    main()
