"""tf.train.SyncReplicasOptimizer with IndexedSlices gradients (an embedding's), in one process: pushes carry
only their rows, the chief applies the mean of m fresh pushes through the sparse path (duplicate rows
summed), untouched rows keep their bits, and stale sparse pushes are dropped."""

import numpy as np

import tensorweave as tf
from test_sync_replicas_optimizer import _finish, _in_thread

ROWS, WIDTH = 8, 3


def _model(m, n, opt=None, partitions=None, initial=None):
    """loss = sum(lookup(table, ids) * g): the table's gradient is IndexedSlices(values=g, indices=ids)."""
    initial = np.arange(ROWS * WIDTH, dtype=np.float32).reshape(ROWS, WIDTH) / 10 if initial is None else initial
    table = tf.get_variable("table", initializer=tf.constant(initial),
                            partitioner=partitions and tf.fixed_size_partitioner(partitions))
    step = tf.train.get_or_create_global_step()
    ids = tf.placeholder(tf.int32, [None], name="ids")
    g = tf.placeholder(tf.float32, [None, WIDTH], name="g")
    loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids, partition_strategy="div") * g)
    sync = tf.train.SyncReplicasOptimizer(opt or tf.train.GradientDescentOptimizer(1.0), replicas_to_aggregate=m,
                                          total_num_replicas=n)
    grads = sync.compute_gradients(loss)
    assert all(isinstance(grad, tf.IndexedSlices) for grad, _ in grads)
    train = sync.apply_gradients(grads, global_step=step)
    read = tf.concat(list(table), 0) if partitions else table.read_value()
    return read, step, ids, g, sync, train


def _round(sess, train, ids, g, sync_op, pushes):
    """Every replica pushes (in a thread, waiting for its token); the chief's op aggregates and releases them."""
    replicas = [_in_thread(lambda r=r, v=v: sess.run(train, {ids: r, g: v})) for r, v in pushes]
    sess.run(sync_op)
    for t, out in replicas:
        _finish(t, out, "a replica")


def _mean_update(pushes, m):
    """The dense equivalent of the applied gradient: the pushes' rows summed (duplicates too), over m."""
    dense = np.zeros((ROWS, WIDTH), np.float64)
    for rows, values in pushes:
        np.add.at(dense, rows, values)
    return dense / m


def _pushes(rng):
    return [(np.array([1, 5, 1], np.int32), rng.standard_normal((3, WIDTH)).astype(np.float32)),
            (np.array([5, 6], np.int32), rng.standard_normal((2, WIDTH)).astype(np.float32))]


def test_sparse_gradients_are_averaged_and_touch_only_their_rows():
    rng = np.random.default_rng(3)
    with tf.Graph().as_default():
        read, step, ids, g, sync, train = _model(2, 2)
        sync_op = sync.get_chief_queue_runner().enqueue_ops[0]
        graph = tf.get_default_graph()
        assert not [op for op in graph.get_operations() if op.type == "UnsortedSegmentSum"], "densified"
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(sync.local_step_init_op)
            expected = sess.run(read).astype(np.float64)
            initial = expected.copy()
            for round_ in range(3):
                pushes = _pushes(rng)
                _round(sess, train, ids, g, sync_op, pushes)
                expected -= _mean_update(pushes, 2)
                assert sess.run(step) == round_ + 1
            table = sess.run(read)
    np.testing.assert_allclose(table, expected, rtol=1e-5, atol=1e-6)
    untouched = [r for r in range(ROWS) if r not in (1, 5, 6)]
    np.testing.assert_array_equal(table[untouched], initial[untouched].astype(np.float32))
    assert not np.allclose(table[[1, 5, 6]], initial[[1, 5, 6]])


