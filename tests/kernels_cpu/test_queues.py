"""Queues: order, batching, padding, shuffling, priorities, blocking, closing, deadlines and cancellation."""

import time

import numpy as np
import pytest

import tensorweave as tf
from thread_helpers import start

BLOCKED = 0.2  # seconds after which a thread that has not finished counts as blocked


def test_fifo_order_batches_and_size(sess):
    q = tf.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[2], []])
    sess.run(q.enqueue(([1.0, 2.0], 7)))
    sess.run(q.enqueue_many((np.arange(6, dtype=np.float32).reshape(3, 2), [8, 9, 10])))
    assert sess.run(q.size()) == 4
    x, i = sess.run(q.dequeue())
    np.testing.assert_array_equal(x, [1.0, 2.0])
    assert i == 7
    xs, ids = sess.run(q.dequeue_many(3))
    np.testing.assert_array_equal(xs, np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(ids, [8, 9, 10])
    assert sess.run(q.size()) == 0


def test_static_shapes_of_dequeued_tensors():
    q = tf.FIFOQueue(4, [tf.float32, tf.int32], shapes=[[2, 3], []])
    x, i = q.dequeue()
    assert x.shape.as_list() == [2, 3] and i.shape.as_list() == []
    xs, _ = q.dequeue_many(5)
    assert xs.shape.as_list() == [5, 2, 3]
    ys, _ = q.dequeue_up_to(5)
    assert ys.shape.as_list() == [None, 2, 3]


def test_named_components_enqueue_and_dequeue_dicts(sess):
    q = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], []], names=["label", "score"])
    sess.run(q.enqueue({"label": 3, "score": 0.5}))
    out = sess.run(q.dequeue())
    assert out == {"label": 3, "score": 0.5}
    with pytest.raises(ValueError, match="do not match the names"):
        q.enqueue({"label": 1})


def test_dequeue_many_zero_gives_an_empty_batch(sess):
    q = tf.FIFOQueue(5, tf.float32, shapes=[[3]])
    assert sess.run(q.dequeue_many(0)).shape == (0, 3)


def test_closed_queue_drains_then_raises_out_of_range(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[])
    sess.run(q.enqueue_many([[1, 2]]))
    sess.run(q.close())
    assert sess.run(q.is_closed())
    with pytest.raises(tf.errors.CancelledError, match="is closed"):
        sess.run(q.enqueue(3))
    with pytest.raises(tf.errors.OutOfRangeError, match="insufficient elements"):
        sess.run(q.dequeue_many(3))  # puts the two elements it took back
    np.testing.assert_array_equal(sess.run(q.dequeue_up_to(3)), [1, 2])
    with pytest.raises(tf.errors.OutOfRangeError) as info:
        sess.run(q.dequeue())
    assert "fifo_queue_Dequeue" in str(info.value)


def test_full_queue_blocks_the_enqueuer_until_a_dequeue(sess):
    q = tf.FIFOQueue(2, tf.int32, shapes=[])
    x = tf.placeholder(tf.int32, [])
    enqueue, dequeue = q.enqueue(x), q.dequeue()
    sess.run(enqueue, {x: 1})
    sess.run(enqueue, {x: 2})
    waiter = start(sess.run, enqueue, {x: 3})
    time.sleep(BLOCKED)
    assert waiter.is_alive(), "an enqueue to a full queue must wait"
    assert sess.run(dequeue) == 1
    waiter.finish()
    assert [sess.run(dequeue) for _ in range(2)] == [2, 3]


def test_empty_queue_blocks_the_dequeuer_until_an_enqueue(sess):
    q = tf.FIFOQueue(2, tf.float32, shapes=[])
    waiter = start(sess.run, q.dequeue_many(2))
    time.sleep(BLOCKED)
    assert waiter.is_alive()
    sess.run(q.enqueue(1.0))
    time.sleep(0.05)
    assert waiter.is_alive(), "dequeue_many(2) needs two elements"
    sess.run(q.enqueue(2.0))
    np.testing.assert_array_equal(waiter.finish(), [1.0, 2.0])


