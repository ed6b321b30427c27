"""1 ps + 2 workers with tf.train.Server: variables on the ps (replica_device_setter), each worker trains
asynchronously through tf.Session(server.target) and the ps server.join()s until both workers end."""

import time

import numpy as np
from mpi_common import TRUE_W, linear_regression, start_ps_cluster, wait_until_initialized

import tensorweave as tf

cluster, job, task, server = start_ps_cluster(heartbeat_timeout=30)
assert cluster.as_dict() == {"ps": ["mpi:rank0"], "worker": ["mpi:rank1", "mpi:rank2"]}, cluster
assert server.target.startswith("mpi://"), server.target

if job == "ps":
    server.join()
    print(f"ps joined: both workers ended; sessions they closed: {len(server._impl._closed)}", flush=True)
else:
    rng = np.random.RandomState(task)
    model = linear_regression(cluster, task, lambda: tf.train.GradientDescentOptimizer(0.1))
    w, step, x, y, loss, train = model.w, model.step, model.x, model.y, model.loss, model.train
    assert w.op.device == "/job:ps/task:0" and loss.op.device == f"/job:worker/task:{task}"
    with tf.Session(server.target) as sess:
        if task == 0:
            sess.run(tf.global_variables_initializer())
        else:
            wait_until_initialized(sess, step, "worker 0 never initialized the variables on the ps")
        losses, seen_steps = [], []
        for i in range(40):
            xs = rng.randn(16, 3).astype(np.float32)
            _, l, s = sess.run([train, loss, step], {x: xs, y: xs @ TRUE_W + 1.0})
            losses.append(l)
            seen_steps.append(s)
        final_w = sess.run(w)
        deadline = time.time() + 60  # the other worker may start late: wait for its updates to reach the ps
        while sess.run(step) < 80:
            assert time.time() < deadline, f"the global step stayed at {sess.run(step)}: updates were not shared"
            time.sleep(0.02)
        total = sess.run(step)
        xs = rng.randn(64, 3).astype(np.float32)
        final_loss = sess.run(loss, {x: xs, y: xs @ TRUE_W + 1.0})
    assert final_loss < 0.05 * max(losses), (final_loss, losses)
    # the global step counts both workers' updates exactly: 40 each, applied to the one variable on the ps
    assert total == 80, (total, seen_steps)
    assert np.abs(final_w - TRUE_W).max() < 0.5, final_w
    print(f"worker {task}: loss {losses[0]:.3f} -> {losses[-1]:.4f}, global step {total}, shared ok", flush=True)
