"""1 ps + 2 workers where a task fails in the way argv[1] says, and every error names the task, not just the rank:

- ``ps-op``: an op placed on the ps fails (tf.Assert); that step of worker 0 fails with an error naming
  /job:ps/task:0 and the assertion, and training goes on (a failed step is not a failed job);
- ``ps-freeze``: the ps freezes (SIGSTOP, like a host that vanished); both workers' heartbeats find it and fail
  with UnavailableError naming /job:ps/task:0;
- ``worker-freeze``: worker 1 freezes; the ps and worker 0 fail naming /job:worker/task:1.
"""

import os
import signal
import sys
import threading
import time

import numpy as np
from mpi_common import start_ps_cluster, wait_until_initialized

import tensorweave as tf

mode = sys.argv[1]
cluster, job, task, server = start_ps_cluster(heartbeat_interval=0.2, heartbeat_timeout=2.0)
me = f"/job:{job}/task:{task}"
started = time.monotonic()


def freeze_after(seconds):
    threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGSTOP)).start()


if job == "ps":
    if mode == "ps-freeze":
        freeze_after(2.0)
    try:
        server.join()
    except tf.errors.OpError as e:
        print(f"{me} stopped after {time.monotonic() - started:.1f} s with {type(e).__name__}: {e}", flush=True)
        raise
    print("ps joined: both workers ended", flush=True)
    sys.exit(0)

with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=me)):
    w = tf.get_variable("w", shape=[3, 1], initializer=tf.zeros_initializer())
    x = tf.placeholder(tf.float32, [None, 3])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
with tf.device("/job:ps/task:0"):
    guard = tf.get_variable("guard", initializer=1.0)
    checked = tf.Assert(guard > 0, ["guard must be positive, it is", guard], name="guard_check")
assert checked.device == "/job:ps/task:0", checked.device
xs = np.random.RandomState(task).randn(8, 3).astype(np.float32)

with tf.Session(server.target) as sess:
    if task == 0:
        sess.run(tf.global_variables_initializer())
    wait_until_initialized(sess, guard, "worker 0 never initialized the variables on the ps")
    if mode == "ps-op":
        if task == 0:
            sess.run(checked)
            sess.run(guard.assign(-1.0))
            try:
                sess.run(checked)
                raise AssertionError("the failing assertion on the ps did not fail the step")
            except tf.errors.OpError as e:
                assert "/job:ps/task:0" in str(e) and "guard must be positive" in str(e), e
                print(f"worker 0: the ps op failed the step with {type(e).__name__}: {e}", flush=True)
            sess.run(guard.assign(1.0))
            sess.run(checked)
        before = sess.run(loss, {x: xs})
        for _ in range(20):
            sess.run(train, {x: xs})
        after = sess.run(loss, {x: xs})
        assert after < before, (before, after)
        print(f"{me}: trained on after the failed step, loss {before:.3f} -> {after:.3f}", flush=True)
    else:
        if mode == "worker-freeze" and task == 1:
            freeze_after(2.0)
        try:
            while time.monotonic() - started < 60:
                sess.run(train, {x: xs})
            raise AssertionError(f"{me} trained for 60 s: nobody noticed the frozen task")
        except tf.errors.OpError as e:
            print(f"{me} stopped after {time.monotonic() - started:.1f} s with {type(e).__name__}: {e}", flush=True)
            raise
