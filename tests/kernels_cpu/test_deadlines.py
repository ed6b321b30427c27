"""No silent hangs: a step that waits forever (a queue, an accumulator, another device) or never ends (a loop
whose condition stays true) stops at its deadline, ``RunOptions(timeout_in_ms=)`` or
``ConfigProto(operation_timeout_in_ms=)``, with a DeadlineExceededError that names the op it stopped in, and
a closed session stops it with CancelledError, as in TF1."""

import time

import pytest

import tensorweave as tf
from thread_helpers import start

BLOCKED = 0.2


def _endless_loop():
    return tf.while_loop(lambda i: i >= 0, lambda i: i + 1, [tf.constant(0)], name="endless")


def test_a_loop_that_never_ends_stops_at_the_run_deadline_and_names_the_loop():
    endless = _endless_loop()
    with tf.Session() as s:
        began = time.perf_counter()
        running = start(s.run, endless, None, tf.RunOptions(timeout_in_ms=200))
        with pytest.raises(tf.errors.DeadlineExceededError, match=r"(?s)deadline of 200 ms "
                           r"\(set by RunOptions.timeout_in_ms\).*in op 'endless/"):
            running.finish(10)
        assert time.perf_counter() - began < 5


def test_the_sessions_operation_timeout_stops_a_loop_on_the_parallel_executor():
    endless = _endless_loop()
    config = tf.ConfigProto(operation_timeout_in_ms=200, executor="dataflow", inter_op_parallelism_threads=4)
    with tf.Session(config=config) as s:
        with pytest.raises(tf.errors.DeadlineExceededError, match=r"ConfigProto.operation_timeout_in_ms"):
            start(s.run, endless).finish(10)
        assert s.run(tf.constant(3) + 1) == 4  # the session goes on working


def test_closing_the_session_stops_a_busy_step():
    endless = _endless_loop()
    s = tf.Session()
    running = start(s.run, endless)
    time.sleep(BLOCKED)
    s.close()
    with pytest.raises(tf.errors.CancelledError, match="closed"):
        running.finish(10)


@pytest.mark.parametrize("run_timeout", [0, -1])
def test_a_run_timeout_of_zero_or_less_leaves_the_sessions_timeout(run_timeout):
    """As TF1 (checked with TF 2.21's compat.v1 Session): only a positive RunOptions timeout overrides."""
    q = tf.FIFOQueue(1, tf.int32, shapes=[])
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as s:
        waiting = start(s.run, q.dequeue(), None, tf.RunOptions(timeout_in_ms=run_timeout))
        with pytest.raises(tf.errors.DeadlineExceededError, match="operation_timeout_in_ms"):
            waiting.finish(10)


def test_a_step_blocked_on_another_device_inside_a_loop_names_the_blocked_op_and_its_device():
    with tf.device("/cpu:1"):
        q = tf.FIFOQueue(5, tf.float32, shapes=[])
        fill = q.enqueue(1.0)

    def body(i, total):
        with tf.device("/cpu:1"):
            got = q.dequeue(name="take_one")
        with tf.device("/cpu:0"):
            return i + 1, total + got

    loop = tf.while_loop(lambda i, total: i < 3, body, [0, 0.0])
    config = tf.ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=4, allow_soft_placement=False)
    with tf.Session(config=config) as s:
        s.run(fill)  # one of the three elements the loop needs
        with pytest.raises(tf.errors.DeadlineExceededError, match=r"(?s)in op 'while/take_one'.*device:CPU:1"):
            start(s.run, loop, None, tf.RunOptions(timeout_in_ms=1000)).finish(10)  # well after it blocks
        assert s.run(q.size()) == 0  # the first iteration took the one element
