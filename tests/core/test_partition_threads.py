"""PartitionThreads: every submitted partition starts at once, however many earlier ones still wait; idle
threads are reused, then retire; errors come back through the future."""

import threading

import pytest

import tensorweave as tf
from tensorweave.runtime import partition_threads
from tensorweave.runtime.partition_threads import PartitionThreads


def test_a_task_starts_while_every_earlier_one_waits_for_it():
    threads = PartitionThreads()
    release = threading.Event()
    waiting = [threads.submit(release.wait, 10) for _ in range(40)]  # more than any fixed pool would hold
    threads.submit(release.set).result(10)
    assert [f.result(10) for f in waiting] == [True] * 40
    threads.shutdown()


def test_an_idle_thread_is_reused_and_retires_after_its_idle_time(monkeypatch):
    monkeypatch.setattr(partition_threads, "IDLE_SECONDS", 0.05)
    threads = PartitionThreads(name="tw-test-retire")
    first = threads.submit(threading.get_ident).result(10)
    for _ in range(5):
        assert threads.submit(threading.get_ident).result(10) == first
    alive = [t for t in threading.enumerate() if t.name == "tw-test-retire"]
    assert len(alive) == 1
    alive[0].join(10)
    assert not alive[0].is_alive()
    assert threads.submit(lambda: 7).result(10) == 7  # a new thread takes over
    threads.shutdown()


def test_errors_come_back_through_the_future_and_the_thread_goes_on():
    threads = PartitionThreads()

    def fail():
        raise ValueError("partition failed")

    with pytest.raises(ValueError, match="partition failed"):
        threads.submit(fail).result(10)
    assert threads.submit(lambda a, b: a + b, 2, 3).result(10) == 5
    threads.shutdown()


def test_shutdown_ends_idle_threads_and_refuses_new_work():
    threads = PartitionThreads(name="tw-test-shutdown")
    threads.submit(lambda: None).result(10)
    threads.shutdown()
    for t in [t for t in threading.enumerate() if t.name == "tw-test-shutdown"]:
        t.join(10)
        assert not t.is_alive()
    with pytest.raises(tf.errors.CancelledError, match="Session was closed"):
        threads.submit(lambda: None)
