"""get_variable and variable_scope: TF1 naming, reuse rules, defaults, partitioned variables, initializers."""

import numpy as np
import pytest

import tensorweave as tf


# ---- naming and reuse -----------------------------------------------------------------------------------
def test_variable_names_follow_variable_scopes_and_ops_follow_name_scopes():
    with tf.variable_scope("model"):
        w = tf.get_variable("w", [2, 3])
        with tf.variable_scope("layer"):
            b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
            x = tf.add(1.0, 2.0)
    assert (w.name, b.name, x.name) == ("model/w:0", "model/layer/b:0", "model/layer/Add:0")
    with tf.variable_scope("model", reuse=True) as scope:
        assert tf.get_variable("w", [2, 3]) is w
        assert scope.name == "model" and scope.original_name_scope == "model_1/"
        with tf.variable_scope("layer"):
            assert tf.get_variable("b") is b  # reuse is inherited
            assert tf.add(1.0, 2.0).name == "model_1/layer/Add:0"


def test_reuse_errors_are_tf1s():
    with tf.variable_scope("s"):
        tf.get_variable("v", [1])
        with pytest.raises(ValueError, match=r"Variable s/v already exists, disallowed. Did you mean to set "
                                             r"reuse=True or reuse=tf.AUTO_REUSE in VarScope\? Originally defined at "
                                             r".*test_variable_scope.py"):
            tf.get_variable("v", [1])
    with tf.variable_scope("s", reuse=True):
        with pytest.raises(ValueError, match="Variable s/missing does not exist, or was not created with "
                                             "tf.get_variable"):
            tf.get_variable("missing", [1])
        with pytest.raises(ValueError, match="Trying to share variable s/v, but specified shape"):
            tf.get_variable("v", [2])
        with pytest.raises(ValueError, match="specified dtype float64 and found dtype float32"):
            tf.get_variable("v", [1], dtype=tf.float64)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="d", reuse=True):
            pass
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is required"):
        tf.variable_scope(None)
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        tf.get_variable("c", [2], initializer=np.zeros(2))
    with pytest.raises(ValueError, match="Initializer type 'float64' and explicit dtype 'float32' don't match"):
        tf.get_variable("c", initializer=np.zeros(2), dtype=tf.float32)
    with pytest.raises(ValueError, match="not valid"):
        tf.get_variable("u", [None, 2], initializer=tf.zeros_initializer())


def test_auto_reuse_creates_once_then_shares():
    def tower():
        with tf.variable_scope("tower", reuse=tf.AUTO_REUSE):
            return tf.get_variable("k", [2])
    assert tower() is tower()
    assert [v.name for v in tf.global_variables()] == ["tower/k:0"]


def test_reuse_variables_and_reentering_a_captured_scope():
    with tf.variable_scope("enc") as enc:
        v = tf.get_variable("v", [1])
    with tf.variable_scope(enc, reuse=True):
        assert tf.get_variable("v") is v
    with tf.variable_scope("enc") as scope:
        scope.reuse_variables()
        assert tf.get_variable_scope().reuse is True and tf.get_variable("v") is v
    assert tf.get_variable_scope().reuse is False and tf.get_variable_scope().name == ""


def test_default_names_are_unique_and_restart_when_a_scope_is_reentered():
    def build():
        names = []
        for _ in range(2):
            with tf.variable_scope(None, default_name="dense"):
                names.append(tf.get_variable("kernel", [1]).name)
        return names
    with tf.variable_scope("net"):
        first = build()
    with tf.variable_scope("net", reuse=True):
        second = build()
    assert first == second == ["net/dense/kernel:0", "net/dense_1/kernel:0"]


def test_scope_defaults_initializer_dtype_and_regularizer(sess):
    with tf.variable_scope("d", initializer=tf.constant_initializer(0.5), dtype=tf.float64,
                           regularizer=lambda w: tf.reduce_sum(w) * 2.0):
        v = tf.get_variable("v", [2])
        plain = tf.get_variable("plain", [2], regularizer=tf.no_regularizer)
        with tf.variable_scope("inner", initializer=tf.ones_initializer()):
            ones = tf.get_variable("ones", [3])
    assert v.dtype is tf.float64 and ones.dtype is tf.float64
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2 and losses[0].name.startswith("d/v/Regularizer/")
    sess.run(tf.global_variables_initializer())
    for variable, value in zip((v, plain, ones), ([0.5, 0.5], [0.5, 0.5], [1, 1, 1])):
        np.testing.assert_array_equal(sess.run(variable), value)
    assert sess.run(losses[0]) == 2.0 and sess.run(tf.losses.get_regularization_loss()) == 2.0 + 6.0


