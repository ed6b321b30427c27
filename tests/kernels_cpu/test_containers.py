"""Containers: private devices per session for target '', shared ones for 'local://' targets, and reset."""

import time

import numpy as np
import pytest

import tensorweave as tf
from thread_helpers import start


def _queue_graph(shared_name="shared_queue", container=None):
    """A fresh graph with one shared FIFO queue; returns (graph, queue)."""
    graph = tf.Graph()
    with graph.as_default():
        if container is None:
            q = tf.FIFOQueue(10, tf.int32, shapes=[], shared_name=shared_name)
        else:
            with tf.container(container):
                q = tf.FIFOQueue(10, tf.int32, shapes=[], shared_name=shared_name)
    return graph, q


def test_sessions_with_target_empty_have_private_state():
    graph, q = _queue_graph()
    with graph.as_default():
        enqueue, size = q.enqueue(1), q.size()
    with tf.Session(graph=graph) as a, tf.Session(graph=graph) as b:
        a.run(enqueue)
        a.run(enqueue)
        assert a.run(size) == 2
        assert b.run(size) == 0


def test_two_disjoint_graphs_share_a_queue_through_a_local_target():
    target = "local://share_queue"
    g1, q1 = _queue_graph()
    g2, q2 = _queue_graph()
    with g1.as_default():
        enqueue = q1.enqueue_many([[1, 2, 3]])
    with g2.as_default():
        dequeue = q2.dequeue_many(3)
    try:
        with tf.Session(target, graph=g1) as producer, tf.Session(target, graph=g2) as consumer:
            producer.run(enqueue)
            np.testing.assert_array_equal(consumer.run(dequeue), [1, 2, 3])
    finally:
        tf.Session.reset(target)


def test_queue_without_shared_name_stays_private_to_its_session_even_on_a_shared_target():
    target = "local://private_queue"
    graph = tf.Graph()
    with graph.as_default():
        q = tf.FIFOQueue(10, tf.int32, shapes=[])
        enqueue, size = q.enqueue(7), q.size()
    try:
        with tf.Session(target, graph=graph) as a, tf.Session(target, graph=graph) as b:
            a.run(enqueue)
            assert (a.run(size), b.run(size)) == (1, 0)
    finally:
        tf.Session.reset(target)


def test_default_container_outlives_the_session_until_reset():
    target = "local://outlives"
    g1, q1 = _queue_graph()
    with g1.as_default():
        enqueue = q1.enqueue(5)
    try:
        with tf.Session(target, graph=g1) as s:
            s.run(enqueue)
        g2, q2 = _queue_graph()
        with g2.as_default():
            size = q2.size()
        with tf.Session(target, graph=g2) as s:
            assert s.run(size) == 1  # the first session is gone; its queue is not
        tf.Session.reset(target)
        with tf.Session(target, graph=g2) as s:
            assert s.run(size) == 0  # a fresh queue after the reset
    finally:
        tf.Session.reset(target)


def test_reset_clears_only_the_named_containers():
    target = "local://named_containers"
    g_kept, kept = _queue_graph("q", container="keep")
    g_dropped, dropped = _queue_graph("q", container="drop")
    with g_kept.as_default():
        fill_kept, size_kept = kept.enqueue(1), kept.size()
    with g_dropped.as_default():
        fill_dropped, size_dropped = dropped.enqueue(1), dropped.size()
    assert kept.queue_ref.op.get_attr("container") == "keep"
    try:
        with tf.Session(target, graph=g_kept) as a, tf.Session(target, graph=g_dropped) as b:
            a.run(fill_kept)
            b.run(fill_dropped)
            b.run(fill_dropped)
            assert (a.run(size_kept), b.run(size_dropped)) == (1, 2)  # same shared_name, two containers
            tf.Session.reset(target, ["drop"])
            assert (a.run(size_kept), b.run(size_dropped)) == (1, 0)
    finally:
        tf.Session.reset(target)


