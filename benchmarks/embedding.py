"""Sparse embedding update: a 100,000 x 64 float32 table, 1,024 looked-up ids per step, SGD.

Every step looks the rows up, computes the loss and updates. The sparse step updates only the looked-up rows (Tensorweave: embedding_lookup's IndexedSlices gradient
into ResourceSparseApplyGradientDescent; numpy: add.at on the rows; PyTorch: nn.Embedding(sparse=True)).
The dense step is the same step with the gradient made into a full table first, as an optimizer without
sparse support would apply it (Tensorweave: convert_to_tensor of the IndexedSlices, a dense update).
"""

import numpy as np

from benchmarks.common import Benchmark, Case, torch_or_none, torch_sgd_step, with_tf1

ROWS, WIDTH, IDS = 100_000, 64, 1024
LEARNING_RATE = 0.01


def tensorweave_step(table, ids, target, dense, tf=None):
    if tf is None:
        import tensorweave as tf

    graph = tf.Graph()
    with graph.as_default():
        variable = tf.Variable(table)
        lookup = tf.placeholder(tf.int32, [IDS])
        loss = tf.reduce_sum(tf.nn.embedding_lookup(variable, lookup) * tf.constant(target))
        optimizer = tf.train.GradientDescentOptimizer(LEARNING_RATE)
        grad = tf.gradients(loss, [variable])[0]
        # The update needs nothing from the lookup: it waits for the loss, so a step does the work the numpy and
        # PyTorch steps do (look up, loss, update) and the loss is the one before the update.
        with tf.control_dependencies([loss]):
            train = optimizer.apply_gradients([(tf.convert_to_tensor(grad) if dense else grad, variable)])
        init = tf.global_variables_initializer()
    sess = tf.Session(graph=graph)
    sess.run(init)
    feed = {lookup: ids}

    def step():
        return sess.run([loss, train], feed)[0]

    return step, step


def numpy_step(table, ids, target, dense):
    table = table.copy()
    update = np.float32(LEARNING_RATE) * target

    def step():
        loss = (table[ids] * target).sum()
        if dense:
            grad = np.zeros_like(table)
            np.add.at(grad, ids, target)
            np.subtract(table, np.float32(LEARNING_RATE) * grad, out=table)
        else:
            np.subtract.at(table, ids, update)
        return loss

    return step, step


def torch_step(torch, table, ids, target, dense):
    embedding = torch.nn.Embedding(ROWS, WIDTH, sparse=not dense)
    with torch.no_grad():
        embedding.weight.copy_(torch.from_numpy(table))
    optimizer = torch.optim.SGD(embedding.parameters(), lr=LEARNING_RATE)
    lookup, goal = torch.from_numpy(ids.astype(np.int64)), torch.from_numpy(target)

    return torch_sgd_step(optimizer, lambda: (embedding(lookup) * goal).sum())


def _inputs():
    rng = np.random.default_rng(100)
    table = (rng.standard_normal((ROWS, WIDTH)) * 0.1).astype(np.float32)
    ids = rng.integers(0, ROWS, IDS).astype(np.int32)
    return table, ids, rng.standard_normal((IDS, WIDTH)).astype(np.float32)


def _case(dense):
    return f"embedding update, {'dense table' if dense else 'sparse rows'}"


def tf1_programs(tf):
    programs = {}
    for dense in (False, True):
        step, with_loss = tensorweave_step(*_inputs(), dense, tf)
        programs[_case(dense)] = (step, [with_loss() for _ in range(3)])
    return programs


def run(options):
    table, ids, target = _inputs()
    torch = torch_or_none()
    cases = []
    for dense in (False, True):
        impls = {"tensorweave": tensorweave_step(table, ids, target, dense),
                 "numpy": numpy_step(table, ids, target, dense)}
        if torch is not None:
            impls["pytorch"] = torch_step(torch, table, ids, target, dense)
        check = {name: [with_loss() for _ in range(3)] for name, (_, with_loss) in impls.items()}
        cases.append(Case(_case(dense), {name: step for name, (step, _) in impls.items()}, check=check,
                          check_rtol=1e-3))
    return with_tf1(cases, __name__)


BENCHMARK = Benchmark("embedding", f"Sparse embedding update ({ROWS:,}x{WIDTH} table, {IDS:,} ids) vs a dense update",
                      run)