def test_pushes_carry_rows_not_the_table():
    with tf.Graph().as_default():
        _model(2, 2)
        (push,) = [op for op in tf.get_default_graph().get_operations()
                   if op.type == "SparseAccumulatorApplyGradient"]
        _, indices, values, _ = push.inputs[1:]
        assert indices.shape.as_list() == [None] and values.shape.as_list() == [None, WIDTH]


def test_stale_sparse_pushes_are_dropped():
    with tf.Graph().as_default():
        read, step, ids, g, sync, train = _model(1, 2)
        sync_op = sync.get_chief_queue_runner().enqueue_ops[0]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            initial = sess.run(read)
            sess.run(step.assign(5))
            sess.run(sync.get_init_tokens_op())  # one token carrying step 5
            stale = np.full((2, WIDTH), 100.0, np.float32)
            sess.run(train, {ids: [0, 2], g: stale})  # local step 0 < global step 5: dropped, rows 0 and 2 kept
            chief = _in_thread(lambda: sess.run(sync_op))
            fresh = np.array([[1.0, 2.0, 3.0]], np.float32)
            sess.run(train, {ids: [4], g: fresh})  # local step 5: fresh, applied alone
            _finish(*chief, "the chief")
            table = sess.run(read)
            assert sess.run(step) == 6
    expected = initial.copy()
    expected[4] -= fresh[0]
    np.testing.assert_array_equal(table, expected)


def test_partitioned_table_with_adagrad_sums_duplicates_before_the_update():
    """Adagrad's accumulator sees each row's summed mean gradient once (as TF1's sparse path), per shard."""
    rng = np.random.default_rng(5)
    lr, init_acc = 0.5, 0.1
    with tf.Graph().as_default():
        read, step, ids, g, sync, train = _model(2, 2, tf.train.AdagradOptimizer(lr, init_acc), partitions=2)
        sync_op = sync.get_chief_queue_runner().enqueue_ops[0]
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(sync.local_step_init_op)
            table = sess.run(read).astype(np.float64)
            initial = table.copy()
            accum = np.full_like(table, init_acc)
            for _ in range(2):
                pushes = _pushes(rng)
                _round(sess, train, ids, g, sync_op, pushes)
                mean = _mean_update(pushes, 2)
                touched = np.unique(np.concatenate([r for r, _ in pushes]))
                accum[touched] += mean[touched] ** 2
                table[touched] -= lr * mean[touched] / np.sqrt(accum[touched])
            got = sess.run(read)
    np.testing.assert_allclose(got, table, rtol=1e-5, atol=1e-6)
    untouched = [r for r in range(ROWS) if r not in (1, 5, 6)]  # rows 0-3 in shard 0, 4-7 in shard 1
    np.testing.assert_array_equal(got[untouched], initial[untouched].astype(np.float32))


def test_shards_on_two_devices_keep_their_updates_apart():
    """Each shard's queue, aggregation and update stay on its device (2 ps tasks: /cpu:0 and /cpu:1 here)."""
    rng = np.random.default_rng(7)
    with tf.Graph().as_default():
        def setter(op):  # variables round robin on two devices, as replica_device_setter does with 2 ps tasks
            if op.type == "VarHandleOp":
                setter.count += 1
                return f"/cpu:{setter.count % 2}"
            return op.device
        setter.count = -1
        with tf.device(setter):
            read, step, ids, g, sync, train = _model(2, 2, tf.train.AdagradOptimizer(0.5), partitions=2)
        sync_op = sync.get_chief_queue_runner().enqueue_ops[0]
        config = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=False)
        with tf.Session(config=config) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            sess.run(sync.local_step_init_op)
            initial = sess.run(read)
            for _ in range(2):
                _round(sess, train, ids, g, sync_op, _pushes(rng))
            table = sess.run(read)
            assert sess.run(step) == 2
    untouched = [r for r in range(ROWS) if r not in (1, 5, 6)]
    np.testing.assert_array_equal(table[untouched], initial[untouched])
    assert not np.allclose(table[[1, 5, 6]], initial[[1, 5, 6]])