def test_default_initializers_glorot_for_floats_zeros_for_ints(sess):
    w = tf.get_variable("w", [50, 30])
    n = tf.get_variable("n", [3], dtype=tf.int64)
    sess.run(tf.global_variables_initializer())
    value = sess.run(w)
    limit = np.sqrt(6.0 / (50 + 30))
    assert np.abs(value).max() <= limit and np.abs(value).max() > 0.9 * limit and abs(value.mean()) < 0.05
    np.testing.assert_array_equal(sess.run(n), [0, 0, 0])
    with pytest.raises(ValueError, match="An initializer for variable c of complex64 is required"):
        tf.get_variable("c", [1], dtype=tf.complex64)


def test_custom_getters_compose_outer_to_inner():
    calls = []

    def outer(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name, *args, **kwargs)

    def inner(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        return getter(name, *args, **kwargs)

    with tf.variable_scope("a", custom_getter=outer):
        with tf.variable_scope("b", custom_getter=inner):
            v = tf.get_variable("v", [1])
    assert v.name == "a/b/v:0" and calls == [("inner", "a/b/v"), ("outer", "a/b/v")]


def test_get_local_variable_is_local_and_not_trainable():
    v = tf.get_local_variable("epochs", [], dtype=tf.int64)
    assert v in tf.local_variables() and v not in tf.global_variables() and v not in tf.trainable_variables()


# ---- partitioned variables -----------------------------------------------------------------------------
def test_partitioned_variable_shards_hold_the_whole(sess):
    full = np.arange(14.0).reshape(7, 2)
    emb = tf.get_variable("emb", initializer=tf.constant_initializer(full), shape=[7, 2],
                          partitioner=tf.fixed_size_partitioner(3))
    shards = list(emb)
    assert [s.name for s in shards] == ["emb/part_0:0", "emb/part_1:0", "emb/part_2:0"]
    assert [s.shape.as_list() for s in shards] == [[3, 2], [2, 2], [2, 2]]
    assert [s._save_slice_info.spec for s in shards] == ["7 2 0,3:0,2", "7 2 3,2:0,2", "7 2 5,2:0,2"]
    assert len(emb) == 3 and emb.shape.as_list() == [7, 2] and tf.global_variables() == shards
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(emb)), full)
    with tf.variable_scope("", reuse=True):
        assert tf.get_variable("emb", [7, 2]) is emb
    with pytest.raises(ValueError, match="Partitioned variable with name emb already exists"):
        tf.get_variable("emb", [7, 2], partitioner=tf.fixed_size_partitioner(3))
    with pytest.raises(ValueError, match="No partitioner was provided, but a partitioned version"):
        tf.get_variable("emb", [7, 2])


def test_partitioned_variable_assign_and_tensor_initializer(sess):
    emb = tf.get_variable("e", initializer=tf.constant(np.arange(8.0).reshape(4, 2)),
                          partitioner=tf.fixed_size_partitioner(2))
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(emb.as_tensor()), np.arange(8.0).reshape(4, 2))
    sess.run(emb.assign(np.ones((4, 2))))
    for shard in emb:
        np.testing.assert_array_equal(sess.run(shard), np.ones((2, 2)))


def test_embedding_lookup_over_a_partitioned_variable_trains_only_looked_up_rows(sess):
    table = np.arange(20.0).reshape(10, 2)
    emb = tf.get_variable("table", shape=[10, 2], initializer=tf.constant_initializer(table),
                          partitioner=tf.fixed_size_partitioner(2))
    ids = tf.constant([7, 2, 7])
    loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids, partition_strategy="div"))
    grads = tf.gradients(loss, list(emb))
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(loss), table[[7, 2, 7]].sum())
    sess.run(train)
    expected = table.copy()
    expected[2] -= 0.5
    expected[7] -= 1.0
    np.testing.assert_array_equal(sess.run(emb.as_tensor()), expected)


