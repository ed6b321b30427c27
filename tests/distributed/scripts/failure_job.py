"""Training steps with an all-reduce while rank 1 fails in the way argv[1] says: ``kill`` (SIGKILL),
``stop`` (SIGSTOP: frozen, like a host that vanished), ``stop-mid`` (frozen while 32 MiB are on the wire),
``raise`` (an exception), ``stall`` (alive, but it stops submitting collectives) or ``skip`` (it leaves out the
metric all-reduce the others fetch at step 20, and goes on to step 21's). The other ranks must fail with an error
naming rank 1, never hang. ``busy``: rank 1 computes for 4 s before step 20 (a long step, an evaluation): the job
must wait for it and finish. Stall settings come from the environment (TENSORWEAVE_STALL_*)."""

import os
import signal
import sys
import threading
import time

import numpy as np
from mpi_common import start

import tensorweave as tf
import tensorweave_distributed as twd

mode = sys.argv[1]
rank, size = start(heartbeat_interval=0.2, heartbeat_timeout=2.0)
big = mode == "stop-mid"  # rank 1 freezes while a large all-reduce is on the wire
x = tf.placeholder(tf.float32, [1 << 23 if big else 4])
y = twd.allreduce(x, algorithm="ring", name="gradients")
metric = twd.allreduce(tf.reduce_sum(x), name="metric")
value = np.ones(x.shape.as_list(), np.float32)
started = time.monotonic()
steps = 40 if mode == "busy" else 1_000_000
with tf.Session() as sess:
    for step in range(steps):
        fetches = [y, metric] if step == 20 else [y]
        if rank == 1 and step == 20:
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            elif mode == "stop":
                os.kill(os.getpid(), signal.SIGSTOP)
            elif mode == "stop-mid":
                threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGSTOP)).start()
            elif mode == "raise":
                raise ValueError("rank 1 broke on purpose")
            elif mode == "stall":
                time.sleep(600)
            elif mode == "skip":
                fetches = [y]
            elif mode == "busy":
                rng, until = np.random.default_rng(0), time.monotonic() + 4.0
                while time.monotonic() < until:
                    np.sort(rng.standard_normal(100_000))
        try:
            sess.run(fetches, {x: value})
        except tf.errors.OpError as e:
            print(f"rank {rank} stopped at step {step} after {time.monotonic() - started:.1f} s with "
                  f"{type(e).__name__}: {e}", flush=True)
            raise
print(f"rank {rank} finished {steps} steps after {time.monotonic() - started:.1f} s", flush=True)
