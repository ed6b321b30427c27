"""Control flow against TensorFlow 1.x: tf.while_loop overhead per iteration (a small body and a matmul body),
the training step of examples/lstm_sequence.py (an LSTM in a tf.while_loop, Adam), and a tf.nn.dynamic_rnn
LSTMCell step, forward and backward, as examples/char_lstm.py writes it.

Each program is one builder taking the framework as ``tf``: Tensorweave here, ``tensorflow.compat.v1`` in the
TF1 worker (``benchmarks.tf1``), so both run the same graph. numpy rows are the same loop in Python. The
"dataflow" rows are Tensorweave with ``ConfigProto(executor="dataflow")``: every node scheduled, the way
loops ran before the structured executor.
"""

import importlib.util
import os
import sys

import numpy as np

from benchmarks import tf1
from benchmarks.common import Benchmark, Case

SMALL_ITERATIONS, SMALL_SIZE = 20000, 16
MATMUL_ITERATIONS, MATMUL_SIZE = 2000, 64
EXAMPLE = dict(batch=64, max_len=50, num_units=32, learning_rate=0.01, seed=0)
RNN_STEPS, RNN_BATCH, RNN_UNITS, RNN_VOCAB, RNN_EMBED = 50, 32, 128, 64, 64


def _tensorweave(tf):
    if tf is None:
        import tensorweave as tf
    return tf


def _session(tf, graph, executor):
    """A session on ``graph``; ``executor`` (Tensorweave's ConfigProto field, not TF1's) when given."""
    return tf.Session(graph=graph, config=tf.ConfigProto(executor=executor)) if executor else tf.Session(graph=graph)


def small_loop(tf=None, executor=None):
    tf = _tensorweave(tf)
    graph = tf.Graph()
    with graph.as_default():
        x0 = tf.placeholder(tf.float32, [SMALL_SIZE])
        _, y = tf.while_loop(lambda i, x: i < SMALL_ITERATIONS, lambda i, x: (i + 1, x * 0.5 + 1.0),
                             [tf.constant(0), x0])
    sess = _session(tf, graph, executor)
    feed = {x0: np.linspace(-1, 1, SMALL_SIZE, dtype=np.float32)}
    return lambda: sess.run(y, feed)


def matmul_loop(tf=None, executor=None):
    tf = _tensorweave(tf)
    graph = tf.Graph()
    with graph.as_default():
        w = tf.constant(_matmul_weights())
        x0 = tf.placeholder(tf.float32, [MATMUL_SIZE, MATMUL_SIZE])
        _, y = tf.while_loop(lambda i, x: i < MATMUL_ITERATIONS, lambda i, x: (i + 1, tf.tanh(tf.matmul(x, w))),
                             [tf.constant(0), x0])
    sess = _session(tf, graph, executor)
    feed = {x0: np.eye(MATMUL_SIZE, dtype=np.float32)}
    return lambda: sess.run(y, feed)


def _matmul_weights():
    return (np.random.default_rng(1).standard_normal((MATMUL_SIZE, MATMUL_SIZE)) / 8).astype(np.float32)


def numpy_small():
    x0 = np.linspace(-1, 1, SMALL_SIZE, dtype=np.float32)
    half, one = np.float32(0.5), np.float32(1.0)

    def run():
        x = x0
        for _ in range(SMALL_ITERATIONS):
            x = x * half + one
        return x
    return run


def numpy_matmul():
    w = _matmul_weights()

    def run():
        x = np.eye(MATMUL_SIZE, dtype=np.float32)
        for _ in range(MATMUL_ITERATIONS):
            x = np.tanh(x @ w)
        return x
    return run


def lstm_example_step(tf=None, executor=None):
    """examples/lstm_sequence.py's model and Adam step on one adding-problem batch (the example's defaults)."""
    tf = _tensorweave(tf)
    example = _load_example(tf)
    graph = tf.Graph()
    with graph.as_default():
        model = example.build_model(EXAMPLE["max_len"], EXAMPLE["num_units"], EXAMPLE["learning_rate"],
                                    EXAMPLE["seed"])
        init = tf.global_variables_initializer()
    sess = _session(tf, graph, executor)
    sess.run(init)
    batch = example.adding_problem(EXAMPLE["batch"], EXAMPLE["max_len"], np.random.default_rng(EXAMPLE["seed"]))
    feed = dict(zip([model["inputs"], model["lengths"], model["targets"]], batch))
    return (lambda: sess.run(model["train_op"], feed)), (lambda: sess.run([model["loss"], model["train_op"]], feed)[0])


