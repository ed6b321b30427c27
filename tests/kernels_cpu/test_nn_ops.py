"""tf.nn forward values against float64 numpy references: activations, softmax, losses, normalization,
dropout, embeddings, top_k and in_top_k, dynamic_partition/dynamic_stitch."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_op

RNG = np.random.default_rng(0)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


ACTIVATIONS = {
    "relu": (tf.nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (tf.nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "elu": (tf.nn.elu, lambda x: np.where(x < 0, np.expm1(np.minimum(x, 0)), x)),
    "selu": (tf.nn.selu, lambda x: SELU_SCALE * np.where(x < 0, SELU_ALPHA * np.expm1(np.minimum(x, 0)), x)),
    "softplus": (tf.nn.softplus, lambda x: np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)),
    "softsign": (tf.nn.softsign, lambda x: x / (1 + np.abs(x))),
    "leaky_relu": (tf.nn.leaky_relu, lambda x: np.where(x < 0, 0.2 * x, x)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_match_numpy(name):
    tf_fn, np_fn = ACTIVATIONS[name]
    check_op(tf_fn, lambda x: np_fn(x.astype(np.float64)).astype(x.dtype), [[(3, 4)], [(2, 3, 5)], [()]],
             dtypes=["float32", "float64"])
    check_op(tf_fn, lambda x: np_fn(x.astype(np.float64)).astype(x.dtype), [[(17,)]], dtypes=["float16"],
             rtol=2e-3, atol=2e-3)


def test_relu_family_on_integers():
    check_op(tf.nn.relu, lambda x: np.maximum(x, 0).astype(x.dtype), [[(3, 4)]], dtypes=["int32", "int64", "int8"])
    x = np.array([-7, -1, 0, 3, 6, 9], np.int32)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.nn.relu6(x)), [0, 0, 0, 3, 6, 6])


def test_activations_are_stable_at_extremes(sess):
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0], np.float32)
    softplus, elu, selu = sess.run([tf.nn.softplus(x), tf.nn.elu(x), tf.nn.selu(x)])
    np.testing.assert_allclose(softplus, [0, 9.357623e-14, np.log(2), 30, 1000], rtol=1e-6)
    np.testing.assert_allclose(elu, [-1, -1, 0, 30, 1000], rtol=1e-6)
    assert np.isfinite(selu).all() and softplus.dtype == np.float32


def test_math_activations_are_in_tf_nn(sess):
    assert tf.nn.sigmoid is tf.sigmoid and tf.nn.tanh is tf.tanh
    x = np.array([-30.0, -1.0, 0.0, 2.0])
    np.testing.assert_allclose(sess.run(tf.nn.sigmoid(x)), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(sess.run(tf.nn.tanh(x)), np.tanh(x))


def test_leaky_relu_alpha_and_crelu(sess):
    x = np.array([[-2.0, 0.5], [1.0, -0.25]])
    np.testing.assert_allclose(sess.run(tf.nn.leaky_relu(x, alpha=0.1)), np.where(x < 0, 0.1 * x, x))
    np.testing.assert_allclose(sess.run(tf.nn.crelu(x)), np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1))
    assert tf.nn.crelu(tf.placeholder(tf.float32, [None, 3])).shape.as_list() == [None, 6]


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax_over_any_axis(axis):
    check_op(lambda x: tf.nn.softmax(x, axis=axis), lambda x: _softmax(x.astype(np.float64), axis).astype(x.dtype),
             [[(3, 4, 5)]])
    check_op(lambda x: tf.nn.log_softmax(x, dim=axis),
             lambda x: np.log(_softmax(x.astype(np.float64), axis)).astype(x.dtype), [[(3, 4, 5)]])


def test_softmax_is_stable_for_large_logits(sess):
    x = np.array([[1000.0, 1001.0, 999.0], [-1e4, 0.0, 1e4]], np.float32)
    got = sess.run(tf.nn.softmax(x))
    np.testing.assert_allclose(got, _softmax(x.astype(np.float64)), rtol=1e-6, atol=1e-30)
    assert np.isfinite(sess.run(tf.nn.log_softmax(x))).all()


@pytest.mark.parametrize("data_format,shape", [("NHWC", (2, 3, 4, 5)), ("NCHW", (2, 5, 3, 4)), ("NHWC", (6, 5)),
                                               ("NCHW", (6, 5)), ("NCHW", (2, 5, 7))])
def test_bias_add_adds_along_the_channel_axis(data_format, shape):
    axis = 1 if data_format == "NCHW" and len(shape) >= 3 else len(shape) - 1
    bias_shape = [1] * len(shape)
    bias_shape[axis] = 5
    bias = RNG.standard_normal(5)
    check_op(lambda x, b: tf.nn.bias_add(x, b, data_format=data_format),
             lambda x, b: x + b.reshape(bias_shape), None, inputs=[RNG.standard_normal(shape), bias],
             dtypes=["float64"])


def test_bias_add_rejects_a_bias_of_the_wrong_size():
    with pytest.raises(ValueError, match="bias has 3 elements but value has 5 channels"):
        tf.nn.bias_add(tf.zeros([2, 5]), tf.zeros([3]))
    x = tf.placeholder(tf.float32, [None, None])
    y = tf.nn.bias_add(x, np.zeros(3, np.float32), name="late_bias")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="(?s)as many elements.*'late_bias'"):
            sess.run(y, {x: np.zeros((2, 5), np.float32)})


def test_l2_loss_l2_normalize(sess):
    check_op(tf.nn.l2_loss, lambda x: (np.sum(x.astype(np.float64) ** 2) / 2).astype(x.dtype), [[(3, 4)], [(7,)]])
    x = RNG.standard_normal((3, 4))
    got0, got1, got_all = sess.run([tf.nn.l2_normalize(x, 0), tf.nn.l2_normalize(x, axis=1), tf.nn.l2_normalize(x)])
    np.testing.assert_allclose(got0, x / np.linalg.norm(x, axis=0, keepdims=True))
    np.testing.assert_allclose(got1, x / np.linalg.norm(x, axis=1, keepdims=True))
    np.testing.assert_allclose(got_all, x / np.linalg.norm(x))
    np.testing.assert_array_equal(sess.run(tf.nn.l2_normalize(np.zeros(3))), np.zeros(3))  # epsilon guards 0/0


def test_moments_and_batch_normalization(sess):
    x = RNG.standard_normal((4, 3, 5)) * 3 + 1
    mean, var = sess.run(tf.nn.moments(x, [0, 1]))
    np.testing.assert_allclose(mean, x.mean((0, 1)))
    np.testing.assert_allclose(var, x.var((0, 1)))
    kept = tf.nn.moments(tf.constant(x), [0, 2], keep_dims=True)
    assert kept[0].shape.as_list() == [1, 3, 1] and kept[1].shape.as_list() == [1, 3, 1]
    np.testing.assert_allclose(sess.run(kept[1]), x.var((0, 2), keepdims=True))
    half_mean, half_var = sess.run(tf.nn.moments(x.astype(np.float16), [0]))
    assert half_mean.dtype == np.float16
    np.testing.assert_allclose(half_var, x.var(0), rtol=1e-2)
    offset, scale = RNG.standard_normal(5), RNG.standard_normal(5)
    bn = tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
    np.testing.assert_allclose(sess.run(bn), (x - mean) / np.sqrt(var + 1e-3) * scale + offset)
    bare = tf.nn.batch_normalization(x, mean, var, None, None, 1e-3)
    np.testing.assert_allclose(sess.run(bare), (x - mean) / np.sqrt(var + 1e-3))


def test_xw_plus_b_relu_layer_zero_fraction(sess):
    x, w, b = RNG.standard_normal((4, 3)), RNG.standard_normal((3, 5)), RNG.standard_normal(5)
    np.testing.assert_allclose(sess.run(tf.nn.xw_plus_b(x, w, b)), x @ w + b)
    np.testing.assert_allclose(sess.run(tf.nn.relu_layer(x, w, b)), np.maximum(x @ w + b, 0))
    fraction = tf.nn.zero_fraction(np.array([[0.0, 1.0], [0.0, 0.0]]))
    assert fraction.dtype == tf.float32 and sess.run(fraction) == 0.75


# ---- dropout ------------------------------------------------------------------------------------------------
def test_dropout_scales_kept_values_and_keeps_the_expected_fraction(sess):
    x = np.ones((200, 100), np.float32)
    y = sess.run(tf.nn.dropout(x, keep_prob=0.8, seed=1))
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.8)} and y.dtype == np.float32
    assert abs((y != 0).mean() - 0.8) < 0.01


def test_dropout_keep_prob_placeholder_rate_and_noise_shape(sess):
    x = np.arange(1, 61, dtype=np.float64).reshape(3, 4, 5)
    keep = tf.placeholder(tf.float64, [])
    y = tf.nn.dropout(x, keep)
    np.testing.assert_array_equal(sess.run(y, {keep: 1.0}), x)  # evaluation: feed 1.0
    dropped = sess.run(y, {keep: 0.5})
    np.testing.assert_allclose(dropped[dropped != 0], 2 * x[dropped != 0])
    unchanged = tf.nn.dropout(x, keep_prob=1.0)
    assert unchanged.op.type == "Const"  # keep_prob 1 known when building: no random op at all
    np.testing.assert_array_equal(sess.run(unchanged), x)
    shared = sess.run(tf.nn.dropout(x, rate=0.5, noise_shape=[3, 1, 5], seed=3))
    mask = shared != 0
    assert (mask == mask[:, :1, :]).all()  # one decision per noise_shape cell, broadcast over axis 1
    rate_half = sess.run(tf.nn.dropout(np.ones(10000), rate=0.25, seed=5))
    assert abs((rate_half != 0).mean() - 0.75) < 0.02


def test_dropout_bad_arguments():
    with pytest.raises(ValueError, match=r"keep_prob must be in \(0, 1\], got 0"):
        tf.nn.dropout(tf.zeros([2]), 0.0)
    with pytest.raises(ValueError, match="exactly one of keep_prob and rate"):
        tf.nn.dropout(tf.zeros([2]), 0.5, rate=0.5)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.zeros([2], tf.int32), 0.5)


# ---- cross-entropies ----------------------------------------------------------------------------------------
def _xent(labels, logits, axis=-1):
    return -(labels * np.log(_softmax(logits, axis))).sum(axis)


def test_softmax_cross_entropy_keyword_positional_and_v2_forms(sess):
    logits = RNG.standard_normal((4, 6)) * 3
    labels = _softmax(RNG.standard_normal((4, 6)))
    want = _xent(labels, logits)
    for loss in [tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                 tf.nn.softmax_cross_entropy_with_logits(logits, labels),  # the pre-1.0 positional order
                 tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)]:
        assert loss.shape.as_list() == [4]
        np.testing.assert_allclose(sess.run(loss), want)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_cross_entropy_rank3_and_dim(sess, dim):
    logits = RNG.standard_normal((3, 4, 5))
    labels = _softmax(RNG.standard_normal((3, 4, 5)), dim)
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, dim=dim)
    want = _xent(labels, logits, dim)
    assert loss.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(sess.run(loss), want)


def test_softmax_cross_entropy_unknown_batch_and_float32(sess):
    logits = tf.placeholder(tf.float32, [None, None, 3])
    labels = tf.placeholder(tf.float32, [None, None, 3])
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    a = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    b = _softmax(RNG.standard_normal((2, 5, 3))).astype(np.float32)
    got = sess.run(loss, {logits: a, labels: b})
    assert got.dtype == np.float32 and got.shape == (2, 5)
    np.testing.assert_allclose(got, _xent(b, a), rtol=1e-5)


def test_sparse_softmax_cross_entropy(sess):
    logits = RNG.standard_normal((5, 7)) * 4
    for dtype in (np.int32, np.int64):
        labels = RNG.integers(0, 7, 5).astype(dtype)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        np.testing.assert_allclose(sess.run(loss), -np.log(_softmax(logits))[np.arange(5), labels])
    logits3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    labels3 = RNG.integers(0, 4, (2, 3))
    got = sess.run(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels3, logits=logits3))
    want = -np.log(_softmax(logits3.astype(np.float64)))[np.arange(2)[:, None], np.arange(3), labels3]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_sparse_softmax_cross_entropy_out_of_range_label_names_label_and_classes():
    labels = tf.placeholder(tf.int32, [None])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=np.zeros((3, 10), np.float32))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"label value of 10 which is outside the valid range of \[0, 10\)"):
            sess.run(loss, {labels: [1, 10, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="label value of -1"):
            sess.run(loss, {labels: [-1, 0, 2]})
    with pytest.raises(ValueError, match="Rank mismatch"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=np.zeros((3, 1), np.int32), logits=np.zeros((3, 10)))


def test_sigmoid_and_weighted_cross_entropy_are_stable(sess):
    x = np.array([-1000.0, -5.0, 0.0, 2.5, 1000.0])
    z = np.array([0.0, 1.0, 0.5, 0.0, 1.0])

    def reference(x, z, q=1.0):  # the textbook form in extended precision, away from overflow
        x, z = x.astype(np.longdouble), z.astype(np.longdouble)
        sig = 1 / (1 + np.exp(-x))
        return (-(q * z * np.log(sig) + (1 - z) * np.log1p(-sig))).astype(np.float64)

    got = sess.run(tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x))
    np.testing.assert_allclose(got, [0.0, 5.006715348489118, np.log(2), 2.578889734292549, 0.0], atol=1e-12)
    np.testing.assert_allclose(got[1:4], reference(x[1:4], z[1:4]))
    weighted = sess.run(tf.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=3.0))
    np.testing.assert_allclose(weighted[1:4], reference(x[1:4], z[1:4], 3.0))
    assert np.isfinite(weighted).all() and weighted[0] == 0 and weighted[-1] == 0
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=np.zeros(3), logits=np.zeros(4))


# ---- embedding_lookup ---------------------------------------------------------------------------------------
def _shards_mod(table, n):
    return [table[i::n] for i in range(n)]


def _shards_div(table, n):
    per, extra = divmod(len(table), n)
    bounds = np.cumsum([0] + [per + (1 if i < extra else 0) for i in range(n)])
    return [table[bounds[i]:bounds[i + 1]] for i in range(n)]


@pytest.mark.parametrize("strategy,split", [("mod", _shards_mod), ("div", _shards_div)])
@pytest.mark.parametrize("n_shards", [1, 2, 3])
def test_embedding_lookup_over_shards(sess, strategy, split, n_shards):
    table = RNG.standard_normal((11, 4))
    ids = np.array([[0, 10, 3], [3, 7, 1]])
    out = tf.nn.embedding_lookup(split(table, n_shards), ids, partition_strategy=strategy)
    assert out.shape.as_list() == [2, 3, 4]
    np.testing.assert_array_equal(sess.run(out), table[ids])


def test_embedding_lookup_ids_placeholder_and_max_norm(sess):
    table = RNG.standard_normal((6, 3)) * 5
    ids = tf.placeholder(tf.int64, [None])
    out = tf.nn.embedding_lookup(_shards_mod(table, 2), ids)
    np.testing.assert_array_equal(sess.run(out, {ids: [5, 0, 5]}), table[[5, 0, 5]])
    clipped = sess.run(tf.nn.embedding_lookup(table, [1, 2], max_norm=1.0))
    norms = np.linalg.norm(table[[1, 2]], axis=1, keepdims=True)
    np.testing.assert_allclose(clipped, table[[1, 2]] / np.maximum(norms, 1.0))


def test_embedding_lookup_of_a_variable_has_a_sparse_gradient():
    table = tf.Variable(RNG.standard_normal((50, 4)))
    out = tf.nn.embedding_lookup(table, [3, 7, 3])
    (grad,) = tf.gradients(tf.reduce_sum(out * 2.0), [table])
    assert isinstance(grad, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(grad)
    assert sorted(np.asarray(value.indices).tolist()) == [3, 3, 7]
    np.testing.assert_array_equal(value.values, np.full((3, 4), 2.0))


def test_embedding_lookup_bad_strategy():
    with pytest.raises(ValueError, match="partition_strategy must be 'mod' or 'div'"):
        tf.nn.embedding_lookup([tf.zeros([2, 2]), tf.zeros([2, 2])], [0], partition_strategy="range")


# ---- top_k / in_top_k ---------------------------------------------------------------------------------------
def test_top_k_values_indices_and_ties(sess):
    x = np.array([[1, 3, 3, 2, 3], [5, -1, 5, 0, 4]], np.int32)
    values, indices = sess.run(tf.nn.top_k(x, k=3))
    np.testing.assert_array_equal(values, [[3, 3, 3], [5, 5, 4]])
    np.testing.assert_array_equal(indices, [[1, 2, 4], [0, 2, 4]])  # ties: lower index first
    y = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    v, i = tf.nn.top_k(y, 4)
    assert v.shape.as_list() == [2, 3, 4] and i.dtype == tf.int32
    got_v, got_i = sess.run([v, i])
    np.testing.assert_array_equal(got_v, -np.sort(-y, axis=-1)[..., :4])
    np.testing.assert_array_equal(np.take_along_axis(y, got_i, -1), got_v)
    with pytest.raises(ValueError, match="at least k=10 columns"):
        tf.nn.top_k(y, 10)


def test_in_top_k(sess):
    predictions = np.array([[0.1, 0.3, 0.2, 0.4], [0.1, 0.2, 0.2, 0.5], [0.3, 0.3, 0.3, 0.1],
                            [np.nan, 0.1, 0.2, 0.3]], np.float32)
    targets = np.array([3, 1, 0, 0])
    np.testing.assert_array_equal(sess.run(tf.nn.in_top_k(predictions, targets, 1)), [True, False, True, False])
    np.testing.assert_array_equal(sess.run(tf.nn.in_top_k(predictions, targets, 2)), [True, True, True, False])
    np.testing.assert_array_equal(sess.run(tf.nn.in_top_k(predictions, np.array([4, -1, 2, 3]), 3)),
                                  [False, False, True, True])


# ---- dynamic_partition / dynamic_stitch ---------------------------------------------------------------------
def test_dynamic_partition_and_stitch_round_trip(sess):
    data = np.arange(12.0).reshape(6, 2)
    partitions = np.array([2, 0, 2, 1, 0, 2], np.int32)
    parts = tf.dynamic_partition(data, partitions, 3)
    assert [p.shape.as_list() for p in parts] == [[None, 2]] * 3
    got = sess.run(parts)
    for p in range(3):
        np.testing.assert_array_equal(got[p], data[partitions == p])
    positions = tf.dynamic_partition(np.arange(6, dtype=np.int32), partitions, 3)
    np.testing.assert_array_equal(sess.run(tf.dynamic_stitch(positions, parts)), data)
    merged = sess.run(tf.dynamic_stitch([[0, 2], [2, 3]], [[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(merged, [1.0, 0.0, 3.0, 4.0])  # index 2 repeats: the later value wins
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[1\] = 5 is not in \[0, 3\)"):
        sess.run(tf.dynamic_partition(data, np.array([0, 5, 0, 0, 0, 0], np.int32), 3))


def lrn_ref(x, radius, bias, alpha, beta):
    sq = np.zeros_like(x)
    for c in range(x.shape[-1]):
        sq[..., c] = (x[..., max(c - radius, 0):c + radius + 1] ** 2).sum(-1)
    return x / (bias + alpha * sq) ** beta


@pytest.mark.parametrize("radius,bias,alpha,beta", [(5, 1.0, 1.0, 0.5), (2, 2.0, 1e-4, 0.75), (0, 1.0, 0.5, 1.0),
                                                    (9, 1.0, 0.1, 0.5)])
def test_local_response_normalization(radius, bias, alpha, beta):
    check_op(lambda x: tf.nn.lrn(x, radius, bias, alpha, beta), lambda x: lrn_ref(x.astype(np.float64), radius, bias,
                                                                               alpha, beta).astype(x.dtype),
             [[(2, 3, 3, 7)]])


# ---- candidate sampling and sampled losses ------------------------------------------------------------------
def test_log_uniform_sampler_follows_zipf_and_reports_expected_counts(sess):
    true_classes = np.array([[0], [3]], np.int64)
    sampled, true_count, sampled_count = tf.nn.log_uniform_candidate_sampler(true_classes, 1, 20000, False, 10,
                                                                            seed=7)
    got, got_true, got_sampled = sess.run([sampled, true_count, sampled_count])
    p = np.log((np.arange(10) + 2) / (np.arange(10) + 1)) / np.log(11)
    np.testing.assert_allclose(np.bincount(got, minlength=10) / 20000, p, atol=0.01)
    np.testing.assert_allclose(got_true[:, 0], p[[0, 3]] * 20000, rtol=1e-5)
    np.testing.assert_allclose(got_sampled, p[got] * 20000, rtol=1e-5)


def test_unique_samplers_draw_distinct_classes(sess):
    true_classes = np.array([[1, 2]], np.int64)
    for sampler in (tf.nn.uniform_candidate_sampler, tf.nn.log_uniform_candidate_sampler):
        sampled, true_count, sampled_count = sess.run(sampler(true_classes, 2, 8, True, 12, seed=1))
        assert len(set(sampled.tolist())) == 8 and sampled.min() >= 0 and sampled.max() < 12
        assert sampled.dtype == np.int64 and true_count.dtype == np.float32 and true_count.shape == (1, 2)
        assert ((sampled_count > 0) & (sampled_count <= 8)).all()
    with pytest.raises(ValueError, match="range_max >= num_sampled"):
        tf.nn.uniform_candidate_sampler(true_classes, 2, 20, True, 12)


def test_seeded_samplers_repeat_across_sessions():
    sampled = tf.nn.uniform_candidate_sampler(np.array([[1]], np.int64), 1, 5, True, 100, seed=11)[0]
    with tf.Session() as a, tf.Session() as b:
        first = [a.run(sampled) for _ in range(2)]
        np.testing.assert_array_equal([b.run(sampled) for _ in range(2)], first)
    assert not np.array_equal(first[0], first[1])


def test_compute_accidental_hits(sess):
    rows, ids, weights = sess.run(tf.nn.compute_accidental_hits(np.array([[1, 2], [3, 4]], np.int64),
                                                                np.array([4, 1, 9, 2], np.int64), 2))
    assert sorted(zip(rows.tolist(), ids.tolist())) == [(0, 1), (0, 3), (1, 0)]
    assert (weights == -np.finfo(np.float32).max).all()


def _sampled_logits_ref(w, b, labels, x, sampled, true_count, sampled_count, remove_hits):
    true_logits = np.einsum("bd,btd->bt", x, w[labels]) + b[labels] - np.log(true_count)
    sampled_logits = x @ w[sampled].T + b[sampled] - np.log(sampled_count)
    if remove_hits:
        sampled_logits[(labels[:, :, None] == sampled[None, None, :]).any(1)] += -np.finfo(np.float32).max
    return true_logits, sampled_logits


@pytest.mark.parametrize("num_true", [1, 2])
def test_nce_and_sampled_softmax_losses_match_numpy(sess, num_true):
    w, b, x = RNG.standard_normal((10, 4)), RNG.standard_normal(10), RNG.standard_normal((3, 4))
    labels = RNG.integers(0, 10, (3, num_true))
    sampled = np.array([7, labels[0, 0], 2, 9])
    true_count, sampled_count = RNG.uniform(0.1, 1, (3, num_true)), RNG.uniform(0.1, 1, 4)
    values = (sampled, true_count.astype(np.float32), sampled_count.astype(np.float32))
    t, s = _sampled_logits_ref(w, b, labels, x, sampled, values[1], values[2], False)
    logits = np.concatenate([t, s], 1)
    targets = np.concatenate([np.full(t.shape, 1 / num_true), np.zeros(s.shape)], 1)
    nce_want = (np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits)))).sum(1)
    nce = tf.nn.nce_loss(w, b, labels, x, 4, 10, num_true=num_true, sampled_values=values)
    np.testing.assert_allclose(sess.run(nce), nce_want, rtol=1e-6)
    t, s = _sampled_logits_ref(w, b, labels, x, sampled, values[1], values[2], True)
    logits = np.concatenate([t, s], 1)
    log_probs = logits - logits.max(1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(1, keepdims=True))
    softmax_want = -(targets * log_probs).sum(1)
    loss = tf.nn.sampled_softmax_loss([w[:5], w[5:]], b, labels, x, 4, 10, num_true=num_true, sampled_values=values,
                                      partition_strategy="div")
    np.testing.assert_allclose(sess.run(loss), softmax_want, rtol=1e-6)


def test_nce_loss_with_its_own_sampler_trains_only_sampled_rows(sess):
    weights = tf.Variable(RNG.standard_normal((1000, 8)).astype(np.float32))
    loss = tf.reduce_mean(tf.nn.nce_loss(weights, tf.zeros([1000]), np.array([[3], [17]]),
                                         RNG.standard_normal((2, 8)).astype(np.float32), 16, 1000))
    (grad,) = tf.gradients(loss, [weights])
    assert isinstance(grad, tf.IndexedSlices)
    sess.run(tf.global_variables_initializer())
    value, g = sess.run([loss, grad])
    assert np.isfinite(value) and len(g.indices) == 2 + 16 and {3, 17} <= set(np.asarray(g.indices).tolist())
