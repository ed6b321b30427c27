"""Memory planning in loops, on the dataflow executor and the structured one: a kernel that accepts ``out=``
writes over an input only when it dies there (the structured executor: no later line reads it) and the reference
count says nobody else holds it, so values carried to the next iteration, given to every iteration, fed, fetched
or read by another frame keep their contents, and every result equals the one computed with planning off."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import memory_plan

pytestmark = pytest.mark.cpu_only

UNPLANNED_OPTIONS = tf.OptimizerOptions(do_memory_planning=False)
WIDTH = 256  # rows of 256 float32: over memory_plan.SMALL_BYTES from 4 rows on


EXECUTORS = ["dataflow", "structured"]


def _config(planned, threads=1, executor="dataflow"):
    """Plain loops run in the structured executor unless the dataflow executor is asked for."""
    options = tf.OptimizerOptions() if planned else UNPLANNED_OPTIONS
    return tf.ConfigProto(inter_op_parallelism_threads=threads, executor="dataflow" if executor == "dataflow" else None,
                          graph_options=tf.GraphOptions(optimizer_options=options))


def _dataflow(sess, kind="dataflow"):
    """The session's executors of that kind (the dataflow executors, by default)."""
    return [ex for plan in sess._plans.values() for _, ex in plan.partitions if ex.kind == kind]


def _in_place(sess, kind="dataflow"):
    return sum(ex.memory.stats()["in_place"] for ex in _dataflow(sess, kind))


def _feed(rows=64, k=0):
    return np.linspace(-2, 2, rows * WIDTH, dtype=np.float32).reshape(rows, WIDTH) * (k + 1)


def _loop(x, scale, n=6):
    """A loop whose body has fused elementwise chains; ``scale`` (from outside) reaches every iteration."""
    def body(i, h, acc):
        z = tf.tanh(h * 0.5 + scale) * 0.9
        return i + 1, tf.sigmoid(z - 0.1) * 2.0 - 1.0, acc + z * 0.25

    _, h, acc = tf.while_loop(lambda i, h, acc: i < n, body, [tf.constant(0), x, tf.zeros_like(x)])
    return h, acc


def _run_both(build, feeds, threads=1, steps=1, init=False, executor="dataflow"):
    """Runs ``build()``'s fetches with planning on and off; returns both results and the planned session's
    in-place count."""
    results, counts = {}, {}
    for planned in (True, False):
        g = tf.Graph()
        with g.as_default():
            fetches, placeholders = build()
            with tf.Session(graph=g, config=_config(planned, threads, executor)) as s:
                if init:
                    s.run(tf.global_variables_initializer())
                results[planned] = [s.run(fetches, dict(zip(placeholders, f))) for f in feeds for _ in range(steps)]
                assert _dataflow(s, executor)
                counts[planned] = _in_place(s, executor) if planned else None
                if not planned:
                    assert all(ex.memory is None for ex in _dataflow(s, executor))
    return results[True], results[False], counts[True]


def _assert_identical(on, off):
    for a, b in zip(on, off):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
            assert np.asarray(x).dtype == np.asarray(y).dtype


@pytest.mark.parametrize("executor, threads", [("dataflow", 1), ("dataflow", 2), ("structured", 1)])
def test_loop_results_equal_unplanned_and_inputs_are_written_in_place(executor, threads):
    def build():
        x = tf.placeholder(tf.float32, [None, WIDTH])
        scale = tf.exp(x[:1] * 0.1)  # computed outside, read by every iteration through a constant Enter
        h, acc = _loop(x, scale)
        return [h, acc, tf.reduce_sum(h * acc)], [x]

    on, off, in_place = _run_both(build, [(_feed(64, k),) for k in range(3)] + [(_feed(1),)], threads, steps=2,
                                  executor=executor)
    _assert_identical(on, off)
    assert in_place > 0


@pytest.mark.parametrize("executor", EXECUTORS)
def test_gradients_through_a_loop_equal_unplanned(executor):
    def build():
        x = tf.placeholder(tf.float32, [None, WIDTH])
        w = tf.Variable(np.linspace(-0.5, 0.5, WIDTH, dtype=np.float32))
        h, acc = _loop(x * w, tf.tanh(w) * 0.1)
        loss = tf.reduce_mean(tf.square(h + acc))
        grads = tf.gradients(loss, [x, w])
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        return [loss, grads, train, w.read_value()], [x]

    on, off, in_place = _run_both(build, [(_feed(64, k),) for k in range(4)], init=True, executor=executor)
    assert in_place > 0
    for a, b in zip(on, off):
        assert a[0] == b[0]
        for x, y in zip(a[1], b[1]):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(a[3], b[3])


