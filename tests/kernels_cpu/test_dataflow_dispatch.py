"""The dataflow executor's per-node dispatch: join records, dead inputs, control edges and kernel errors
give the same answers as the straight-line executor (or the same errors) on both thread counts."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op


def _session(executor, threads=1):
    return tf.Session(config=tf.ConfigProto(executor=executor, inter_op_parallelism_threads=threads))


@pytest.mark.parametrize("threads", [1, 2])
def test_one_value_twice_into_an_op_and_control_edges_match_the_linear_executor(threads):
    x = tf.placeholder(tf.float32, [3])
    square = x * x  # one output feeds both inputs of one node: a join record waits for both slots
    with tf.control_dependencies([square]):
        after = tf.add(x, 1.0)  # a data input and a control input
    with tf.control_dependencies([after, square]):
        gated = tf.identity(tf.constant([2.0, 2.0, 2.0]))  # one data input and two control inputs
    out = square + after + gated
    feed = {x: np.array([1.0, 2.0, 3.0], np.float32)}
    with _session("linear") as s:
        expected = s.run([square, after, out], feed)
    with _session("dataflow", threads) as s:
        for _ in range(3):
            got = s.run([square, after, out], feed)
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_dead_input_of_a_two_input_op_makes_it_dead_and_merge_takes_the_live_side(threads):
    p = tf.placeholder(tf.bool, [])
    f, t = apply_op("Switch", [tf.constant(3.0), p])
    on_false = tf.add(f, tf.constant(100.0))  # two inputs, one of them dead when p is true
    on_true = tf.multiply(t, t)
    merged = apply_op("Merge", [[on_false, on_true]])
    with _session("dataflow", threads) as s:
        assert s.run(merged, {p: True}) == [9.0, 1]
        assert s.run(merged, {p: False}) == [103.0, 0]


@pytest.mark.parametrize("threads", [1, 2])
def test_while_loop_with_a_loop_invariant_two_input_op_per_iteration(threads):
    x = tf.placeholder(tf.float32, [2])
    step = tf.constant([1.0, 2.0])

    def body(i, v):
        return i + 1, v * 0.5 + step  # `step` is entered as a constant into every iteration

    _, out = tf.while_loop(lambda i, v: i < 30, body, [tf.constant(0), x])
    value = np.array([4.0, -4.0], np.float32)
    expected = value.copy()
    for _ in range(30):
        expected = expected * np.float32(0.5) + np.array([1.0, 2.0], np.float32)
    with _session("dataflow", threads) as s:
        np.testing.assert_allclose(s.run(out, {x: value}), expected, rtol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failing_kernel_inside_a_loop_names_its_op(threads):
    m = tf.placeholder(tf.float32, [None, None])

    def body(i, v):
        return i + 1, tf.matmul(v, m, name="bad_matmul")  # fed [2, 3] @ [2, 3]: fails at run time

    _, out = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), m])
    with _session("dataflow", threads) as s:
        with pytest.raises(tf.errors.OpError, match="bad_matmul"):
            s.run(out, {m: np.ones((2, 3), np.float32)})
        # the session still runs other steps afterwards
        assert s.run(tf.constant(1.0) + 1.0) == 2.0



@pytest.mark.parametrize("threads", [1, 2])
def test_a_dequeue_first_in_the_plan_completes_when_the_same_step_enqueues(threads):
    """The dequeue waits (its kernel completes asynchronously) while light ops lead to the enqueue: the
    step must go on with them, on one thread or two, and finish the dequeue from its callback."""
    q = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
    x = tf.placeholder(tf.float32, [])
    taken = q.dequeue()
    value = tf.fill([1000], x)  # a large first output: the memory order puts the dequeue before it
    for _ in range(20):
        value = value + 1.0
    put = q.enqueue([tf.reduce_max(value)])
    with _session("dataflow", threads) as s:
        for i in range(5):
            got, _ = s.run([taken, put], {x: float(i)})
            assert got == i + 20.0


class _Overlap:
    """A cost model stub: this much heavy work could overlap, whatever the nodes."""

    def __init__(self, seconds):
        self.seconds = seconds

    def overlap_seconds(self, nodes, device):
        return self.seconds


class _Threads:
    _inter_op_threads = 2


def test_the_parallel_executor_must_also_pay_for_its_dearer_dispatch_of_every_node():
    from tensorweave.runtime import plan

    gain = plan.PARALLEL_GAIN_SECONDS
    assert plan.wants_parallel([None] * 10, None, _Threads(), _Overlap(gain + 1e-4))
    # the static LSTM benchmark's backward pass: ~1.2 ms that could overlap, spread over ~950 nodes
    assert not plan.wants_parallel([None] * 950, None, _Threads(), _Overlap(gain + 2e-4))
    assert plan.wants_parallel([None] * 950, None, _Threads(), _Overlap(gain + 950 * plan.DATAFLOW_NODE_SECONDS))
