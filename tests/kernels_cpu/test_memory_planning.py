"""Memory planning: kernels that accept ``out=`` write into dying inputs and into buffers kept from earlier
steps, yet a value handed to the user, fed by the user, held by a variable or read again is never written
over, and every value equals the one computed with planning off."""

import sys
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import memory_plan

pytestmark = pytest.mark.cpu_only

PLANNED = tf.ConfigProto()
UNPLANNED = tf.ConfigProto(graph_options=tf.GraphOptions(
    optimizer_options=tf.OptimizerOptions(do_memory_planning=False)))


def _executor(sess):
    """The straight-line executor of the session's latest plan."""
    plan = list(sess._plans.values())[-1]
    ((_, executor),) = plan.partitions
    assert executor.kind == "linear"
    return executor


WIDTH = 512  # with 512 rows, 1 MiB of float32: large enough to write into buffers and to keep them


def _network():
    """Fused nodes before and after a MatMul: the second can write over the MatMul's dying product."""
    x = tf.placeholder(tf.float32, [None, WIDTH])
    w = tf.Variable(np.linspace(-1, 1, WIDTH * WIDTH, dtype=np.float32).reshape(WIDTH, WIDTH) / WIDTH)
    hidden = tf.tanh(x * 2.0 + 1.0)
    product = tf.matmul(hidden, w)
    activated = tf.sigmoid(product * 3.0 - 0.5) * 2.0
    return x, w, hidden, activated, tf.reduce_sum(activated)


def _feeds(rows=WIDTH, steps=4):
    return [np.linspace(-2, 2, rows * WIDTH, dtype=np.float32).reshape(rows, WIDTH) * (k + 1) for k in range(steps)]


def test_buffers_are_written_in_place_and_reused_across_steps():
    x, w, _, _, total = _network()
    with tf.Session(config=PLANNED) as s:
        s.run(w.initializer)
        for value in _feeds():
            s.run(total, {x: value})
        stats = _executor(s).memory.stats()
    assert stats["in_place"] >= 4  # the product, every step
    assert stats["reused"] >= 3  # the first fused node's buffer, from the second step on


def test_values_equal_with_planning_on_and_off_as_shapes_change():
    x, w, hidden, activated, total = _network()
    results = {}
    for name, config in (("on", PLANNED), ("off", UNPLANNED)):
        with tf.Session(config=config) as s:
            s.run(w.initializer)
            results[name] = [s.run([total, activated], {x: value})
                             for rows in (WIDTH, WIDTH, 80, WIDTH, 1) for value in _feeds(rows, 1)]
    for (t_on, a_on), (t_off, a_off) in zip(results["on"], results["off"]):
        assert t_on == t_off
        np.testing.assert_array_equal(a_on, a_off)


def test_fetched_values_never_change_in_later_steps():
    x, w, hidden, activated, total = _network()
    with tf.Session(config=PLANNED) as s:
        s.run(w.initializer)
        kept = []
        for value in _feeds(steps=5):
            fetched = s.run([hidden, activated, total], {x: value})
            kept.append((fetched, [np.copy(f) for f in fetched]))
        for fetched, copies in kept:
            for a, b in zip(fetched, copies):
                np.testing.assert_array_equal(a, b)


def test_a_dropped_fetch_lets_its_buffer_be_reused_but_a_held_one_is_not():
    x = tf.placeholder(tf.float32, [1 << 18])
    y = tf.exp(x * 0.5) + 1.0
    total = tf.reduce_sum(y)
    with tf.Session(config=PLANNED) as s:
        held = s.run([y, total], {x: np.ones(1 << 18, np.float32)})[0]
        copy = held.copy()
        for k in range(4):
            s.run(total, {x: np.full(1 << 18, k, np.float32)})
        np.testing.assert_array_equal(held, copy)
        executor = _executor(s)
    assert executor.memory.stats()["reused"] >= 2


