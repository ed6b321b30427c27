"""Executors free each intermediate tensor after its last consumer, and the plan's order prefers the
ready op that lowers peak memory; the executor choice follows the cost model."""

import tracemalloc

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.plan_graph import PlanGraph, PlanNode
from tensorweave.runtime.schedule import memory_order

pytestmark = pytest.mark.cpu_only

N = 1 << 20  # float32 elements: 4 MiB per tensor
MIB4 = 4 * N


def _peak_bytes(sess, fetch, feed, **run_kw):
    sess.run(fetch, feed, **run_kw)  # compile and warm up outside the measurement
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        sess.run(fetch, feed, **run_kw)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _chain(length=40):
    x = tf.placeholder(tf.float32, [N])
    y = x
    for _ in range(length):
        y = tf.add(y, 1.0)
    return x, tf.reduce_sum(y)


@pytest.mark.parametrize("executor, traced", [("linear", False), ("linear", True), ("dataflow", False),
                                              ("dataflow", True)])
def test_a_long_chain_of_large_tensors_keeps_only_a_few_alive(executor, traced):
    x, y = _chain()
    feed = {x: np.zeros(N, np.float32)}
    kw = {}
    if traced:
        kw = {"options": tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), "run_metadata": tf.RunMetadata()}
    with tf.Session(config=tf.ConfigProto(executor=executor)) as s:
        assert s.run(y, feed) == 40.0 * N
        peak = _peak_bytes(s, y, feed, **kw)
    assert peak < 3.5 * MIB4, f"peak {peak / MIB4:.1f} tensors of 4 MiB for a chain of 40"


def test_a_chain_split_over_two_devices_frees_on_both():
    x = tf.placeholder(tf.float32, [N])
    y = x
    for i in range(30):
        with tf.device(f"/cpu:{i // 15}"):
            y = tf.add(y, 1.0)
    total = tf.reduce_sum(y)
    feed = {x: np.zeros(N, np.float32)}
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        assert s.run(total, feed) == 30.0 * N
        assert _peak_bytes(s, total, feed) < 4.5 * MIB4


def _fan_out(width=8):
    x = tf.placeholder(tf.float32, [N])
    sums = [tf.reduce_sum(tf.multiply(x, float(i + 1))) for i in range(width)]
    return x, tf.add_n(sums)


@pytest.mark.parametrize("executor", ["linear", "dataflow"])
def test_fan_out_reduces_each_product_before_making_the_next(executor):
    x, total = _fan_out()
    feed = {x: np.ones(N, np.float32)}
    with tf.Session(config=tf.ConfigProto(executor=executor)) as s:
        assert s.run(total, feed) == pytest.approx(36.0 * N)
        assert _peak_bytes(s, total, feed) < 2.5 * MIB4


SIZES = {}


def _node(name, inputs=(), nbytes=0):
    node = PlanNode(name, "Identity", {}, [(i, 0) for i in inputs], [], [tf.float32])
    SIZES[id(node)] = nbytes
    return node


def _size(node, slot=0):
    return SIZES[id(node)]


def _simulated_peak(order):
    """Peak of live bytes when running ``order``, each output freed after its last reader."""
    last = {}
    for pos, n in enumerate(order):
        for src, _ in n.inputs:
            last[id(src)] = pos
    live = peak = 0
    for pos, n in enumerate(order):
        live += _size(n)
        peak = max(peak, live)
        for src, _ in n.inputs:
            if last[id(src)] == pos:
                live -= _size(src)
        if id(n) not in last:
            live -= _size(n)
    return peak


def test_memory_order_prefers_the_ready_op_that_frees_memory():
    x = _node("x", nbytes=10)
    products = [_node(f"m{i}", [x], 100) for i in range(6)]
    sums = [_node(f"s{i}", [m], 1) for i, m in enumerate(products)]
    add_n = _node("add_n", sums, 1)
    breadth_first = [x] + products + sums + [add_n]
    PlanGraph(breadth_first).topological_order()  # a valid order, just a wasteful one
    ordered = memory_order(breadth_first, _size)
    names = [n.name for n in ordered]
    assert names[:5] == ["x", "m0", "s0", "m1", "s1"] and names[-1] == "add_n"
    assert _simulated_peak(breadth_first) >= 600 and _simulated_peak(ordered) <= 220


def test_memory_order_keeps_a_topological_order():
    a = _node("a", nbytes=5)
    b = _node("b", [a], 50)
    c = _node("c", [a], 1)
    d = _node("d", [b, c], 1)
    ordered = memory_order([a, b, c, d], _size)
    position = {n.name: i for i, n in enumerate(ordered)}
    assert position["a"] < position["b"] < position["d"] and position["c"] < position["d"]
    assert [n.name for n in ordered] == ["a", "c", "b", "d"]  # the small one first: the big one lives less


def _executor_kinds(sess):
    return sorted(ex.kind for plan in sess._plans.values() for _, ex in plan.partitions)


def test_executor_choice_follows_the_cost_model():
    x = tf.placeholder(tf.float32, [1 << 21])
    branches = tf.add(tf.reduce_sum(tf.exp(x)), tf.reduce_sum(tf.sin(x)))  # single-threaded numpy kernels
    chain = tf.reduce_sum(tf.sin(tf.exp(x)))
    small = tf.add(tf.reduce_sum(tf.exp(x[:8])), tf.reduce_sum(tf.sin(x[:8])))
    m = tf.placeholder(tf.float32, [512, 512])
    products = tf.add(tf.matmul(m, m), tf.matmul(tf.transpose(m), m))  # BLAS already uses every core
    feed = {x: np.zeros(1 << 21, np.float32), m: np.eye(512, dtype=np.float32)}
    for fetch, kind in [(branches, "dataflow"), (chain, "linear"), (small, "linear"), (products, "linear")]:
        with tf.Session() as s:
            s.run(fetch, feed)
            assert _executor_kinds(s) == [kind], fetch
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=1)) as s:
        assert s.run(branches, feed) == float(1 << 21)
        assert _executor_kinds(s) == ["linear"]


def test_measured_times_switch_a_partition_to_the_parallel_executor():
    x = tf.placeholder(tf.float32, [None])  # an unknown size: the estimates see tiny work
    branches = tf.add(tf.reduce_sum(tf.exp(x)), tf.reduce_sum(tf.sin(x)))
    feed = {x: np.zeros(1 << 22, np.float32)}
    with tf.Session() as s:
        s.run(branches, feed)
        assert _executor_kinds(s) == ["linear"]
        s.run(branches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
              run_metadata=tf.RunMetadata())
        assert _executor_kinds(s) == ["dataflow"]
        assert s.run(branches, feed) == float(1 << 22)