def _load_example(tf):
    """The example module with ``tensorweave`` bound to ``tf`` (TF1 in the worker, Tensorweave here)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "lstm_sequence.py")
    saved = sys.modules.get("tensorweave")
    sys.modules["tensorweave"] = tf
    try:
        spec = importlib.util.spec_from_file_location("lstm_sequence_example", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["tensorweave"]
        else:
            sys.modules["tensorweave"] = saved
    return module


def dynamic_rnn_step(tf=None, executor=None):
    """A character model as examples/char_lstm.py builds it (embedding, LSTMCell, dynamic_rnn, dense read-out),
    trained by SGD; weights from a seeded numpy generator so both frameworks start alike."""
    tf = _tensorweave(tf)
    rng = np.random.default_rng(5)
    scale = 0.08
    weights = {"embedding": rng.uniform(-scale, scale, (RNN_VOCAB, RNN_EMBED)),
               "kernel": rng.uniform(-scale, scale, (RNN_EMBED + RNN_UNITS, 4 * RNN_UNITS)),
               "readout": rng.uniform(-scale, scale, (RNN_UNITS, RNN_VOCAB))}
    weights = {k: v.astype(np.float32) for k, v in weights.items()}
    graph = tf.Graph()
    with graph.as_default():
        chars = tf.placeholder(tf.int32, [None, None])
        targets = tf.placeholder(tf.int32, [None, None])
        cell = tf.nn.rnn_cell.LSTMCell(RNN_UNITS, initializer=tf.constant_initializer(weights["kernel"]))
        embedding = tf.get_variable("embedding", initializer=weights["embedding"])
        outputs, _ = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, chars),
                                       initial_state=cell.zero_state(tf.shape(chars)[0], tf.float32))
        logits = tf.layers.dense(outputs, RNN_VOCAB, kernel_initializer=tf.constant_initializer(weights["readout"]))
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = tf.global_variables_initializer()
    sess = _session(tf, graph, executor)
    sess.run(init)
    data = np.random.default_rng(6).integers(0, RNN_VOCAB, (RNN_BATCH, RNN_STEPS + 1)).astype(np.int32)
    feed = {chars: data[:, :-1], targets: data[:, 1:]}
    return (lambda: sess.run(train, feed)), (lambda: sess.run([loss, train], feed)[0])


SMALL = f"while_loop x*0.5+1, {SMALL_SIZE} floats"
MATMUL = f"while_loop tanh(x@w), {MATMUL_SIZE}x{MATMUL_SIZE}"
LSTM_EXAMPLE = "lstm_sequence.py step (while_loop)"
DYNAMIC_RNN = f"dynamic_rnn LSTM {RNN_UNITS}, {RNN_STEPS} steps"


def tf1_programs(tf):
    """The same programs under TF1 (called in the TF1 worker), with the values checked against ours."""
    small, matmul = small_loop(tf), matmul_loop(tf)
    example, example_loss = lstm_example_step(tf)
    rnn, rnn_loss = dynamic_rnn_step(tf)
    return {SMALL: (small, small()), MATMUL: (matmul, matmul()),
            LSTM_EXAMPLE: (example, [example_loss() for _ in range(3)]),
            DYNAMIC_RNN: (rnn, [rnn_loss() for _ in range(3)])}


def run(options):
    reference = tf1.programs(__name__)
    small, matmul = small_loop(), matmul_loop()
    example, example_loss = lstm_example_step()
    rnn, rnn_loss = dynamic_rnn_step()
    old_example, old_example_loss = lstm_example_step(executor="dataflow")
    old_rnn, old_rnn_loss = dynamic_rnn_step(executor="dataflow")
    mine = {SMALL: (small, small(), SMALL_ITERATIONS, {"dataflow": (small_loop(executor="dataflow"), None),
                                                       "numpy": (numpy_small(), None)}),
            MATMUL: (matmul, matmul(), MATMUL_ITERATIONS, {"dataflow": (matmul_loop(executor="dataflow"), None),
                                                           "numpy": (numpy_matmul(), None)}),
            LSTM_EXAMPLE: (example, [example_loss() for _ in range(3)], 1,
                           {"dataflow": (old_example, [old_example_loss() for _ in range(3)])}),
            DYNAMIC_RNN: (rnn, [rnn_loss() for _ in range(3)], 1,
                          {"dataflow": (old_rnn, [old_rnn_loss() for _ in range(3)])})}
    cases = []
    for name, (step, value, per_call, others) in mine.items():
        steps, check = {"tensorweave": step}, {"tensorweave": value}
        if name in reference:
            steps["tf1"], check["tf1"] = reference[name]
        for other, (fn, value) in others.items():
            steps[other], check[other] = fn, fn() if value is None else value
        cases.append(Case(name, steps, unit="iteration" if per_call > 1 else "step", per_call=per_call,
                          check=check, check_rtol=1e-3))
    return cases


BENCHMARK = Benchmark("control_flow", "while_loop per iteration, the lstm_sequence example's step, a dynamic_rnn "
                                      "LSTM step; against TF1", run)
