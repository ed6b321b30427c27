"""Training steps with an all-reduce while rank 1 fails in the way argv[1] says: ``kill`` (SIGKILL),
``stop`` (SIGSTOP: frozen, like a host that vanished), ``stop-mid`` (frozen while 32 MiB are on the wire),
``raise`` (an exception) or ``stall`` (alive, but it stops submitting collectives). The other ranks must
fail with an error naming rank 1, never hang."""

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
rank, size = start(heartbeat_interval=0.2, heartbeat_timeout=2.0, stall_warning=1.0, stall_timeout=2.0)
big = mode == "stop-mid"  # rank 1 freezes while a large all-reduce is on the wire
x = tf.placeholder(tf.float32, [1 << 23 if big else 4])
y = twd.allreduce(x, algorithm="ring")
value = np.ones(x.shape.as_list(), np.float32)
started = time.monotonic()
with tf.Session() as sess:
    for step in range(1_000_000):
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
        try:
            sess.run(y, {x: value})
        except tf.errors.OpError as e:
            print(f"rank {rank} stopped at step {step} after {time.monotonic() - started:.1f} s with "
                  f"{type(e).__name__}: {e}", flush=True)
            raise
