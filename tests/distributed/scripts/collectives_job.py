"""Collectives on every rank, checked against numpy: algorithms x dtypes x lengths x ops (and bitwise equal
results on every rank), the ring's traffic, fusion, all-gather/broadcast/reduce-scatter, graph ops and their
gradients, loops, concurrent steps, disagreeing ranks, and a cancelled step that leaves the ranks in step."""

import threading
import time

import numpy as np
from mpi_common import start

import tensorweave as tf
import tensorweave_distributed as twd
from tensorweave_distributed import algorithms, eager
from tensorweave_distributed.world import get_world

rank, size = start(heartbeat_timeout=20)
world = get_world()
DTYPES = (np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_, np.complex64)


def inputs_of(r, length, dtype):
    values = np.random.default_rng(1000 + r).integers(0, 7, size=length)
    if np.dtype(dtype).kind == "c":
        return (values + 1j * values[::-1]).astype(dtype)
    return values.astype(dtype)


def reference(length, dtype, op):
    stack = np.stack([inputs_of(r, length, dtype) for r in range(size)]) if length else np.zeros((size, 0), dtype)
    kind = np.dtype(dtype).kind
    if kind == "b":
        return stack.all(0) if op == "min" else stack.any(0)
    wide = stack.astype(np.complex128 if kind == "c" else np.float64)
    if op == "sum":
        return wide.sum(0)
    if op == "mean":
        return wide.sum(0) // size if kind in "iu" else wide.sum(0) / size
    return wide.max(0) if op == "max" else wide.min(0)


def run_many(specs, timeout=60):
    """Submits every (name, kind, array, op, algorithm) at once (one negotiation) and returns the results.
    Neighbours differ in dtype, so nothing is fused: each runs as its own collective."""
    from tensorweave_distributed.controller import Request
    results, left, done, lock = {}, [len(specs)], threading.Event(), threading.Lock()

    def arrived(name):
        def callback(error, values):
            assert error is None, (name, error)
            with lock:
                results[name] = values[0]
                left[0] -= 1
                if left[0] == 0:
                    done.set()
        return callback

    world.collectives.submit([Request(name, kind, [array], arrived(name), op, 0, algorithm)
                              for name, kind, array, op, algorithm in specs])
    assert done.wait(timeout), f"{left[0]} of {len(specs)} collectives did not finish"
    return results


# ---- the algorithm matrix ----------------------------------------------------------------------------
specs, expected = [], {}
for algorithm in ("ring", "recursive_doubling", "native", "auto"):
    for length in (0, 1, size - 1, size + 1, 1001):
        for op in ("sum", "mean", "max", "min"):
            for dtype in DTYPES:
                kind = np.dtype(dtype).kind
                if (kind == "c" and op in ("max", "min")) or (kind == "b" and op == "mean"):
                    continue
                name = f"m/{algorithm}/{length}/{np.dtype(dtype).name}/{op}"
                specs.append((name, "allreduce", inputs_of(rank, length, dtype), op, algorithm))
                expected[name] = (dtype, length, reference(length, dtype, op))
outputs = run_many(specs)
agreement = run_many([(name + "/check", "allgather", np.ascontiguousarray(out).reshape(1, -1).view(np.uint8), "sum",
                       "auto") for name, out in outputs.items()])
for name, out in outputs.items():
    dtype, length, want = expected[name]
    kind = np.dtype(dtype).kind
    assert out.dtype == np.dtype(dtype) and out.shape == (length,), (name, out.dtype, out.shape)
    if kind in "iub":
        assert np.array_equal(out, want.astype(dtype)), (name, out, want)
    else:
        assert np.allclose(out, want, rtol=2e-3 if dtype == np.float16 else 1e-6), (name, out, want)
    rows = agreement[name + "/check"]
    assert all(np.array_equal(rows[0], row) for row in rows), f"{name}: the ranks got different bits"
print(f"rank {rank}: {len(outputs)} all-reduces match numpy and agree bitwise", flush=True)

# ---- the ring sends 2(N-1)/N of the data, exactly ---------------------------------------------------
for elements in (size * 1000, size * 1000 + 1, 7):
    before = world.collectives.counter.bytes.get("ring", 0)
    eager.allreduce(np.ones(elements, np.float64), f"bytes/{elements}", algorithm="ring")
    sent = world.collectives.counter.bytes.get("ring", 0) - before
    bounds = algorithms.split_bounds(elements, size)
    seg = [bounds[i + 1] - bounds[i] for i in range(size)]
    expected = 8 * (sum(seg[(rank - s - 1) % size] for s in range(size - 1)) +
                    sum(seg[(rank - s) % size] for s in range(size - 1)))
    assert sent == expected, (elements, sent, expected)
    if elements % size == 0:
        assert sent == 2 * (size - 1) * elements * 8 // size
