"""1 ps + 2 workers with tf.train.SyncReplicasOptimizer(replicas_to_aggregate=argv[1] (default 2),
total_num_replicas=2):
gradient queues and variables on the ps, the chief worker's queue runner applies the mean of both
workers' gradients once per step, so the global step counts steps, not pushes."""

import sys

import numpy as np
from mpi_common import TRUE_W, linear_regression, start_counter, start_ps_cluster, start_together, wait_until_initialized

import tensorweave as tf

cluster, job, task, server = start_ps_cluster(heartbeat_timeout=30)
TARGET = 20  # global steps
AGGREGATE = int(sys.argv[1]) if len(sys.argv) > 1 else 2  # 1: one backup worker

if job == "ps":
    server.join()
    print("ps joined: both workers ended", flush=True)
else:
    rng = np.random.RandomState(task)
    model = linear_regression(cluster, task, lambda: tf.train.SyncReplicasOptimizer(
        tf.train.GradientDescentOptimizer(0.2), replicas_to_aggregate=AGGREGATE, total_num_replicas=2), bias=False)
    w, step, x, y, loss, opt, train = model.w, model.step, model.x, model.y, model.loss, model.optimizer, model.train
    assert opt._local_step.op.device == f"/job:worker/task:{task}", opt._local_step.op.device
    counter, add_one = start_counter()
    with tf.Session(server.target) as sess:
        coord = tf.train.Coordinator()
        if task == 0:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(opt.local_step_init_op)
            sess.run(opt.get_init_tokens_op())
            threads = opt.get_chief_queue_runner().create_threads(sess, coord=coord, daemon=True, start=True)
        else:
            wait_until_initialized(sess, step, "the chief never initialized the variables on the ps")
            sess.run(tf.local_variables_initializer())
            sess.run(opt.local_step_init_op)
        start_together(sess, counter, add_one, 2)
        losses, pushes = [], 0
        while sess.run(step) < TARGET:
            xs = rng.randn(16, 3).astype(np.float32)
            _, l = sess.run([train, loss], {x: xs, y: xs @ TRUE_W})
            losses.append(l)
            pushes += 1
        total, final_w = sess.run([step, w])
        xs = rng.randn(64, 3).astype(np.float32)
        final_loss = sess.run(loss, {x: xs, y: xs @ TRUE_W})
        coord.request_stop()
    # a late worker may have pushed only a few times: judge the shared model, not this worker's own losses
    assert final_loss < 0.01, (final_loss, losses)
    assert total == TARGET, total  # the chief stops applying once no worker pushes: no step past the target
    print(f"worker {task}: loss {losses[0]:.3f} -> {final_loss:.5f}, global step {total}, pushes {pushes}, "
          f"w {np.round(final_w.ravel(), 5).tolist()}, sync ok", flush=True)
