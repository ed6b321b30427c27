"""Tasks of several jobs on the ranks (what parameter servers build on): rank 0 is ps task 0 (the chief),
ranks 1 and 2 are worker tasks 0 and 1; variables live on the ps, the work on the workers, across mpi://
partitions. And the control messages ("services") the parameter-server layer sends its RPCs by."""

import threading

import numpy as np
from mpi_common import start

import tensorweave as tf
import tensorweave_distributed as twd
from tensorweave_distributed import eager
from tensorweave_distributed.cluster import Layout, set_layout
from tensorweave_distributed.world import get_world

rank, size = start(heartbeat_timeout=20)
assert size == 3, "this job needs 3 ranks"
world = get_world()

# ---- services: each rank posts to the next one; every message arrives with its sender ------------------
got, done = [], threading.Event()


def on_ping(source, payload):
    got.append((source, payload))
    if len(got) == 2:
        done.set()


world.control.register_service("ping", on_ping)
world.control.register_service("unused", lambda source, payload: None)
eager.allreduce(np.zeros(1), "services registered")  # every rank listens before anyone posts
world.control.post((rank + 1) % size, "ping", {"from": rank, "data": list(range(rank + 1))})
world.control.post((rank + 2) % size, "ping", {"from": rank, "data": "second"})
assert done.wait(20), got
senders = sorted(source for source, _ in got)
assert senders == sorted([(rank - 1) % size, (rank - 2) % size]), got
for source, payload in got:
    assert payload["from"] == source
print(f"rank {rank}: services ok", flush=True)

# ---- a ps job and a worker job ------------------------------------------------------------------------
set_layout(Layout({"ps": [0], "worker": [1, 2]}))
with tf.device("/job:ps/task:0"):
    weights = tf.Variable(np.arange(4, dtype=np.float32), name="weights")
x = tf.placeholder(tf.float32, [4])
partial = []
for task in (0, 1):
    with tf.device(f"/job:worker/task:{task}"):
        partial.append(tf.reduce_sum(weights * x * float(task + 1)))
with tf.device("/job:ps/task:0"):
    update = weights.assign_add(tf.ones([4]))
total = tf.add_n(partial)
with tf.Session(twd.TARGET) as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(3):
        value = sess.run(total, {x: np.ones(4, np.float32)})
        sess.run(update)
        if rank == 0:
            assert value == 3 * (6 + 4 * step), (step, value)
        else:
            assert value is None
    devices = [d.name for d in sess.list_devices() if d.device_type == "CPU"]
assert devices == [{0: "/job:ps/replica:0/task:0/device:CPU:0", 1: "/job:worker/replica:0/task:0/device:CPU:0",
                    2: "/job:worker/replica:0/task:1/device:CPU:0"}[rank]], devices
print(f"layout OK on rank {rank}", flush=True)
