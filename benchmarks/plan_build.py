"""Plan building: the first Session.run of a chain of 5,000 adds, in a fresh session each call, per node.

The graph is built once; each call opens a session and runs the chain's end once, so it measures what a
first run costs (pruning, the graph passes, placement, ordering, partitioning, compiling the executor) plus
one run of 5,000 small adds. The same program runs in TF1's Session (its first run builds its executor and
runs Grappler). Nodes per second is 1 / the time per node.
"""

import numpy as np

from benchmarks import tf1
from benchmarks.common import Benchmark, Case

CHAIN = 5000
SIZE = 16


def first_run(tf=None):
    if tf is None:
        import tensorweave as tf
    graph = tf.Graph()
    with graph.as_default():
        start = tf.placeholder(tf.float32, [SIZE])
        step = tf.constant(np.ones(SIZE, np.float32))
        y = start
        for _ in range(CHAIN):
            y = y + step
    feed = {start: np.arange(SIZE, dtype=np.float32)}

    def run():
        with tf.Session(graph=graph) as sess:
            return sess.run(y, feed)
    return run


CASE = f"first run, {CHAIN:,}-add chain (per node)"


def tf1_programs(tf):
    run = first_run(tf)
    return {CASE: (run, run())}


def run(options):
    reference = tf1.programs(__name__)
    mine = first_run()
    steps, check = {"tensorweave": mine}, {"tensorweave": mine()}
    if CASE in reference:
        steps["tf1"], check["tf1"] = reference[CASE]
    return [Case(CASE, steps, unit="node", per_call=CHAIN, check=check)]


BENCHMARK = Benchmark("plan_build", f"Plan building: the first Session.run of a {CHAIN:,}-add chain, per node", run)
