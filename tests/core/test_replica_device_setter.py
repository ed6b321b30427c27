"""tf.train.replica_device_setter: variables round-robin (or greedily by size) over ps tasks, other ops on
the worker, inner device scopes merged in, partitioned variables' shards spread over the ps tasks."""

import pytest

import tensorweave as tf


def _var_devices(variables):
    return [v.op.device for v in variables]


def test_round_robin_variables_and_worker_ops():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            a = tf.Variable(1.0, name="a")
            b = tf.Variable(2.0, name="b")
            c = tf.Variable(3.0, name="c")
            y = a + b * c
        assert _var_devices([a, b, c]) == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
        assert y.op.device == "/job:worker"
        # the initializer and read are colocated with the handle, so they live on the ps too
        assert a.initializer.device == "/job:ps/task:0"


def test_cluster_sets_ps_tasks_and_worker_device_merges_inner_scopes():
    cluster = tf.train.ClusterSpec({"ps": ["h:1", "h:2", "h:3"], "worker": ["h:4", "h:5"]})
    with tf.Graph().as_default():
        setter = tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:1")
        with tf.device(setter):
            vs = [tf.Variable(float(i), name=f"v{i}") for i in range(4)]
            with tf.device("/cpu:0"):
                z = tf.constant(1.0) + 2.0
            w = tf.constant(3.0, name="w")
        assert _var_devices(vs) == [f"/job:ps/task:{t}" for t in (0, 1, 2, 0)]
        assert z.op.device == "/job:worker/task:1/device:CPU:0"
        assert w.op.device == "/job:worker/task:1"
    # a plain dict works too; a cluster without the ps job means no placement at all (TF returns None)
    assert tf.train.replica_device_setter(cluster={"ps": ["h:1"], "worker": ["h:2"]}) is not None
    assert tf.train.replica_device_setter(cluster={"worker": ["h:2"]}) is None
    assert tf.train.replica_device_setter(ps_tasks=0) is None


def test_get_variable_and_optimizer_slots_go_to_ps():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            w = tf.get_variable("w", shape=[3, 2], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", shape=[2], initializer=tf.zeros_initializer())
            x = tf.placeholder(tf.float32, [None, 3])
            loss = tf.reduce_sum(tf.matmul(x, w) + b)
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        assert _var_devices([w, b]) == ["/job:ps/task:0", "/job:ps/task:1"]
        assert x.op.device == "/job:worker"
        assert train.device in ("/job:worker", "")
        for op in tf.get_default_graph().get_operations():
            if op.type == "VarHandleOp":
                assert op.device.startswith("/job:ps/task:"), (op.name, op.device)


def test_greedy_load_balancing_by_bytes():
    strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
            big = tf.get_variable("big", shape=[100, 10])     # 4000 bytes -> task 0
            small1 = tf.get_variable("s1", shape=[10])         # -> task 1
            small2 = tf.get_variable("s2", shape=[20])         # task 1 still lighter -> task 1
            mid = tf.get_variable("mid", shape=[1000], dtype=tf.float64)  # 8000 bytes; task 1 lighter -> 1
            last = tf.get_variable("last", shape=[5])         # task 0 (4000) < task 1 (8120) -> 0
        assert _var_devices([big, small1, small2, mid, last]) == [
            "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:1", "/job:ps/task:1", "/job:ps/task:0"]


def test_partitioned_variable_shards_spread_over_ps():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            emb = tf.get_variable("emb", shape=[12, 4], partitioner=tf.fixed_size_partitioner(3))
        shards = list(emb)
        assert len(shards) == 3
        assert sorted(_var_devices(shards)) == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2"]


def test_inner_job_scope_and_custom_ps_ops():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_ops=["Placeholder"])):
            p = tf.placeholder(tf.float32, name="p")
            v = tf.Variable(1.0, name="v")
            with tf.device("/job:ps/task:1"):
                q = tf.placeholder(tf.float32, name="q")
        assert p.op.device == "/job:ps/task:0"
        assert v.op.device == "/job:worker"   # VarHandleOp is not in the custom ps_ops
        assert q.op.device == "/job:ps/task:1"


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)
    with pytest.raises(ValueError, match="ps_tasks"):
        tf.train.replica_device_setter(ps_tasks=-1)
    with pytest.raises(ValueError, match="num_tasks"):
        tf.train.GreedyLoadBalancingStrategy(0)
    with tf.Graph().as_default():
        strategy = tf.train.GreedyLoadBalancingStrategy(2)
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
            with pytest.raises(ValueError, match="fully defined shape"):
                tf.Variable(tf.placeholder_with_default([1.0], [None]), validate_shape=False, name="dyn")


def test_embedding_lookup_gathers_on_each_shard_and_gradients_stay_sparse():
    with tf.Graph().as_default() as graph:
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            emb = tf.get_variable("emb", shape=[12, 2], partitioner=tf.fixed_size_partitioner(3))
            rows = tf.nn.embedding_lookup(emb, tf.constant([0, 5, 11]))
            grads = tf.train.GradientDescentOptimizer(1.0).compute_gradients(tf.reduce_sum(rows))
        gathers = sorted(op.device for op in graph.get_operations()
                         if op.type in ("Gather", "GatherV2", "ResourceGather") and op.name.startswith("embedding"))
        assert gathers == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2"]  # each shard gathers its rows
        assert len(grads) == 3 and all(isinstance(g, tf.IndexedSlices) for g, _ in grads)
