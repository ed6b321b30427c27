"""Per-op overhead: a chain of 1,000 adds on a 16-element float32 vector, reported per op.

Tensorweave runs the chain as one graph with the graph passes off (opt_level L0), so constant folding
and CSE cannot fold it away and every add runs as a kernel; numpy and PyTorch eager make 1,000 calls.
Tensorweave's figure includes the add itself: the targets report the executor's share as well, the time per op
minus numpy's bare add of the same vector. TF1 runs the same chain with its optimizations off too (L0 and
Grappler's meta optimizer, which would otherwise rewrite the chain).
"""

import numpy as np

from benchmarks.common import Benchmark, Case, torch_or_none, with_tf1

CHAIN = 1000
SIZE = 16


def tensorweave_chain(x, one, tf=None, config=None):
    if tf is None:
        import tensorweave as tf
    graph = tf.Graph()
    with graph.as_default():
        start = tf.placeholder(tf.float32, [SIZE])
        step = tf.constant(one)
        y = start
        for _ in range(CHAIN):
            y = y + step
    config = config or tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
    sess = tf.Session(graph=graph, config=config)
    feed = {start: x}
    return lambda: sess.run(y, feed)


def numpy_chain(x, one):
    add = np.add

    def run():
        y = x
        for _ in range(CHAIN):
            y = add(y, one)
        return y

    return run


def torch_chain(torch, x, one):
    xt, step = torch.from_numpy(x), torch.from_numpy(one)
    add = torch.add

    def run():
        with torch.no_grad():
            y = xt
            for _ in range(CHAIN):
                y = add(y, step)
        return y

    return run


def tf1_programs(tf):
    """The same chain in TF1 with its graph optimizations off too (L0, and Grappler's meta optimizer)."""
    from tensorflow.core.protobuf import rewriter_config_pb2
    config = tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0),
        rewrite_options=rewriter_config_pb2.RewriterConfig(disable_meta_optimizer=True)))
    chain = tensorweave_chain(np.arange(SIZE, dtype=np.float32), np.ones(SIZE, np.float32), tf, config)
    return {CASE: (chain, chain())}


CASE = f"per-op overhead ({CHAIN:,} adds)"


def run(options):
    x = np.arange(SIZE, dtype=np.float32)
    one = np.ones(SIZE, np.float32)
    steps = {"tensorweave": tensorweave_chain(x, one), "numpy": numpy_chain(x, one)}
    torch = torch_or_none()
    if torch is not None:
        steps["pytorch"] = torch_chain(torch, x, one)
    check = {name: np.asarray(fn()) for name, fn in steps.items()}
    return with_tf1([Case(CASE, steps, unit="op", per_call=CHAIN, check=check)], __name__)


BENCHMARK = Benchmark("op_overhead", f"Per-op overhead: a chain of {CHAIN:,} adds on a {SIZE}-element vector", run)
