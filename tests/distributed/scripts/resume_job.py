"""1 ps + 2 workers training a linear regression asynchronously through tf.train.MonitoredTrainingSession up to
a global step limit, the chief checkpointing every few steps; meant to run under ``tensorweave-run``.

Arguments: checkpoint_dir last_step save_steps kill_step. With kill_step > 0, worker 1 SIGKILLs itself on the
launcher's first attempt once the global step reached kill_step, half-way to the next checkpoint; the restarted job's
chief restores that checkpoint and training goes on to last_step. Each batch is drawn from the global step
the worker last saw (and its task), so an interrupted run and an uninterrupted one train on the same data.
"""

import os
import signal
import sys
import time

import numpy as np
from mpi_common import TRUE_W, linear_regression, start_counter, start_ps_cluster, start_together

import tensorweave as tf

checkpoint_dir, last_step, save_steps, kill_step = sys.argv[1], *map(int, sys.argv[2:5])
attempt = int(os.environ.get("TENSORWEAVE_RESTART", "0"))
cluster, job, task, server = start_ps_cluster(heartbeat_interval=0.5, heartbeat_timeout=10.0)

if job == "ps":
    server.join()
    print(f"attempt {attempt}: ps joined", flush=True)
    sys.exit(0)

TRUE_B = 1.0


def batch(seed, n=16):
    rng = np.random.RandomState(seed)
    xs = rng.randn(n, 3).astype(np.float32)
    return xs, xs @ TRUE_W + TRUE_B + 0.1 * rng.randn(n, 1).astype(np.float32)


model = linear_regression(cluster, task, lambda: tf.train.GradientDescentOptimizer(0.02))
step, x, y, loss, train = model.step, model.x, model.y, model.loss, model.train
counter, add_one = start_counter()


class Report(tf.train.SessionRunHook):
    """The chief's first hook: the global step its session starts from (restored, or 0)."""

    def after_create_session(self, session, coord):
        print(f"attempt {attempt}: chief started at global step {int(session.run(step))}", flush=True)


restoring = tf.train.latest_checkpoint(checkpoint_dir) if task == 0 else None
if restoring:
    print(f"attempt {attempt}: chief restores {os.path.basename(restoring)}", flush=True)
with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task == 0), checkpoint_dir=checkpoint_dir,
                                       save_checkpoint_steps=save_steps, save_summaries_steps=None,
                                       log_step_count_steps=0, chief_only_hooks=[Report()],
                                       hooks=[tf.train.StopAtStepHook(last_step=last_step)]) as sess:
    seen = 0
    if attempt == 0:  # both workers train side by side, so worker 1 is still training at kill_step
        start_together(sess, counter, add_one, 2)
    while not sess.should_stop():
        latest = kill_step and attempt == 0 and task == 1 and seen >= kill_step and \
            tf.train.latest_checkpoint(checkpoint_dir)
        if latest and seen >= int(latest.rsplit("-", 1)[1]) + save_steps // 2:  # mid-way between checkpoints
            print(f"attempt 0: worker 1 kills itself at global step {seen}, latest checkpoint "
                  f"{os.path.basename(latest)}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        xs, ys = batch(2 * seen + task)
        _, seen = sess.run([train, step], {x: xs, y: ys})
        print(f"attempt {attempt}: worker {task} global step {seen}", flush=True)
        time.sleep(0.005)  # a step takes well under a millisecond: give the other worker its turns

if task == 0:
    with tf.Session(server.target) as sess:
        xs, ys = batch(10_000, n=256)
        final_loss, final_step = sess.run([loss, step], {x: xs, y: ys})
    print(f"attempt {attempt}: final global step {final_step}, final loss {final_loss:.6f}", flush=True)
