"""Concurrent steps: Coordinator, QueueRunner shutdown, many threads in one Session, and stress tests."""

import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from thread_helpers import start

BLOCKED = 0.2


# ---- Coordinator ----------------------------------------------------------------------------------------
def test_coordinator_join_reraises_the_first_requested_exception():
    coord = tf.train.Coordinator()

    def worker(i):
        with coord.stop_on_exception():
            if i == 1:
                raise ValueError("worker 1 failed")
            coord.wait_for_stop()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    with pytest.raises(ValueError, match="worker 1 failed"):
        coord.join(threads, stop_grace_period_secs=5)
    assert coord.should_stop() and coord.joined
    with pytest.raises(RuntimeError, match="after join"):
        coord.request_stop(RuntimeError("after join"))  # once joined, a late error surfaces in its thread


def test_out_of_range_is_a_clean_stop_and_clear_stop_resets():
    coord = tf.train.Coordinator()
    assert not coord.wait_for_stop(0.01)
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "input exhausted"))
    assert coord.should_stop()
    coord.join([])  # nothing re-raised
    coord.clear_stop()
    assert not coord.should_stop() and not coord.joined


def test_join_names_threads_that_ignore_the_stop():
    coord = tf.train.Coordinator()
    release = threading.Event()
    stubborn = threading.Thread(target=release.wait, name="stubborn-thread", daemon=True)
    stubborn.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="stubborn-thread"):
        coord.join([stubborn], stop_grace_period_secs=0.1)
    release.set()


def test_looper_thread_calls_its_target_until_the_stop():
    coord = tf.train.Coordinator()
    calls = []
    tf.train.LooperThread.loop(coord, 0.01, calls.append, args=(1,))
    time.sleep(0.2)
    coord.request_stop()
    coord.join(stop_grace_period_secs=5)
    assert len(calls) >= 3


# ---- QueueRunner --------------------------------------------------------------------------------------
def _counting_runner(capacity=4, batch=2):
    """A queue fed by a runner that enqueues [k, k+1, ...] from a counter queue of its own."""
    counter = tf.FIFOQueue(100, tf.int32, shapes=[])
    queue = tf.FIFOQueue(capacity, tf.int32, shapes=[])
    runner = tf.train.QueueRunner(queue, [queue.enqueue(counter.dequeue())])
    return counter, queue, runner


def test_queue_runner_feeds_a_queue_and_stops_with_the_coordinator(sess):
    counter, queue, runner = _counting_runner()
    tf.train.add_queue_runner(runner)
    sess.run(counter.enqueue_many([np.arange(50)]))
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    assert len(threads) == 2  # the enqueue thread and the one that cancels it on stop
    got = sess.run(queue.dequeue_many(10))
    np.testing.assert_array_equal(got, np.arange(10))
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)
    assert sess.run(queue.is_closed())


def test_shutdown_with_a_full_queue_is_clean(sess):
    counter, queue, runner = _counting_runner(capacity=2)
    sess.run(counter.enqueue_many([np.arange(50)]))
    coord = tf.train.Coordinator()
    threads = runner.create_threads(sess, coord=coord, daemon=True, start=True)
    deadline = time.monotonic() + 5
    while sess.run(queue.size()) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(BLOCKED)  # the runner now waits for room
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)  # no deadlock, nothing re-raised
    assert not any(t.is_alive() for t in threads)


def test_shutdown_with_empty_queues_is_clean(sess):
    counter, queue, runner = _counting_runner()  # the counter queue stays empty: the runner waits upstream
    coord = tf.train.Coordinator()
    threads = runner.create_threads(sess, coord=coord, daemon=True, start=True)
    consumer = start(sess.run, queue.dequeue())
    time.sleep(BLOCKED)
    assert consumer.is_alive()
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)
    with pytest.raises(tf.errors.OutOfRangeError):
        consumer.finish()  # the closed, empty queue wakes its consumer too


