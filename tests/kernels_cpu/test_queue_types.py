"""Every queue type with every method: enqueue, enqueue_many, dequeue, dequeue_many, dequeue_up_to, size,
close (with and without cancel_pending_enqueues), is_closed; capacity as a hard bound for each, deadlines,
and OutOfRangeError once closed and drained."""

import time

import numpy as np
import pytest

import tensorweave as tf
from thread_helpers import start

BLOCKED = 0.2
KINDS = ["fifo", "padding_fifo", "random_shuffle", "priority"]


class Spec:
    """A queue of int32 scalars 'value' (plus an int64 priority for PriorityQueue, equal to the value),
    with what each kind must hand out first."""

    def __init__(self, kind, capacity):
        self.kind = kind
        if kind == "fifo":
            self.queue = tf.FIFOQueue(capacity, [tf.int32], shapes=[[]])
        elif kind == "padding_fifo":
            self.queue = tf.PaddingFIFOQueue(capacity, [tf.int32], shapes=[[]])
        elif kind == "random_shuffle":
            self.queue = tf.RandomShuffleQueue(capacity, 0, [tf.int32], shapes=[[]], seed=3)
        else:
            self.queue = tf.PriorityQueue(capacity, [tf.int32], shapes=[[]])

    def element(self, value):
        return (np.int64(value), np.int32(value)) if self.kind == "priority" else (np.int32(value),)

    def elements(self, values):
        values = np.asarray(values)
        return (values.astype(np.int64), values.astype(np.int32)) if self.kind == "priority" else (
            values.astype(np.int32),)

    def values(self, out):
        """The int32 'value' component of a dequeued element or batch."""
        out = out if isinstance(out, (list, tuple)) else [out]
        return np.asarray(out[-1]).tolist()

    def as_list(self, out):
        return np.atleast_1d(self.values(out)).tolist()

    def expect_first(self, got, sent):
        """``got`` are the first elements out of a queue that was sent ``sent``."""
        if self.kind == "random_shuffle":
            assert len(set(got)) == len(got) and set(got) <= set(sent)
        elif self.kind == "priority":
            assert got == sorted(sent)[:len(got)]
        else:
            assert got == list(sent)[:len(got)]


@pytest.mark.parametrize("kind", KINDS)
def test_every_method(kind, sess):
    spec = Spec(kind, 10)
    q = spec.queue
    sess.run(q.enqueue(spec.element(5)))
    sess.run(q.enqueue_many(spec.elements([3, 8, 1, 9, 2])))
    assert sess.run(q.size()) == 6 and not sess.run(q.is_closed())
    first = spec.values(sess.run(q.dequeue()))
    batch = spec.values(sess.run(q.dequeue_many(3)))
    assert len(batch) == 3
    spec.expect_first([first] + batch, [5, 3, 8, 1, 9, 2])
    assert sess.run(q.size()) == 2
    sess.run(q.close())
    assert sess.run(q.is_closed())
    with pytest.raises(tf.errors.CancelledError):
        sess.run(q.enqueue(spec.element(7)))
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(q.dequeue_many(3))  # only two are left: they stay
    rest = spec.values(sess.run(q.dequeue_up_to(5)))
    assert sorted([first] + batch + rest) == [1, 2, 3, 5, 8, 9]
    for op in (q.dequeue(), q.dequeue_up_to(1), q.dequeue_many(1)):
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(op)


@pytest.mark.parametrize("kind", KINDS)
def test_capacity_is_a_hard_bound_and_an_empty_queue_blocks(kind, sess):
    spec = Spec(kind, 2)
    q = spec.queue
    sess.run(q.enqueue_many(spec.elements([4, 6])))
    blocked = start(sess.run, q.enqueue(spec.element(5)))
    time.sleep(BLOCKED)
    assert blocked.is_alive() and sess.run(q.size()) == 2
    got = spec.as_list(sess.run(q.dequeue()))
    blocked.finish()
    got += spec.values(sess.run(q.dequeue_many(2)))
    assert sorted(got) == [4, 5, 6]
    waiting = start(sess.run, q.dequeue())
    time.sleep(BLOCKED)
    assert waiting.is_alive()
    sess.run(q.enqueue(spec.element(7)))
    assert spec.values(waiting.finish()) == 7
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=50))


@pytest.mark.parametrize("kind", KINDS)
def test_close_with_and_without_cancelling_pending_enqueues(kind, sess):
    spec = Spec(kind, 1)
    q = spec.queue
    sess.run(q.enqueue(spec.element(1)))
    pending = start(sess.run, q.enqueue(spec.element(2)))
    time.sleep(BLOCKED)
    sess.run(q.close())
    assert pending.is_alive()
    got = spec.as_list(sess.run(q.dequeue()))
    pending.finish()
    got += spec.values(sess.run(q.dequeue_up_to(3)))
    assert sorted(got) == [1, 2]

    spec = Spec(kind, 1)
    q = spec.queue
    sess.run(q.enqueue(spec.element(1)))
    cancelled = start(sess.run, q.enqueue(spec.element(2)))
    time.sleep(BLOCKED)
    sess.run(q.close(cancel_pending_enqueues=True))
    with pytest.raises(tf.errors.CancelledError):
        cancelled.finish()
    assert spec.values(sess.run(q.dequeue_up_to(3))) == [1]
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(q.dequeue())
