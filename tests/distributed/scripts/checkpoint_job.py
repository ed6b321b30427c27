"""Every rank runs tf.train.MonitoredTrainingSession with the same checkpoint_dir (a shared directory) up to a
step limit. Each rank's variable holds 1000 * rank + its global step, so a checkpoint tells which rank wrote it.

Arguments: checkpoint_dir last_step mode. Mode "default" leaves is_chief out (only the chief may write there);
"every-rank-chief" passes is_chief=True on every rank (a second writer must fail loudly, naming the first):
there every rank meets the others once it has made, or failed, its first save, so the writers overlap in time
(a rank that finished all its steps first released its claim before the next one started).
"""

import os
import sys

import numpy as np
from mpi4py import MPI
from mpi_common import start

import tensorweave as tf

checkpoint_dir, last_step, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rank, size = start()
print(f"rank {rank} is pid {os.getpid()}", flush=True)

w = tf.get_variable("w", initializer=np.zeros(1000))
step = tf.train.get_or_create_global_step()
new_step = tf.assign_add(step, 1)
train = tf.assign(w, tf.fill([1000], tf.cast(new_step, tf.float64) + 1000.0 * rank))
tf.summary.scalar("w0", w[0])


class Report(tf.train.SessionRunHook):
    """Says where a rank starts (after the checkpoint hook's first save); the other ranks then let the chief go
    on (see ChiefWaits), or, where every rank is a chief, every rank waits for the others' first saves."""

    def after_create_session(self, session, coord):
        print(f"rank {rank} starts at global step {int(session.run(step))}", flush=True)
        if mode == "every-rank-chief" or rank != 0:  # in the default mode rank 0 waits in ChiefWaits
            MPI.COMM_WORLD.Barrier()


class ChiefWaits(tf.train.SessionRunHook):
    """The chief's first hook: it goes on (saving its first checkpoint, training) once the other ranks have
    restored, so they all restore the checkpoint the job starts from, not one the chief wrote since."""

    def after_create_session(self, session, coord):
        MPI.COMM_WORLD.Barrier()


chief = {} if mode == "default" else {"is_chief": True}
try:
    session = tf.train.MonitoredTrainingSession(
        checkpoint_dir=checkpoint_dir, save_checkpoint_steps=5, save_summaries_steps=10, log_step_count_steps=10,
        chief_only_hooks=[ChiefWaits()] if chief == {} else [],
        hooks=[tf.train.StopAtStepHook(last_step=last_step), Report()], **chief)
except tf.errors.AlreadyExistsError:
    if mode == "every-rank-chief":
        MPI.COMM_WORLD.Barrier()  # the first save failed: the rank that holds the claim may go on now
    raise
with session as sess:
    while not sess.should_stop():
        sess.run(train)
print(f"rank {rank} finished", flush=True)