def test_reset_cancels_steps_waiting_on_a_cleared_queue():
    target = "local://reset_wakes"
    graph, q = _queue_graph(container="work")
    with graph.as_default():
        dequeue = q.dequeue()
    try:
        with tf.Session(target, graph=graph) as s:
            waiter = start(s.run, dequeue)
            time.sleep(0.2)
            tf.Session.reset(target, ["work"])
            with pytest.raises(tf.errors.CancelledError, match="container was reset"):
                waiter.finish()
    finally:
        tf.Session.reset(target)


def test_two_disjoint_graphs_share_a_variable_through_a_local_target():
    target = "local://share_variable"
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        v1 = tf.get_variable("shared_v", initializer=np.array([1.0, 2.0]), use_resource=True)
        init, bump = v1.initializer, v1.assign_add([10.0, 10.0])
    with g2.as_default():
        v2 = tf.get_variable("shared_v", initializer=np.array([0.0, 0.0]), use_resource=True)
        read = v2.read_value()
    try:
        with tf.Session(target, graph=g1) as a, tf.Session(target, graph=g2) as b:
            a.run(init)
            a.run(bump)
            np.testing.assert_array_equal(b.run(read), [11.0, 12.0])  # b never initialized it
        tf.Session.reset(target)
        with tf.Session(target, graph=g2) as b:
            with pytest.raises(tf.errors.FailedPreconditionError, match="shared_v"):
                b.run(read)
    finally:
        tf.Session.reset(target)


def test_variables_of_a_target_empty_session_end_with_it():
    v = tf.Variable(3.0, name="private_v")
    with tf.Session() as s:
        s.run(v.initializer)
        assert s.run(v) == 3.0
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="private_v"):
            s.run(v)


def test_private_queues_on_a_shared_target_go_away_with_their_session():
    import gc
    target = "local://private_cleanup"
    graph = tf.Graph()
    with graph.as_default():
        size = tf.FIFOQueue(10, tf.int32, shapes=[]).size()
    manager = None
    try:
        s = tf.Session(target, graph=graph)
        s.run(size)
        manager = s.device_mgr.devices[0].resource_manager
        assert any(name.endswith("fifo_queue") for name in manager.containers()["localhost"])
        s.close()
        del s
        gc.collect()
        assert not any(name.endswith("fifo_queue") for name in manager.containers().get("localhost", []))
    finally:
        tf.Session.reset(target)


def test_a_session_finalized_while_another_takes_its_id_does_not_hang():
    """A garbage collection can run inside the private-resource lock and finalize a dead session there; its
    clean-up takes the lock again on the same thread."""
    import threading

    from tensorweave_cpu import shared_resources

    class Owner:  # stands in for a session: anything weak-referenceable
        pass

    dead, alive = Owner(), Owner()
    dead_id = shared_resources._session_id(dead)
    done = threading.Event()

    def finalize_inside_the_lock():
        with shared_resources._lock:
            shared_resources._session_id(alive)
            shared_resources._drop_private(dead_id)  # what gc would run here
        done.set()

    threading.Thread(target=finalize_inside_the_lock, daemon=True).start()
    assert done.wait(10), "the private-resource lock is not re-entrant: the step would hang"
    assert dead_id not in shared_resources._private


def test_local_server_runs_sessions_and_shares_variables():
    server = tf.train.Server.create_local_server()
    assert server.target.startswith("local://")
    assert server.server_def["job_name"] == "localhost" and server.server_def["task_index"] == 0
    assert tf.train.Server.create_local_server().target != server.target
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        with tf.Session(server.target) as sess:
            sess.run(v.initializer)
            sess.run(v.assign_add(2.0))
        with tf.Session(server.target) as sess:  # resources of the target outlive a session
            assert sess.run(v) == 3.0
    with pytest.raises(RuntimeError, match="block forever"):
        server.join()