def test_dequeue_many_larger_than_capacity_collects_as_elements_arrive(sess):
    q = tf.FIFOQueue(3, tf.int32, shapes=[])
    x = tf.placeholder(tf.int32, [None])
    enqueue = q.enqueue_many([x])
    waiter = start(sess.run, q.dequeue_many(10))
    for chunk in np.arange(10).reshape(5, 2):
        sess.run(enqueue, {x: chunk})
    np.testing.assert_array_equal(waiter.finish(), np.arange(10))


def test_deadline_fails_a_blocked_dequeue_and_loses_nothing(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[])
    sess.run(q.enqueue(41))
    start_time = time.perf_counter()
    with pytest.raises(tf.errors.DeadlineExceededError, match="deadline of 100 ms"):
        sess.run(q.dequeue_many(2), options=tf.RunOptions(timeout_in_ms=100))
    assert time.perf_counter() - start_time < 5
    assert sess.run(q.size()) == 1  # the element the timed-out dequeue held went back
    assert sess.run(q.dequeue()) == 41


def test_operation_timeout_in_config_applies_to_every_run():
    q = tf.FIFOQueue(1, tf.int32, shapes=[])
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as s:
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(q.dequeue())


def test_close_keeps_pending_enqueues_unless_cancelled(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[])
    x = tf.placeholder(tf.int32, [])
    enqueue, dequeue = q.enqueue(x), q.dequeue()
    sess.run(enqueue, {x: 1})
    pending = start(sess.run, enqueue, {x: 2})
    time.sleep(BLOCKED)
    sess.run(q.close())
    assert pending.is_alive(), "a plain close leaves waiting enqueues in place"
    assert sess.run(dequeue) == 1
    pending.finish()
    assert sess.run(dequeue) == 2

    q2 = tf.FIFOQueue(1, tf.int32, shapes=[])
    enqueue2 = q2.enqueue(x)
    sess.run(enqueue2, {x: 1})
    cancelled = start(sess.run, enqueue2, {x: 2})
    time.sleep(BLOCKED)
    sess.run(q2.close(cancel_pending_enqueues=True))
    with pytest.raises(tf.errors.CancelledError, match="cancel_pending_enqueues"):
        cancelled.finish()
    assert sess.run(q2.dequeue_up_to(5)).tolist() == [1]


def test_closing_the_queue_wakes_a_blocked_dequeuer_with_out_of_range(sess):
    q = tf.FIFOQueue(3, tf.int32, shapes=[])
    waiter = start(sess.run, q.dequeue())
    time.sleep(BLOCKED)
    sess.run(q.close())
    with pytest.raises(tf.errors.OutOfRangeError):
        waiter.finish()


def test_closing_the_session_cancels_blocked_steps():
    q = tf.FIFOQueue(1, tf.int32, shapes=[])
    s = tf.Session()
    s.run(q.enqueue(1))
    blocked_enqueue = start(s.run, q.enqueue(2))
    q2 = tf.FIFOQueue(1, tf.int32, shapes=[])
    blocked_dequeue = start(s.run, q2.dequeue())
    time.sleep(BLOCKED)
    s.close()
    for waiter in (blocked_enqueue, blocked_dequeue):
        with pytest.raises(tf.errors.CancelledError, match="Session was closed"):
            waiter.finish()


def test_enqueue_checks_types_and_shapes(sess):
    q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []])
    with pytest.raises(TypeError, match="component 1 .* must be int32"):
        q.enqueue(([1.0, 2.0], tf.constant(1.5)))
    with pytest.raises(ValueError, match="component 0 .* has shape"):
        q.enqueue(([1.0, 2.0, 3.0], 1))
    with pytest.raises(ValueError, match="2 components, but 1"):
        q.enqueue([[1.0, 2.0]])
    x = tf.placeholder(tf.float32, None)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"component 0 .*expected \[2\], got \[3\]"):
        sess.run(q.enqueue((x, 1)), {x: [1.0, 2.0, 3.0]})
    n = tf.placeholder(tf.int32, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="component 1 has 3 elements .* component 0 has 2"):
        sess.run(q.enqueue_many((np.zeros((2, 2), np.float32), n)), {n: [1, 2, 3]})


