"""Send/Recv between processes: graphs whose ops sit on /job:worker/task:<rank> run in an mpi:// session,
each rank its own partition; values of every dtype and shape, large ones, both directions at once, dead
tensors from a cond, loops across tasks, concurrent steps, a failing partition, and the rendezvous itself."""

import threading

import numpy as np
from mpi_common import start

import tensorweave as tf
import tensorweave_distributed as twd
from tensorweave_distributed.world import get_world

rank, size = start(heartbeat_timeout=20)


def leaves(structure):
    return [x for v in structure.values() for x in leaves(v)] if isinstance(structure, dict) else [structure]


last = size - 1
TASK = "/job:worker/task:{}".format
world = get_world()

# ---- the rendezvous: values wait for their Recv by (step, key), in any order ---------------------------
if rank < 2 and size > 1:
    peer = 1 - rank
    keys = [f"src;0;dst;t{i};:0" for i in range(5)]
    arrived, done = {}, threading.Event()

    def got(step, i):
        def callback(error, value, is_dead):
            assert error is None, error
            arrived[(step, i)] = (value, is_dead)
            if len(arrived) == 10:
                done.set()
        return callback

    for step in ("a", "b"):
        for i in reversed(range(5)):  # ask before and after the values arrive
            world.transport.recv(peer, ("unit", step), keys[i], got(step, i))
        for i in range(5):
            payload = None if i == 4 else np.full((i, 2), 10 * rank + i, np.float32) if step == "a" else f"s{i}"
            world.transport.send(peer, ("unit", step), keys[i], payload, is_dead=(i == 4))
    assert done.wait(30), sorted(arrived)
    for i in range(4):
        assert np.array_equal(arrived[("a", i)][0], np.full((i, 2), 10 * peer + i, np.float32))
        assert arrived[("b", i)] == (f"s{i}", False)
    assert arrived[("a", 4)][1] and arrived[("b", 4)][1]

# ---- a graph across every task ---------------------------------------------------------------------
x = tf.placeholder(tf.float32, [None, 3], name="x")
with tf.device(TASK(last)):
    w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    y = tf.matmul(x, w)
    big = tf.fill([512, 1024], 2.0)  # 2 MiB: through the buffer protocol
    flag = tf.reduce_sum(x) > 0
with tf.device(TASK(0)):
    z = y + tf.reduce_sum(big)
    picked = tf.cond(flag, lambda: tf.constant(1.0), lambda: tf.constant(-1.0))  # one branch dead across tasks
values = {}
for task in range(size):
    with tf.device(TASK(task)):
        values[task] = {
            "f16": tf.constant(np.arange(5, dtype=np.float16) + task),
            "i64": tf.constant(np.arange(3, dtype=np.int64) * task),
            "bool": tf.constant(np.array([True, task % 2 == 0])),
            "c64": tf.constant(np.array([1 + 2j * task], np.complex64)),
            "scalar": tf.constant(float(task)),
            "empty": tf.zeros([0, 4]),
            "text": tf.constant([f"task {task}", "é"]),
        }
exchanged = {}
for task in range(size):  # every task sends its values to the next one: every rank sends and receives at once
    with tf.device(TASK((task + 1) % size)):
        exchanged[task] = {k: tf.identity(v) for k, v in values[task].items()}
with tf.device(TASK(last)):
    swap_a = tf.fill([256, 1024], float(last)) + 0.0
with tf.device(TASK(0)):
    swap_b = tf.fill([256, 1024], 0.5) + 0.0
with tf.device(TASK(0)):
    crossed_on_0 = tf.reduce_sum(swap_a)
with tf.device(TASK(last)):
    crossed_on_last = tf.reduce_sum(swap_b)
both_ways = crossed_on_0 + crossed_on_last


def body(i, acc):
    with tf.device(TASK(last)):
        doubled = acc * 2.0
    with tf.device(TASK(0)):
        return i + 1, doubled + 1.0


_, looped = tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.constant(1.0)])

with tf.Session(twd.TARGET) as sess:
    sess.run(tf.global_variables_initializer())
    for k in range(3):
        out = sess.run({"z": z, "picked": picked, "looped": looped, "both": both_ways, "exchanged": exchanged},
                       {x: np.full((2, 3), k - 1, np.float32)})
        if rank != 0:
            assert all(v is None for v in leaves(out)), out  # the chief fetches; the others ran their partitions
            continue
        assert np.allclose(out["z"], 3 * (k - 1) + 2.0 * 512 * 1024)
        assert out["picked"] == (1.0 if k == 2 else -1.0)
        assert out["looped"] == 63.0
        assert out["both"] == 256 * 1024 * (last + 0.5)
        for task in range(size):
            got = out["exchanged"][task]
            assert got["f16"].dtype == np.float16 and np.array_equal(got["f16"], np.arange(5) + task)
            assert got["i64"].dtype == np.int64 and np.array_equal(got["i64"], np.arange(3) * task)
            assert got["bool"].tolist() == [True, task % 2 == 0]
            assert got["c64"].dtype == np.complex64 and got["c64"][0] == 1 + 2j * task
            assert got["scalar"] == float(task) and np.ndim(got["scalar"]) == 0, (task, repr(got["scalar"]))
            assert got["empty"].shape == (0, 4)
            assert [s.decode() if isinstance(s, bytes) else s for s in got["text"]] == [f"task {task}", "é"]
print(f"rank {rank}: cross-task graphs ok", flush=True)

# ---- concurrent steps of two signatures, several threads each ---------------------------------------
feed = tf.placeholder(tf.float32, [])
with tf.device(TASK(last)):
    tripled = feed * 3.0
with tf.device(TASK(0)):
    first = tripled + 1.0
    second = tripled - 1.0
results, failures = {}, []
with tf.Session(twd.TARGET) as sess:
    def worker(which, fetch):
        try:
            for i in range(15):
                results[(which, i)] = sess.run(fetch, {feed: float(i)})
        except Exception as e:  # reported below
            failures.append(e)
    threads = [threading.Thread(target=worker, args=(w, f)) for w, f in (("a", first), ("b", second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
assert not failures, failures
if rank == 0:
    for i in range(15):
        assert results[("a", i)] == 3.0 * i + 1.0 and results[("b", i)] == 3.0 * i - 1.0
print(f"rank {rank}: concurrent steps ok", flush=True)

# ---- a partition that fails: its rank gets the error, the other ranks an AbortedError naming it --------
p = tf.placeholder(tf.float32, [])
with tf.device(TASK(last)):
    checked = tf.identity(p)
    guard = tf.Assert(p > 0, [p], name="positive")
    with tf.control_dependencies([guard]):
        checked = tf.identity(checked)
with tf.device(TASK(0)):
    result = checked * 2.0
with tf.Session(twd.TARGET) as sess:
    if rank in (0, last) and size > 1:  # the ranks between run no part of this graph
        try:
            sess.run(result, {p: -1.0})
            raise AssertionError("the failing assertion was not reported")
        except tf.errors.InvalidArgumentError as e:
            assert rank == last and "positive" in str(e), (rank, e)
        except tf.errors.AbortedError as e:
            assert rank != last and f"aborted on rank {last}" in str(e), (rank, e)
    elif size > 1:
        assert sess.run(result, {p: -1.0}) is None
    value = sess.run(result, {p: 4.0})  # the session goes on
    assert value == (8.0 if rank == 0 else None)
print(f"transport OK on rank {rank}", flush=True)
