"""2 ps + 2 workers training a 1000 x 16 embedding split in two shards by tf.fixed_size_partitioner(2), one
shard per ps task (replica_device_setter(ps_tasks=2)). Each worker looks up a few ids of its own (and a few
shared ones) and pulls their rows toward a target. argv[1]: "async" (each worker applies its own sparse
gradients) or "sync" (SyncReplicasOptimizer aggregating 2 sparse pushes per step on the ps tasks).

Each worker checks that only the rows some worker looked up changed (the others equal the initial table
bit for bit) and that the loss over those rows fell, then prints the final table's digest: the test
compares the two workers' digests."""

import hashlib
import sys
import time

import numpy as np
from mpi_common import start_ps_cluster, wait_until_initialized

import tensorweave as tf

MODE = sys.argv[1]
assert MODE in ("async", "sync"), MODE
VOCAB, DIM, BATCH = 1000, 16, 8
ASYNC_STEPS, SYNC_TARGET = 40, 40

cluster, job, task, server = start_ps_cluster(num_ps=2, heartbeat_timeout=30)
assert cluster.num_tasks("ps") == 2 and cluster.num_tasks("worker") == 2, cluster.as_dict()

initial = np.random.RandomState(0).standard_normal((VOCAB, DIM)).astype(np.float32)
target = np.random.RandomState(1).standard_normal((VOCAB, DIM)).astype(np.float32)
shared = np.array([3, 501, 998])  # looked up by both workers: concurrent sparse updates to the same rows
own = [np.random.RandomState(10 + t).choice(np.arange(10, 990), 12, replace=False) for t in (0, 1)]
own[1] = np.setdiff1d(own[1], own[0])
worker_ids = [np.concatenate([own[t], shared]).astype(np.int32) for t in (0, 1)]
touched = np.union1d(worker_ids[0], worker_ids[1])
assert (touched < VOCAB // 2).any() and (touched >= VOCAB // 2).any(), touched  # rows of both shards

if job == "ps":
    server.join()
    print(f"ps {task} joined: both workers ended", flush=True)
    sys.exit(0)

rng = np.random.RandomState(100 + task)
with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device=f"/job:worker/task:{task}")):
    emb = tf.get_variable("emb", initializer=tf.constant(initial), partitioner=tf.fixed_size_partitioner(2))
    step = tf.train.get_or_create_global_step()
    ids = tf.placeholder(tf.int32, [None], name="ids")
    want = tf.placeholder(tf.float32, [None, DIM], name="want")
    rows = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")  # row i of the table is id i
    loss = tf.reduce_mean(tf.reduce_sum(tf.square(rows - want), 1))
    sgd = tf.train.GradientDescentOptimizer(1.0 if MODE == "sync" else 0.5)
    opt = tf.train.SyncReplicasOptimizer(sgd, replicas_to_aggregate=2, total_num_replicas=2) if MODE == "sync" else sgd
    grads = opt.compute_gradients(loss)
    assert [type(g).__name__ for g, _ in grads] == ["IndexedSlices", "IndexedSlices"], grads
    train = opt.apply_gradients(grads, global_step=step)
    table = tf.concat(list(emb), 0)

shards = list(emb)
assert [v.op.device for v in shards] == ["/job:ps/task:0", "/job:ps/task:1"], [v.op.device for v in shards]
assert [v.shape.as_list() for v in shards] == [[500, DIM], [500, DIM]], [v.shape for v in shards]
if MODE == "sync":
    accumulators = {op.name: op.device for op in tf.get_default_graph().get_operations()
                    if op.type == "SparseConditionalAccumulator"}
    assert sorted(accumulators.values()) == ["/job:ps/task:0", "/job:ps/task:1"], accumulators  # next to its shard
    dense = [op.name for op in tf.get_default_graph().get_operations() if op.type == "ConditionalAccumulator"]
    assert not dense, f"the embedding's gradients were densified: {dense}"


def batch(id_pool):
    chosen = rng.choice(id_pool, BATCH, replace=False)
    return {ids: chosen, want: target[chosen]}


with tf.Session(server.target) as sess:
    coord = tf.train.Coordinator()
    if task == 0:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        if MODE == "sync":
            sess.run(opt.local_step_init_op)
            sess.run(opt.get_init_tokens_op())
            opt.get_chief_queue_runner().create_threads(sess, coord=coord, daemon=True, start=True)
    else:
        wait_until_initialized(sess, step, "the chief never initialized the variables on the ps tasks")
        if MODE == "sync":
            sess.run(tf.local_variables_initializer())
            sess.run(opt.local_step_init_op)
    started = time.time()
    pushes = 0
    if MODE == "async":
        for _ in range(ASYNC_STEPS):
            sess.run(train, batch(worker_ids[task]))
            pushes += 1
        deadline = time.time() + 60  # wait for the other worker's updates to reach the ps tasks
        while sess.run(step) < 2 * ASYNC_STEPS:
            assert time.time() < deadline, f"the global step stayed at {sess.run(step)}: updates were not shared"
            time.sleep(0.02)
    else:
        while sess.run(step) < SYNC_TARGET:
            sess.run(train, batch(worker_ids[task]))
            pushes += 1
    seconds = time.time() - started
    total = sess.run(step)
    final = sess.run(table)
    final_loss = sess.run(loss, {ids: touched, want: target[touched]})
    coord.request_stop()

initial_loss = float(np.mean(np.sum((initial[touched] - target[touched]) ** 2, 1)))
untouched = np.setdiff1d(np.arange(VOCAB), touched)
assert np.array_equal(final[untouched], initial[untouched]), "a row no worker looked up changed"
assert np.all(np.any(final[touched] != initial[touched], axis=1)), "a looked-up row did not change"
assert final_loss < 0.2 * initial_loss, (initial_loss, final_loss)
expected_steps = 2 * ASYNC_STEPS if MODE == "async" else SYNC_TARGET
assert total == expected_steps, (total, expected_steps)
digest = hashlib.sha256(final.tobytes()).hexdigest()[:16]
print(f"worker {task}: {MODE} loss {initial_loss:.3f} -> {final_loss:.5f}, global step {total}, pushes {pushes}, "
      f"{len(touched)} of {VOCAB} rows changed, {seconds:.2f} s, table {digest}, sparse ok", flush=True)