@pytest.mark.parametrize("executor", EXECUTORS)
def test_values_carried_to_the_next_iteration_or_read_twice_are_not_written_over(executor):
    """Each iteration carries its loop variable on as ``prev`` too, and the next one reads it after a node
    that could write over it: the TensorArray holds every iteration's own value."""
    def build():
        x = tf.placeholder(tf.float32, [None, WIDTH])

        def body(i, h, prev, ta):
            new = tf.tanh(h * 0.5 + 0.25) * 1.5  # h dies here unless something else holds it
            return i + 1, new, h, ta.write(i, tf.exp(prev * 0.1) + 0.0)

        ta = tf.TensorArray(tf.float32, size=5)
        _, h, prev, ta = tf.while_loop(lambda i, *_: i < 5, body, [tf.constant(0), x, x * 1.0, ta])
        return [h, prev, ta.stack()], [x]

    feed = _feed(32)
    on, off, _ = _run_both(build, [(feed,)], steps=2, executor=executor)
    _assert_identical(on, off)
    expected = [feed * 1.0]
    for _ in range(5):
        expected.append(np.tanh(expected[-1] * 0.5 + 0.25) * 1.5)
    for h, prev, stacked in on:
        np.testing.assert_allclose(h, expected[5], rtol=1e-6)
        np.testing.assert_allclose(prev, expected[4], rtol=1e-6)
        np.testing.assert_allclose(stacked, np.exp(np.stack(expected[:1] + expected[:4]) * 0.1), rtol=1e-5)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_feeds_fetches_and_exits_read_by_two_consumers_keep_their_values(executor):
    x = tf.placeholder(tf.float32, [None, WIDTH])
    h, acc = _loop(x, 0.5)
    after = tf.tanh(h * 2.0) - 1.0  # h, an Exit, is read by two nodes after the loop
    total = tf.reduce_sum(tf.exp(h * 0.5) + after)
    feed = _feed(64)
    with tf.Session(config=_config(True, executor=executor)) as s:
        got = [s.run([h, acc, after, total], {x: feed}) for _ in range(3)]
        copies = [[np.copy(v) for v in r] for r in got]
        assert _in_place(s, executor) > 0
    with tf.Session(config=_config(False, executor=executor)) as s:
        expected = s.run([h, acc, after, total], {x: feed})
    np.testing.assert_array_equal(feed, _feed(64))
    for r, c in zip(got, copies):
        for v, copy, e in zip(r, c, expected):
            np.testing.assert_array_equal(v, copy)
            np.testing.assert_array_equal(v, e)


def test_large_buffers_are_kept_for_later_iterations_and_steps_yet_fetches_never_change():
    rows = memory_plan.KEEP_MIN_BYTES // (4 * WIDTH)  # 1 MiB values
    x = tf.placeholder(tf.float32, [None, WIDTH])
    w = tf.Variable(np.eye(WIDTH, dtype=np.float32) * 0.5)

    def body(i, h, acc):
        z = tf.tanh(h * 0.5 + 0.1) * 0.9  # the fed x is not written over: a kept buffer takes z
        return i + 1, tf.sigmoid(tf.matmul(z, w) - 0.1) * 2.0 - 1.0, acc + z * 0.25

    _, h, acc = tf.while_loop(lambda i, *_: i < 4, body, [tf.constant(0), x, tf.zeros_like(x)])
    feeds = [_feed(rows, k) for k in range(4)]
    with tf.Session(config=_config(False)) as s:
        s.run(w.initializer)
        expected = [s.run([h, acc], {x: f}) for f in feeds]
    with tf.Session(config=_config(True)) as s:
        s.run(w.initializer)
        got = [s.run([h, acc], {x: f}) for f in feeds + feeds]
        stats = max(_dataflow(s), key=lambda ex: len(ex.items)).memory.stats()  # the loop's, not the initializer's
    assert stats["reused"] >= 3 and stats["in_place"] > 0
    for k, values in enumerate(got):
        for v, e in zip(values, expected[k % 4]):
            np.testing.assert_array_equal(v, e)
    for f, k in zip(feeds, range(4)):
        np.testing.assert_array_equal(f, _feed(rows, k))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_large_value_another_holder_keeps_is_not_kept_when_a_kernel_drops_it(executor):
    """The MatMul drops z while a TensorArray still holds it; the next iteration's fused node, whose input
    h a second TensorArray holds, asks for a kept buffer and must not get z's."""
    rows = memory_plan.KEEP_MIN_BYTES // (4 * WIDTH)

    def build():
        x = tf.placeholder(tf.float32, [None, WIDTH])
        w = tf.Variable(np.eye(WIDTH, dtype=np.float32) * 0.5)

        def body(i, h, zs, hs):
            z = tf.tanh(h * 0.5 + 0.1) * 0.9
            return i + 1, tf.sigmoid(tf.matmul(z, w) - 0.1) * 2.0 - 1.0, zs.write(i, z), hs.write(i, h)

        arrays = [tf.TensorArray(tf.float32, size=4) for _ in range(2)]
        _, h, zs, hs = tf.while_loop(lambda i, *_: i < 4, body, [tf.constant(0), x] + arrays)
        return [h, zs.stack(), hs.stack()], [x]

    on, off, _ = _run_both(build, [(_feed(rows),)], steps=3, init=True, executor=executor)
    _assert_identical(on, off)