print(f"rank {rank}: ring traffic is 2(N-1)/N of the data", flush=True)

# ---- fusion: 100 tensors in one submission travel as one batch ----------------------------------------
before = world.collectives.batches_run
parts = [np.full(i + 1, rank + i, np.float32) for i in range(100)]
fused = eager.run("allreduce", parts, "fusion", op="sum")
assert world.collectives.batches_run - before == 1, world.collectives.batches_run - before
for i, out in enumerate(fused):
    assert np.array_equal(out, np.full(i + 1, sum(range(size)) + size * i, np.float32)), i

# ---- all-gather, broadcast, reduce-scatter, compression -----------------------------------------------
gathered = eager.allgather(np.full((rank + 1, 2), rank, np.int16), "gather")
assert np.array_equal(gathered, np.concatenate([np.full((r + 1, 2), r, np.int16) for r in range(size)]))
assert eager.allgather(np.zeros((0, 3), np.float32), "gather-empty").shape == (0, 3)
for root in range(size):
    got = eager.broadcast(np.full((2, 2), rank, np.float64), f"bcast{root}", root=root)
    assert np.array_equal(got, np.full((2, 2), root, np.float64))
for rows in (1, size, 2 * size + 1):
    table = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) * (rank + 1)
    mine = eager.reduce_scatter(table, f"rs{rows}", op="sum")
    bounds = algorithms.split_bounds(rows, size)
    full = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) * sum(range(1, size + 1))
    assert np.array_equal(mine, full[bounds[rank]:bounds[rank + 1]]), (rows, mine)
for compression, tolerance in (("float16", 1e-3), ("bfloat16", 1e-2)):
    x = np.linspace(-1, 1, 513).astype(np.float32)
    for algorithm in ("ring", "recursive_doubling", "native"):
        y = eager.allreduce(x, f"c/{compression}/{algorithm}", op="mean", compression=compression, algorithm=algorithm)
        assert y.dtype == np.float32 and np.allclose(y, x, atol=tolerance), (compression, algorithm)
print(f"rank {rank}: gather, broadcast, reduce-scatter, fusion and compression ok", flush=True)

# ---- graph ops and gradients ----------------------------------------------------------------------------
tf.reset_default_graph()
v = tf.Variable(np.arange(3, dtype=np.float64) + rank)
summed = twd.allreduce(v * v, op=twd.Sum)
g_sum = tf.gradients(tf.reduce_sum(summed), v)[0]  # d/dv_r of sum_s sum(v_s^2) summed over ranks' losses
pieces = twd.allgather(tf.reshape(v, [3, 1])[: rank + 1])
g_gather = tf.gradients(tf.reduce_sum(pieces * 2.0), v)[0]
root_value = twd.broadcast(v, root_rank=size - 1)
g_bcast = tf.gradients(tf.reduce_sum(root_value), v)[0]
scattered = twd.reducescatter(tf.reshape(tf.tile(v, [size + 1]), [size + 1, 3]), op=twd.Sum)
table = tf.Variable(np.ones((5, 2)))
rows = tf.gather(table, [rank % 5, 4])
sparse_grad = tf.gradients(tf.reduce_sum(rows), table)[0]
sparse_avg = twd.allreduce(sparse_grad)
ring_cfg = twd.ConfigProto(allreduce_algorithm="ring")
with tf.Session(config=ring_cfg) as sess:
    sess.run(tf.global_variables_initializer())
    out = sess.run({"g_sum": g_sum, "g_gather": g_gather, "g_bcast": g_bcast, "scattered": scattered,
                    "pieces": pieces, "sparse": sparse_avg})