def test_feeds_and_variables_are_never_written_over():
    x = tf.placeholder(tf.float32, [4096])
    v = tf.Variable(np.arange(4096, dtype=np.float32))
    out = tf.tanh(v.read_value() * 2.0) + tf.exp(x - 1.0) * 3.0
    total = tf.reduce_sum(out)
    feed = np.linspace(-1, 1, 4096).astype(np.float32)
    with tf.Session(config=PLANNED) as s:
        s.run(v.initializer)
        for _ in range(3):
            s.run(total, {x: feed})
            s.run(total, {x: np.linspace(-1, 1, 4096).astype(np.float32)})  # held only by the feed dict
        np.testing.assert_array_equal(feed, np.linspace(-1, 1, 4096).astype(np.float32))
        np.testing.assert_array_equal(s.run(v), np.arange(4096, dtype=np.float32))
        assert _executor(s).memory.stats()["in_place"] == 0


def test_a_value_with_another_reader_or_a_view_is_not_written_in_place():
    x = tf.placeholder(tf.float32, [4096, 3])
    a = tf.matmul(x, tf.ones([3, 3]))
    first = tf.square(a) - 1.0  # a dies later, at `second`: not written here
    second = tf.tanh(a * 0.5) + first
    viewed = tf.reshape(second, [3 * 4096])  # a view of `second` is fetched
    last = tf.exp(second - 1.0) * 2.0  # `second` dies here, but the view still holds it
    feed = {x: np.arange(3 * 4096, dtype=np.float32).reshape(4096, 3) / 10000}
    with tf.Session(config=UNPLANNED) as s:
        expected = s.run([viewed, last], feed)
    with tf.Session(config=PLANNED) as s:
        for _ in range(3):
            got = s.run([viewed, last], feed)
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g, e)


def test_concurrent_steps_of_one_plan_keep_their_own_values():
    x = tf.placeholder(tf.float32, [1 << 18])
    y = tf.tanh(x * 0.25 + 1.0) * 2.0
    z = tf.reduce_sum(tf.sqrt(tf.abs(y) + 1.0) - y)
    errors = []
    with tf.Session(config=PLANNED) as s:
        def work(k):
            value = np.full(1 << 18, k, np.float32)
            y_value = np.tanh(value * 0.25 + 1) * 2
            expected = np.sum(np.sqrt(np.abs(y_value) + 1) - y_value, dtype=np.float32)
            for _ in range(20):
                got = s.run(z, {x: value})
                if not np.isclose(got, expected, rtol=1e-5):
                    errors.append((k, got, expected))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = _executor(s).memory.stats()
    assert not errors
    assert stats["reused"] > 0  # buffers kept by one thread's steps, taken by any


def test_planning_is_off_with_its_switch_and_at_opt_level_l0():
    x = tf.placeholder(tf.float32, [3])
    y = tf.reduce_sum(tf.tanh(x * 2.0) + 1.0)
    l0 = tf.ConfigProto(graph_options=tf.GraphOptions(
        optimizer_options=tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0)))
    for config in (UNPLANNED, l0):
        with tf.Session(config=config) as s:
            s.run(y, {x: np.ones(3, np.float32)})
            assert _executor(s).memory is None
            assert "_offer" not in _executor(s).source


def test_outputs_known_to_be_small_get_no_offers():
    x = tf.placeholder(tf.float32, [16])
    wide = tf.placeholder(tf.float32, [None, 16])
    with tf.Session(config=PLANNED) as s:
        s.run(tf.reduce_sum(tf.tanh(x * 2.0) + 1.0), {x: np.ones(16, np.float32)})
        assert "_offer" not in _executor(s).source
        s.run(tf.reduce_sum(tf.tanh(wide * 2.0) + 1.0), {wide: np.ones((2, 16), np.float32)})
        assert "_offer" in _executor(s).source  # the batch size is unknown until it runs


def test_offers_count_references_as_the_executor_holds_them():
    slot = memory_plan.BufferSlot(capacity=2)

    def one_holder():
        value = np.ones(4)
        return memory_plan.offer(slot, value) is value

    def two_holders():
        value = np.ones(4)
        other = value  # noqa: F841 - a second reference
        return memory_plan.offer(slot, value) is value

    assert one_holder() and not two_holders()
    assert memory_plan.offer(slot, np.ones(4)[1:]) is None  # a view does not own its memory
    assert memory_plan.offer(slot, np.float32(1.0)) is None
    assert sys.getrefcount(slot) >= 2