def test_partitioners_choose_shard_counts():
    shape = tf.TensorShape([1000, 64])
    assert tf.fixed_size_partitioner(4)(shape=shape, dtype=tf.float32) == [4, 1]
    assert tf.fixed_size_partitioner(4, axis=1)(shape=tf.TensorShape([3, 2]), dtype=tf.float32) == [1, 2]
    # 1000 rows of 256 bytes; 64 KiB per shard holds 256 rows -> 4 shards
    assert tf.variable_axis_size_partitioner(64 << 10)(shape, tf.float32) == [4, 1]
    assert tf.variable_axis_size_partitioner(64 << 10, max_shards=2)(shape, tf.float32) == [2, 1]
    assert tf.min_max_variable_partitioner(max_partitions=3, min_slice_size=64 << 10)(shape, tf.float32) == [3, 1]
    assert tf.min_max_variable_partitioner(max_partitions=8, min_slice_size=1 << 20)(shape, tf.float32) == [1, 1]
    with pytest.raises(ValueError, match="must be positive"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="Can only slice a variable along one dimension"):
        tf.get_variable("two_axes", [4, 4], partitioner=lambda shape, dtype: [2, 2])


# ---- initializers --------------------------------------------------------------------------------------
def _init(sess, initializer, shape, dtype=tf.float32):
    v = tf.get_variable(f"v{len(tf.global_variables())}", shape, dtype=dtype, initializer=initializer)
    sess.run(v.initializer)
    return sess.run(v)


def test_constant_and_fill_initializers(sess):
    np.testing.assert_array_equal(_init(sess, tf.zeros_initializer(), [2]), [0, 0])
    np.testing.assert_array_equal(_init(sess, tf.ones_initializer(), [2], tf.int32), [1, 1])
    np.testing.assert_array_equal(_init(sess, tf.constant_initializer([1, 2]), [4]), [1, 2, 2, 2])
    np.testing.assert_array_equal(_init(sess, tf.initializers.identity(2.0), [2, 3]), [[2, 0, 0], [0, 2, 0]])
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal_initializer(dtype=tf.int32)


def test_random_initializers_have_their_distributions(sess):
    u = _init(sess, tf.random_uniform_initializer(-2.0, 3.0, seed=1), [4000])
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.1
    n = _init(sess, tf.random_normal_initializer(1.0, 2.0, seed=2), [4000])
    assert abs(n.mean() - 1.0) < 0.15 and abs(n.std() - 2.0) < 0.15
    t = _init(sess, tf.truncated_normal_initializer(0.0, 1.0, seed=3), [4000])
    assert np.abs(t).max() <= 2.0 and abs(t.std() - 0.88) < 0.05
    he = _init(sess, tf.initializers.he_normal(seed=4), [400, 300])
    assert abs(he.std() - np.sqrt(2.0 / 400)) < 0.005
    vs = _init(sess, tf.variance_scaling_initializer(3.0, "fan_out", "uniform", seed=5), [200, 100])
    assert np.abs(vs).max() <= np.sqrt(9.0 / 100)
    g = _init(sess, tf.glorot_normal_initializer(seed=6), [300, 200])
    assert abs(g.std() - np.sqrt(2.0 / 500)) < 0.005
    with pytest.raises(ValueError, match="Invalid `mode`"):
        tf.variance_scaling_initializer(mode="fan_max")


def test_orthogonal_initializer_gives_orthonormal_columns_or_rows(sess):
    tall = _init(sess, tf.orthogonal_initializer(gain=2.0, seed=1), [6, 4], tf.float64)
    np.testing.assert_allclose(tall.T @ tall, 4.0 * np.eye(4), atol=1e-10)
    wide = _init(sess, tf.initializers.orthogonal(seed=2), [3, 5], tf.float64)
    np.testing.assert_allclose(wide @ wide.T, np.eye(3), atol=1e-10)
    with pytest.raises(ValueError, match="rank 2 or more"):
        tf.orthogonal_initializer()([3])


def test_graph_seed_makes_initial_values_repeatable():
    def initial_weights():
        with tf.Graph().as_default():
            tf.set_random_seed(1234)
            w = tf.get_variable("w", [3, 3])
            with tf.Session() as s:
                s.run(w.initializer)
                first = s.run(w)
                s.run(w.initializer)
                return first, s.run(w)
    (a1, a2), (b1, b2) = initial_weights(), initial_weights()
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)  # each run of the initializer draws anew


def test_scaling_initializers_use_the_full_shape_of_a_partitioned_variable(sess):
    emb = tf.get_variable("p", [400, 100], initializer=tf.glorot_uniform_initializer(seed=1),
                          partitioner=tf.fixed_size_partitioner(4))
    sess.run(tf.global_variables_initializer())
    value = sess.run(emb.as_tensor())
    limit = np.sqrt(6.0 / 500)
    assert np.abs(value).max() <= limit and np.abs(value).max() > 0.95 * limit