v_of = [np.arange(3.0) + r for r in range(size)]
assert np.allclose(out["g_sum"], 2 * v_of[rank] * size), out["g_sum"]
expected_gather = np.zeros(3)
expected_gather[: rank + 1] = 2.0 * size
assert np.allclose(out["g_gather"], expected_gather), out["g_gather"]
assert np.allclose(out["g_bcast"], np.full(3, size) if rank == size - 1 else np.zeros(3)), out["g_bcast"]
assert out["pieces"].shape == (size * (size + 1) // 2, 1)
assert out["scattered"].shape[1] == 3
assert out["sparse"].indices.shape == (2 * size,) and np.allclose(out["sparse"].values, 1.0 / size)
print(f"rank {rank}: graph ops and gradients ok", flush=True)

# ---- DistributedOptimizer: sparse gradients by all-gather or as dense, the same update on every rank ----
for sparse_as_dense in (False, True):
    tf.reset_default_graph()
    table = tf.Variable(np.zeros((5, 2)), name="table")
    bias = tf.Variable(np.zeros(2), name="bias")
    ids = tf.constant([rank % 5, 4])
    loss = tf.reduce_sum(tf.gather(table, ids) * float(rank + 1)) + tf.reduce_sum(bias)
    optimizer = twd.DistributedOptimizer(tf.train.GradientDescentOptimizer(1.0), sparse_as_dense=sparse_as_dense)
    step = optimizer.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(twd.broadcast_global_variables(0))
        sess.run(step)
        got_table, got_bias = sess.run([table, bias])
    expected = np.zeros((5, 2))
    for r in range(size):
        expected[r % 5] -= (r + 1) / size
        expected[4] -= (r + 1) / size
    assert np.allclose(got_table, expected), (sparse_as_dense, got_table, expected)
    assert np.allclose(got_bias, -1.0), got_bias
print(f"rank {rank}: DistributedOptimizer with sparse gradients ok", flush=True)

# ---- a collective inside a while loop: one per iteration, matched by frame and iteration ---------------
tf.reset_default_graph()
_, total = tf.while_loop(lambda i, acc: i < 4, lambda i, acc: (i + 1, acc + twd.allreduce(
    tf.cast(i + rank, tf.float32), op=twd.Sum)), [tf.constant(0), tf.constant(0.0)])
with tf.Session() as sess:
    assert sess.run(total) == sum(i * size + sum(range(size)) for i in range(4))

# ---- concurrent steps: each thread its own collective, and one collective from several threads ---------
tf.reset_default_graph()
feeds = [tf.placeholder(tf.float32, [4]) for _ in range(4)]
own = [twd.allreduce(f, op=twd.Sum, name=f"own{k}") for k, f in enumerate(feeds)]
shared = twd.allreduce(tf.ones([4]), op=twd.Sum, name="shared")
results, failures = {}, []
with tf.Session() as sess:
    def worker(k):
        try:
            for step in range(10):
                results[(k, step)] = sess.run([own[k], shared], {feeds[k]: np.full(4, k + step, np.float32)})
        except Exception as e:  # reported below
            failures.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
assert not failures, failures
for (k, step), (mine, common) in results.items():
    assert np.allclose(mine, (k + step) * size) and np.allclose(common, size), (k, step, mine, common)
print(f"rank {rank}: loops and concurrent steps ok", flush=True)

# ---- ranks that disagree get an error naming them; the session goes on ----------------------------------
tf.reset_default_graph()
odd = twd.allreduce(tf.ones([2 + (rank == size - 1)]), name="odd")
fine = twd.allreduce(tf.ones([2]), op=twd.Sum, name="fine")
with tf.Session() as sess:
    if size > 1:
        try:
            sess.run(odd)
            raise AssertionError("disagreeing shapes were not reported")
        except tf.errors.InvalidArgumentError as e:
            assert "disagree on its shape" in str(e) and f"rank {size - 1}: [3]" in str(e), str(e)
    assert np.allclose(sess.run(fine), size)

# ---- a step cancelled by its deadline: the collective still runs later, so the ranks stay matched -------
tf.reset_default_graph()
x = tf.placeholder(tf.float32, [])
late = twd.allreduce(x, op=twd.Sum, name="late")
with tf.Session() as sess:
    if size > 1:
        if rank == 0:
            try:
                sess.run(late, {x: 100.0}, options=tf.RunOptions(timeout_in_ms=300))
                raise AssertionError("the deadline did not cancel the step")
            except tf.errors.DeadlineExceededError:
                pass
        else:
            time.sleep(1.5)  # well past rank 0's deadline, even on a loaded machine
            assert sess.run(late, {x: 1.0}) == 100.0 + (size - 1)  # met rank 0's cancelled submission
    assert sess.run(late, {x: 2.0}) == 2.0 * size
print(f"rank {rank}: disagreement and cancellation ok", flush=True)
print(f"collectives OK on rank {rank}", flush=True)