def test_a_kept_buffer_is_only_kept_when_an_offer_wanted_one():
    slot = memory_plan.BufferSlot(capacity=1)

    def die(value):
        memory_plan.keep(slot, value)

    large = memory_plan.KEEP_MIN_BYTES // 8
    die(np.ones(large))
    assert slot.buffers == []
    assert memory_plan.offer(slot) is None and slot.wanted
    die(np.ones(large - 1))  # too small to be worth keeping
    assert slot.buffers == []
    die(np.ones(large))
    die(np.ones(large))  # over capacity
    assert len(slot.buffers) == 1 and memory_plan.offer(slot).size == large


def test_the_fused_kernel_writes_into_a_fitting_out_and_ignores_others():
    x = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [3])
    y = tf.tanh(x * 2.0 + b) - 1.0
    feed = {x: np.linspace(-1, 1, 4096 * 3, dtype=np.float32).reshape(4096, 3), b: np.float32([0, 1, 2])}
    with tf.Session(config=PLANNED) as s:
        expected = s.run(y, feed)
        fused = next(c for _, c in _executor(s).kernels.values() if getattr(c, "accepts_out", False))
    args = [feed[x], np.float32(2.0), feed[b], np.float32(1.0)]
    good = np.empty((4096, 3), np.float32)
    assert fused(*args, out=good) is good
    np.testing.assert_array_equal(good, expected)
    for wrong in (np.empty((3,), np.float32), np.empty((4096, 3), np.float64), np.empty((1, 3), np.float32)):
        result = fused(*args, out=wrong)
        assert result is not wrong
        np.testing.assert_array_equal(result, expected)
    x_value = feed[x].copy()
    assert fused(x_value, np.float32(2.0), feed[b], np.float32(1.0), out=x_value) is x_value  # in place
    np.testing.assert_array_equal(x_value, expected)
    small_out = np.empty((2, 3), np.float32)
    small = fused(feed[x][:2], np.float32(2.0), feed[b], np.float32(1.0), out=small_out)
    assert small is not small_out  # too small to be worth it: numpy allocates
    np.testing.assert_array_equal(small, expected[:2])


def test_a_fused_chain_stays_in_one_buffer_through_another_kernel_that_takes_out():
    """Sigmoid runs its own kernel inside the fused node (native where built), which takes ``out=`` too."""
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.sigmoid(x * 2.0 - 1.0) * 3.0
    feed = {x: np.linspace(-3, 3, 64 * 64, dtype=np.float32).reshape(64, 64)}
    with tf.Session(config=UNPLANNED) as s:
        expected = s.run(y, feed)
    with tf.Session(config=PLANNED) as s:
        np.testing.assert_array_equal(s.run(y, feed), expected)
        executor = _executor(s)
    node = next(n for n in executor.nodes if n.name == y.op.name)
    assert node.attrs["fused_ops"] == ["Mul", "Sub", "Sigmoid", "Mul"]
    args = [src.attrs["value"] if src.op_type == "Const" else feed[x] for src, _ in node.inputs]
    buf = np.empty((64, 64), np.float32)
    assert executor.kernels[id(node)][1](*args, out=buf) is buf
    np.testing.assert_array_equal(buf, expected)


@pytest.mark.parametrize("rows", [1, 512])
def test_planned_training_equals_unplanned(rows):
    x = tf.placeholder(tf.float32, [None, 8])
    labels = tf.placeholder(tf.int32, [None])
    h = tf.layers.dense(x, 16, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(0.1))
    logits = tf.layers.dense(tf.tanh(h * 0.5 + 0.1) * 2.0, 4, kernel_initializer=tf.constant_initializer(-0.05))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed = {x: np.linspace(-1, 1, rows * 8, dtype=np.float32).reshape(rows, 8), labels: np.arange(rows) % 4}
    losses = {}
    for name, config in (("on", PLANNED), ("off", UNPLANNED)):
        with tf.Session(config=config) as s:
            s.run(tf.global_variables_initializer())
            losses[name] = [s.run([loss, train], feed)[0] for _ in range(5)]
    assert losses["on"] == losses["off"]