def test_runner_threads_end_when_their_input_runs_out_and_close_the_queue(sess):
    counter, queue, runner = _counting_runner(capacity=10)
    sess.run(counter.enqueue_many([np.arange(3)]))
    sess.run(counter.close())
    coord = tf.train.Coordinator()
    threads = runner.create_threads(sess, coord=coord, start=True)
    got = []
    with pytest.raises(tf.errors.OutOfRangeError):
        while True:
            got.append(sess.run(queue.dequeue()))
    assert got == [0, 1, 2]
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)


def test_runner_errors_reach_the_coordinator():
    queue = tf.FIFOQueue(4, tf.float32, shapes=[])
    x = tf.placeholder(tf.float32, [])
    runner = tf.train.QueueRunner(queue, [queue.enqueue(x)])  # x is never fed: every run fails
    with tf.Session() as s:
        coord = tf.train.Coordinator()
        threads = runner.create_threads(s, coord=coord, start=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must feed a value"):
            coord.join(threads, stop_grace_period_secs=5)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_runner_without_coordinator_keeps_its_exceptions():
    queue = tf.FIFOQueue(4, tf.float32, shapes=[])
    x = tf.placeholder(tf.float32, [])
    runner = tf.train.QueueRunner(queue, [queue.enqueue(x)])
    with tf.Session() as s:
        threads = runner.create_threads(s, daemon=True, start=True)
        for t in threads:
            t.join(5)
    assert len(runner.exceptions_raised) == 1
    assert isinstance(runner.exceptions_raised[0], tf.errors.InvalidArgumentError)


def test_create_threads_twice_for_one_session_starts_nothing_new(sess):
    counter, queue, runner = _counting_runner()
    coord = tf.train.Coordinator()
    first = runner.create_threads(sess, coord=coord, daemon=True, start=True)
    assert runner.create_threads(sess, coord=coord) == []
    coord.request_stop()
    coord.join(first, stop_grace_period_secs=5)


def test_start_queue_runners_needs_a_session():
    with pytest.raises(ValueError, match="no default session"):
        tf.train.start_queue_runners()


# ---- many threads in one session ------------------------------------------------------------------------
def test_session_run_from_many_threads_compiles_each_signature_once(monkeypatch):
    from tensorweave.runtime import plan as plan_mod
    calls = []
    real = plan_mod.compile_plan

    def counting(*args, **kwargs):
        calls.append(1)
        time.sleep(0.05)  # widen the window in which a racing thread could compile again
        return real(*args, **kwargs)

    monkeypatch.setattr("tensorweave.runtime.session.compile_plan", counting)
    x = tf.placeholder(tf.float32, [3])
    y = tf.add(x, x)
    with tf.Session() as s:
        def run(i):
            return [s.run(y, {x: np.full(3, i + k, np.float32)}) for k in range(20)]
        workers = [start(run, i) for i in range(8)]
        results = [w.finish() for w in workers]
    for i, values in enumerate(results):
        for k, v in enumerate(values):
            np.testing.assert_array_equal(v, np.full(3, 2.0 * (i + k)))
    assert len(calls) == 1


def test_stress_8_producers_4_consumers_move_100000_items_through_a_bounded_queue():
    producers, consumers, items, batch = 8, 4, 100_000, 100
    per_producer = items // producers
    queue = tf.FIFOQueue(1000, tf.int64, shapes=[])
    values = tf.placeholder(tf.int64, [None])
    enqueue = queue.enqueue_many([values])
    dequeue = queue.dequeue_up_to(batch)
    with tf.Session() as s:
        enqueue_fn = s.make_callable(enqueue, [values])
        dequeue_fn = s.make_callable(dequeue)

        def produce(p):
            for lo in range(p * per_producer, (p + 1) * per_producer, batch):
                enqueue_fn(np.arange(lo, lo + batch, dtype=np.int64))

        ready = threading.Barrier(consumers + 1)

        def consume():
            got = []
            ready.wait(30)
            try:
                while True:
                    got.append(dequeue_fn())
            except tf.errors.OutOfRangeError:
                return got

        consumer_threads = [start(consume) for _ in range(consumers)]
        ready.wait(30)  # on a loaded machine a consumer could otherwise first run after the queue is closed
        producer_threads = [start(produce, p) for p in range(producers)]
        for t in producer_threads:
            t.finish(60)
        s.run(queue.close())
        chunks = [c for t in consumer_threads for c in t.finish(60)]
    everything = np.concatenate(chunks)
    assert everything.size == items
    np.testing.assert_array_equal(np.sort(everything), np.arange(items))  # nothing lost or duplicated
    assert all(0 < len(t.result) for t in consumer_threads), "every consumer took part"


def test_stress_8_threads_times_1000_locked_assign_adds_give_an_exact_count():
    counter = tf.Variable(np.zeros(4, np.int64), name="counter")
    increment = counter.assign_add(np.ones(4, np.int64), use_locking=True, read_value=False)
    with tf.Session() as s:
        s.run(counter.initializer)
        step = s.make_callable(increment)

        def work():
            for _ in range(1000):
                step()

        workers = [start(work) for _ in range(8)]
        for w in workers:
            w.finish(60)
        np.testing.assert_array_equal(s.run(counter), np.full(4, 8000))


def test_concurrent_steps_share_variables_and_queues(sess):
    total = tf.Variable(0.0, name="total")
    queue = tf.FIFOQueue(50, tf.float32, shapes=[])
    add_next = total.assign_add(queue.dequeue(), use_locking=True)
    sess.run(total.initializer)
    sess.run(queue.enqueue_many([np.arange(1, 41, dtype=np.float32)]))
    workers = [start(lambda: [sess.run(add_next) for _ in range(10)]) for _ in range(4)]
    for w in workers:
        w.finish(30)
    assert sess.run(total) == sum(range(1, 41))
    assert sess.run(queue.size()) == 0


def test_steps_blocked_on_a_queue_do_not_keep_another_steps_partitions_from_starting():
    """Eight steps, each split over two devices, wait on an empty queue; the step that fills it is split too.
    Every partition of every step must start at once: a pool of threads that each waiting partition holds
    would leave the filling step's second partition queued behind them, and everything would wait forever
    (the SyncReplicasOptimizer chief behind its blocked replicas, two shards on two devices)."""
    waiting = 8
    checks = []
    for device in ("/cpu:0", "/cpu:1"):
        with tf.device(device):
            started = tf.Variable(0, name="started")
            checks.append((started.initializer, started.assign_add(1, use_locking=True),
                           tf.Assert(tf.equal(started, waiting), [started])))  # a target alone: one partition
    with tf.device("/cpu:1"):
        queue = tf.FIFOQueue(waiting, tf.float32, shapes=[])
        with tf.control_dependencies([start_op for _, start_op, _ in checks]):
            dequeued = queue.dequeue()
    with tf.device("/cpu:0"):
        doubled = dequeued * 2.0
        values = tf.range(waiting, dtype=tf.float32) * 10.0
    with tf.device("/cpu:1"):
        fill = queue.enqueue_many([values])
    config = tf.ConfigProto(device_count={"CPU": 2}, inter_op_parallelism_threads=1, allow_soft_placement=False)
    with tf.Session(config=config) as s:
        s.run([init for init, _, _ in checks])
        steps = [start(s.run, doubled) for _ in range(waiting)]

        def all_started():
            try:
                for _, _, check in checks:
                    s.run(check)
                return True
            except tf.errors.InvalidArgumentError:
                return False

        deadline = time.monotonic() + 10
        while not all_started() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert all_started(), "partitions of steps waiting on the queue never started: no thread was free to run them"
        start(s.run, fill).finish(10)
        got = sorted(float(w.finish(10)) for w in steps)
    assert got == [20.0 * i for i in range(waiting)]