def test_offers_count_references_as_the_inputs_list_holds_them():
    slot = memory_plan.BufferSlot(capacity=1)
    alone = [np.float32(1.0), np.ones(4)]
    assert memory_plan.offer_listed(slot, alone, (0, 1)) is alone[1]
    shared = [np.ones(4)]
    other = shared[0]
    assert memory_plan.offer_listed(slot, shared, (0,)) is None
    assert memory_plan.offer_listed(slot, [np.ones(8)[2:]], (0,)) is None  # a view does not own its memory
    twice = np.ones(4)
    assert memory_plan.offer_listed(slot, [twice, twice], (0,)) is None
    assert slot.in_place == 1 and other is shared[0]


def test_a_value_is_kept_only_when_the_inputs_list_is_its_only_holder():
    slot = memory_plan.BufferSlot(capacity=2)
    slot.wanted = True
    large = memory_plan.KEEP_MIN_BYTES // 8
    held = np.ones(large)
    memory_plan.keep_listed([held, np.ones(large)[1:], np.ones(8)], [(0, slot), (1, slot), (2, slot)])
    assert slot.buffers == []  # another holder, a view, too small
    memory_plan.keep_listed([np.float32(1.0), np.ones(large)], [(1, slot)])
    assert len(slot.buffers) == 1 and memory_plan.offer_listed(slot, [held], (0,)).size == large


def _cond_reads_the_loop_variable(x):
    """Only the condition's fused chain reads h: in the last check too, after which h leaves the loop."""
    def body(i, h):
        return i + 1, tf.tanh(x * tf.cast(i + 1, tf.float32) * 0.1)
    _, h = tf.while_loop(lambda i, h: tf.reduce_sum(tf.tanh(h * 0.5 + 1.0)) > -1.0 - tf.cast(i, tf.float32),
                         body, [tf.constant(0), x * 1.0], maximum_iterations=4)
    return [h]


def _body_reads_the_loop_variable_after_a_taker(x):
    def body(i, h):
        z = tf.tanh(h * 0.5 + 0.25) * 1.5
        return i + 1, z + tf.reduce_mean(h)  # h is read again after the fused node
    return [tf.while_loop(lambda i, h: i < 4, body, [tf.constant(0), x])[1]]


def _nested_loop_reads_the_outer_variable(x):
    def outer(i, h):
        _, g = tf.while_loop(lambda j, g: j < 3, lambda j, g: (j + 1, tf.tanh(g * 0.5 + h) * 0.9),
                             [tf.constant(0), h * 1.0])
        return i + 1, g
    return [tf.while_loop(lambda i, h: i < 3, outer, [tf.constant(0), x])[1]]


def _unchanged_loop_variable(x):
    def body(i, h, same):
        return i + 1, tf.tanh(same * 0.5 + h) * 0.9, same  # `same` is carried on as it is
    _, h, same = tf.while_loop(lambda i, *_: i < 4, body, [tf.constant(0), x, x * 2.0])
    return [h, same]


def _outside_value_and_cond_branches(x):
    outside = tf.tanh(x * 0.1 + 0.5)  # computed before the loop, read by every iteration

    def body(i, h):
        h = tf.cond(i % 2 < 1, lambda: tf.tanh(h * 0.5 + outside), lambda: tf.sigmoid(h * 2.0 - outside))
        return i + 1, h * 0.9 + 0.05
    _, h = tf.while_loop(lambda i, h: i < 5, body, [tf.constant(0), x])
    return [h, outside]


@pytest.mark.parametrize("program", [_cond_reads_the_loop_variable, _body_reads_the_loop_variable_after_a_taker,
                                     _nested_loop_reads_the_outer_variable, _unchanged_loop_variable,
                                     _outside_value_and_cond_branches])
def test_structured_loops_write_over_only_what_no_later_line_or_iteration_reads(program):
    def build():
        x = tf.placeholder(tf.float32, [None, WIDTH])
        return program(x), [x]

    on, off, _ = _run_both(build, [(_feed(64, k),) for k in range(2)], steps=2, executor="structured")
    _assert_identical(on, off)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_large_accumulator_adds_in_place(executor):
    """acc + matmul(...) over static shapes: a lone Add, large, gets a fused node that takes out=, and the
    carried accumulator (or the dying product) is written over every iteration."""
    def build():
        x = tf.placeholder(tf.float32, [64, WIDTH])
        w = tf.constant(np.eye(WIDTH, dtype=np.float32) * 0.5)

        def body(i, h, acc):
            return i + 1, tf.tanh(h * 0.5 + 0.1), acc + tf.matmul(h, w)

        _, h, acc = tf.while_loop(lambda i, *_: i < 6, body, [tf.constant(0), x, tf.zeros([64, WIDTH])])
        return [h, acc], [x]

    on, off, in_place = _run_both(build, [(_feed(64, k),) for k in range(2)], steps=2, executor=executor)
    _assert_identical(on, off)
    assert in_place >= 2 * 2 * 6  # every iteration's Add, at least
