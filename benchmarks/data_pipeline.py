"""Input pipeline: the MLP training step of ``mlp.py`` (784-256-256-10, batch 64) fed two ways in one run.

``feed_dict``: as TF1 tutorials write it, each step slices the next batch of a per-epoch permutation of the
training set in Python and feeds it. ``tf.data``: ``from_tensor_slices((x, y)).shuffle(buffer).repeat()
.batch(64).prefetch(1)``, the model built on the iterator's ``get_next()``; each step runs only the train op,
the next batch being prepared by the prefetch thread meanwhile. The target is tf.data <= 1.0x feed_dict.
"""

import numpy as np

from benchmarks import tf1
from benchmarks.common import Benchmark, Case
from benchmarks.mlp import SIZES, initial_weights

EXAMPLES = 4096
BATCH = 64
SHUFFLE_BUFFER = 1024
LEARNING_RATE = 0.01


def _model(tf, weights, inputs, targets):
    h = inputs
    for k, (kernel, bias) in enumerate(weights):
        last = k == len(weights) - 1
        h = tf.layers.dense(h, kernel.shape[1], activation=None if last else tf.nn.relu,
                            kernel_initializer=tf.constant_initializer(kernel),
                            bias_initializer=tf.constant_initializer(bias))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=h))
    return tf.train.GradientDescentOptimizer(LEARNING_RATE).minimize(loss)


def feed_dict_step(weights, x, y):
    import tensorweave as tf
    graph = tf.Graph()
    with graph.as_default():
        inputs = tf.placeholder(tf.float32, [None, SIZES[0]])
        targets = tf.placeholder(tf.int32, [None])
        train = _model(tf, weights, inputs, targets)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    rng = np.random.default_rng(0)
    state = {"order": rng.permutation(len(x)), "at": 0}

    def step():
        at = state["at"]
        if at + BATCH > len(x):
            state["order"], at = rng.permutation(len(x)), 0
        index = state["order"][at:at + BATCH]
        state["at"] = at + BATCH
        sess.run(train, {inputs: x[index], targets: y[index]})

    return step


def tf_data_step(weights, x, y, tf=None):
    if tf is None:
        import tensorweave as tf
    graph = tf.Graph()
    with graph.as_default():
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(SHUFFLE_BUFFER, seed=0).repeat()
        dataset = dataset.batch(BATCH).prefetch(1)
        inputs, targets = dataset.make_one_shot_iterator().get_next()
        train = _model(tf, weights, inputs, targets)
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    return lambda: sess.run(train)


def _inputs():
    rng = np.random.default_rng(7)
    weights = initial_weights(rng)
    x = rng.standard_normal((EXAMPLES, SIZES[0])).astype(np.float32)
    return weights, x, rng.integers(0, SIZES[-1], EXAMPLES).astype(np.int32)


FED = f"mlp batch {BATCH}, tf.data-fed step"


def tf1_programs(tf):
    return {FED: (tf_data_step(*_inputs(), tf=tf), None)}


def run(options):
    weights, x, y = _inputs()
    steps = {"feed_dict": feed_dict_step(weights, x, y), "tf.data": tf_data_step(weights, x, y)}
    fed = {"tensorweave": steps["tf.data"]}
    reference = tf1.programs(__name__)
    if FED in reference:
        fed["tf1"] = reference[FED][0]
    return [Case(f"mlp batch {BATCH}, input", steps,
                 note="feed_dict slices a permutation and feeds it; tf.data shuffles, batches and prefetches"),
            Case(FED, fed, note="the same tf.data pipeline and model in TF1 (values differ: shuffles differ)")]


BENCHMARK = Benchmark("data_pipeline", "MLP step fed by feed_dict vs by a tf.data pipeline (shuffle, batch, prefetch)",
                      run)
