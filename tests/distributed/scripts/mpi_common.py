"""What the test jobs share: starting tensorweave_distributed with the world size checked, and the ps jobs' model."""

import os
import time
from types import SimpleNamespace

import numpy as np
import tensorweave_distributed as twd

TRUE_W = np.array([[2.0], [-3.0], [0.5]], np.float32)  # the weights the ps jobs' linear regressions learn


def start(**settings):
    twd.init(**settings)
    expected = int(os.environ["TW_TEST_WORLD_SIZE"])
    assert twd.size() == expected, f"rank {twd.rank()} sees {twd.size()} ranks, the test launched {expected}"
    print(f"world size {expected} ok on rank {twd.rank()}", flush=True)
    return twd.rank(), twd.size()


def start_ps_cluster(num_ps=1, **settings):
    """Ranks 0..num_ps-1 are the ps tasks, the others 2 workers: (cluster, job, task, server)."""
    import tensorweave as tf
    rank, size = start(**settings)
    assert size == num_ps + 2, f"this job needs {num_ps + 2} ranks ({num_ps} ps + 2 workers)"
    cluster = tf.train.ClusterSpec.from_mpi(num_ps=num_ps)
    job, task = ("ps", rank) if rank < num_ps else ("worker", rank - num_ps)
    return cluster, job, task, tf.train.Server(cluster, job_name=job, task_index=task)


def linear_regression(cluster, task, make_optimizer, bias=True):
    """A worker's model y = x @ w (+ b) with its variables on the ps (replica_device_setter) and its training step
    from ``make_optimizer()`` built there too: a namespace of w, b, step, x, y, loss, optimizer and train."""
    import tensorweave as tf
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{task}")):
        w = tf.get_variable("w", shape=[3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", shape=[1], initializer=tf.zeros_initializer()) if bias else None
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        prediction = tf.matmul(x, w) + b if bias else tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(prediction - y))
        optimizer = make_optimizer()
        train = optimizer.minimize(loss, global_step=step)
    return SimpleNamespace(w=w, b=b, step=step, x=x, y=y, loss=loss, optimizer=optimizer, train=train)


def wait_until_initialized(sess, variable, message):
    """A non-chief worker waits (30 s at most) for the chief to initialize ``variable`` on the ps."""
    import tensorweave as tf
    deadline = time.time() + 30
    while not sess.run(tf.is_variable_initialized(variable)):
        assert time.time() < deadline, message
        time.sleep(0.05)


def start_counter():
    """A counter on the ps that each worker adds 1 to when it is ready to train: (counter, add_one)."""
    import tensorweave as tf
    with tf.device("/job:ps/task:0"):
        counter = tf.get_variable("workers_started", initializer=0, trainable=False)
    return counter, counter.assign_add(1)


def start_together(sess, counter, add_one, workers, message="the other workers never started"):
    """Steps take well under a millisecond: without this, the first worker can finish before the others
    start, and a test about workers training side by side tests one worker alone."""
    sess.run(add_one)
    deadline = time.time() + 30
    while sess.run(counter) < workers:
        assert time.time() < deadline, message
        time.sleep(0.01)