def test_fully_defined_shapes_are_required_except_for_padding_queues():
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(3, tf.float32, shapes=[[None]])
    with pytest.raises(ValueError, match="one shape per component"):
        tf.PaddingFIFOQueue(3, tf.float32, shapes=None)


def test_padding_queue_pads_each_batch_to_its_longest_element(sess):
    q = tf.PaddingFIFOQueue(10, [tf.int32, tf.string], shapes=[[None], []])
    x = tf.placeholder(tf.int32, [None])
    w = tf.placeholder(tf.string, [])
    enqueue = q.enqueue((x, w))
    rows = [[1], [2, 3, 4], [5, 6]]
    for i, r in enumerate(rows):
        sess.run(enqueue, {x: r, w: f"w{i}"})
    batch, words = sess.run(q.dequeue_many(3))
    expected = np.zeros((3, 3), np.int32)
    for i, r in enumerate(rows):
        expected[i, :len(r)] = r
    np.testing.assert_array_equal(batch, expected)
    assert list(words) == [b"w0", b"w1", b"w2"] or list(words) == ["w0", "w1", "w2"]


def test_random_shuffle_queue_keeps_min_after_dequeue_until_closed(sess):
    q = tf.RandomShuffleQueue(10, 3, tf.int32, shapes=[], seed=7)
    sess.run(q.enqueue_many([np.arange(4)]))
    first = sess.run(q.dequeue())
    waiter = start(sess.run, q.dequeue())
    time.sleep(BLOCKED)
    assert waiter.is_alive(), "only min_after_dequeue elements are left"
    sess.run(q.close())
    rest = [waiter.finish()] + list(sess.run(q.dequeue_up_to(10)))
    assert sorted([first] + rest) == [0, 1, 2, 3]


def test_random_shuffle_queue_is_a_seeded_permutation():
    def drain(seed):
        tf.reset_default_graph()
        q = tf.RandomShuffleQueue(100, 0, tf.int32, shapes=[], seed=seed)
        with tf.Session() as s:
            s.run(q.enqueue_many([np.arange(50)]))
            return s.run(q.dequeue_many(50)).tolist()
    a, b, c = drain(1), drain(1), drain(2)
    assert sorted(a) == list(range(50)) and a != list(range(50))
    assert a == b and a != c
    with pytest.raises(ValueError, match="min_after_dequeue .* less than capacity"):
        tf.RandomShuffleQueue(5, 5, tf.int32)


def test_priority_queue_hands_out_lowest_priority_first(sess):
    q = tf.PriorityQueue(10, [tf.string], shapes=[[]])
    sess.run(q.enqueue_many(([5, 1, 3, 1], ["e", "a", "c", "b"])))
    sess.run(q.enqueue((0, "z")))
    priorities, values = sess.run(q.dequeue_many(5))
    assert priorities.tolist() == [0, 1, 1, 3, 5]
    assert [v.decode() if isinstance(v, bytes) else v for v in values] == ["z", "a", "b", "c", "e"]
    assert q.dtypes == [tf.int64, tf.string]


def test_one_step_can_both_wait_on_and_feed_a_queue_with_the_dataflow_executor():
    q = tf.FIFOQueue(2, tf.int32, shapes=[])
    dequeued = q.dequeue()
    value = tf.add(tf.add(tf.constant(1), 1), 1)  # the enqueue comes later in the step than the dequeue
    enqueue = q.enqueue(value)
    config = tf.ConfigProto(executor="dataflow", inter_op_parallelism_threads=1)
    with tf.Session(config=config) as s:
        out, _ = s.run([dequeued, enqueue], options=tf.RunOptions(timeout_in_ms=5000))
    assert out == 3


def test_shared_queue_with_another_signature_is_refused():
    tf.FIFOQueue(3, tf.int32, shapes=[], shared_name="shared_q").size()
    other = tf.FIFOQueue(3, tf.float32, shapes=[], shared_name="shared_q")
    first = tf.get_default_graph().get_operation_by_name("fifo_queue_Size")
    with tf.Session() as s:
        s.run(first)
        with pytest.raises(tf.errors.InvalidArgumentError, match="shared queue 'shared_q'"):
            s.run(other.size())
