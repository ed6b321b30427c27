"""Random op kernels: distributions (moments, bounds, frequencies), seeding rules across sessions and graphs,
dtypes, shapes known only at run time, gradients through the affine math, concurrency and run-time errors.

Moment checks allow 6 standard errors, so a correct kernel fails about once in 10**8 runs while a wrong
mean, scale, bound or truncation fails every time; the draws are seeded, so each run is the same anyway.
"""

import numpy as np
import pytest

import tensorweave as tf
from thread_helpers import start

N = 100_000
FLOATS = [tf.float16, tf.float32, tf.float64]
TRUNCATED_STD = 0.8796256610342398  # stddev of N(0, 1) conditioned on |x| <= 2


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def assert_moments(values, mean, std):
    values = np.asarray(values, np.float64).reshape(-1)
    n = values.size
    assert abs(values.mean() - mean) < 6 * std / np.sqrt(n), (values.mean(), mean)
    assert abs(values.std() - std) < 6 * std / np.sqrt(2 * n) + 1e-3 * std, (values.std(), std)


def assert_frequencies(samples, probabilities):
    samples = np.asarray(samples).reshape(-1)
    p = np.asarray(probabilities, np.float64)
    counts = np.bincount(samples, minlength=p.size)
    assert counts.size == p.size, f"drew classes outside [0, {p.size})"
    error = 6 * np.sqrt(samples.size * p * (1 - p)) + 1
    assert (np.abs(counts - samples.size * p) <= error).all(), (counts / samples.size, p)


# ---- distributions --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_floats_fill_zero_to_one(dtype):
    values = run(tf.random_uniform([N], dtype=dtype, seed=1))
    assert values.dtype == dtype.as_numpy_dtype and values.shape == (N,)
    assert values.min() >= 0 and values.max() < 1
    assert_moments(values, 0.5, np.sqrt(1 / 12))


def test_uniform_float16_never_rounds_up_to_one():
    values = run(tf.random_uniform([1_000_000], dtype=tf.float16, seed=2))
    assert values.max() < 1 and values.min() >= 0 and np.unique(values).size > 1000


@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_floats_scale_to_their_bounds(dtype):
    values = run(tf.random_uniform([N], minval=-2.0, maxval=3.0, dtype=dtype, seed=3))
    assert values.dtype == dtype.as_numpy_dtype
    assert values.min() >= -2 and values.max() <= 3 and values.max() > 2.9 and values.min() < -1.9
    assert_moments(values, 0.5, 5 * np.sqrt(1 / 12))


def test_uniform_bounds_may_be_broadcasting_tensors():
    low = tf.constant([[0.0], [10.0]])
    values = run(tf.random_uniform([2, N // 2], minval=low, maxval=low + 2.0, seed=4))
    assert_moments(values[0], 1.0, 2 * np.sqrt(1 / 12))
    assert_moments(values[1], 11.0, 2 * np.sqrt(1 / 12))
    assert values[1].min() >= 10 and values[1].max() < 12


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_uniform_integers_cover_their_range_evenly(dtype):
    values = run(tf.random_uniform([N], minval=-3, maxval=7, dtype=dtype, seed=5))
    assert values.dtype == dtype.as_numpy_dtype
    assert values.min() == -3 and values.max() == 6
    assert_frequencies(values + 3, np.full(10, 0.1))


def test_uniform_int64_reaches_past_int32():
    values = run(tf.random_uniform([1000], minval=2 ** 40, maxval=2 ** 40 + 5, dtype=tf.int64, seed=6))
    assert values.min() >= 2 ** 40 and values.max() < 2 ** 40 + 5


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_has_its_mean_and_stddev(dtype):
    values = run(tf.random_normal([N], mean=2.0, stddev=3.0, dtype=dtype, seed=7))
    assert values.dtype == dtype.as_numpy_dtype
    assert_moments(values, 2.0, 3.0)
    assert_moments(run(tf.random_normal([N], dtype=dtype, seed=8)), 0.0, 1.0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_truncated_normal_stays_within_two_stddevs(dtype):
    values = run(tf.truncated_normal([N], mean=-1.0, stddev=0.5, dtype=dtype, seed=9))
    assert values.dtype == dtype.as_numpy_dtype
    assert values.min() >= -2.0 and values.max() <= 0.0
    assert values.min() < -1.95 and values.max() > -0.05
    assert_moments(values, -1.0, 0.5 * TRUNCATED_STD)


def test_truncated_normal_is_not_just_clipped():
    values = run(tf.truncated_normal([N], seed=10))
    assert np.mean(np.abs(values) > 1.99) < 0.002  # clipping would pile 4.6% of the draws on +-2


def test_shuffle_permutes_the_first_dimension():
    value = np.arange(1000)
    got = run(tf.random_shuffle(value, seed=11))
    assert sorted(got.tolist()) == value.tolist() and (got != value).mean() > 0.9
    rows = np.arange(12).reshape(6, 2).astype(np.float64)
    shuffled = run(tf.random_shuffle(rows, seed=12))
    assert sorted(map(tuple, shuffled.tolist())) == sorted(map(tuple, rows.tolist()))
    assert (shuffled[:, 1] - shuffled[:, 0] == 1).all()


def test_shuffle_puts_each_element_anywhere_equally_often():
    shuffled = tf.random_shuffle(tf.range(4), seed=13)
    with tf.Session() as sess:
        firsts = [sess.run(shuffled)[0] for _ in range(2000)]
    assert_frequencies(firsts, np.full(4, 0.25))


def test_shuffle_of_strings_scalars_and_empty_values():
    strings = np.array([b"a", b"b", b"c"], object)
    got, scalar, empty = run([tf.random_shuffle(strings), tf.random_shuffle(5.0),
                              tf.random_shuffle(np.zeros((0, 3), np.float32))])
    assert sorted(got.tolist()) == [b"a", b"b", b"c"] and scalar == 5.0 and empty.shape == (0, 3)


def test_multinomial_draws_classes_with_softmax_frequencies():
    logits = np.log([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    samples = run(tf.multinomial(logits, 20_000, seed=14))
    assert samples.shape == (2, 20_000) and samples.dtype == np.int64
    assert_frequencies(samples[0], [0.1, 0.2, 0.7])
    assert_frequencies(samples[1], [0.5, 0.25, 0.25])


def test_multinomial_never_draws_impossible_classes():
    logits = np.array([[-np.inf, 0.0, -np.inf, 0.0], [3.0, -np.inf, -np.inf, -np.inf]], np.float32)
    samples = run(tf.random.categorical(logits, 5000, dtype=tf.int32, seed=15))
    assert samples.dtype == np.int32
    assert set(samples[0].tolist()) == {1, 3} and set(samples[1].tolist()) == {0}


def test_multinomial_logits_are_shift_invariant_and_any_float_type():
    for dtype, shift in ((np.float16, 10.0), (np.float32, 100.0), (np.float64, 1000.0)):
        logits = np.array([[shift, shift + np.log(3.0)]], dtype)
        weights = np.exp(logits[0].astype(np.float64) - shift)
        samples = run(tf.multinomial(logits, 20_000, seed=16))
        assert_frequencies(samples, weights / weights.sum())


@pytest.mark.parametrize("dtype", FLOATS)
def test_gamma_has_its_mean_and_variance(dtype):
    alpha, beta = np.array([0.5, 2.0, 9.0]), 2.0
    values = run(tf.random_gamma([N // 3], alpha, beta=beta, dtype=dtype, seed=17))
    assert values.shape == (N // 3, 3) and values.dtype == dtype.as_numpy_dtype and (values > 0).all()
    for j, a in enumerate(alpha):
        assert_moments(values[:, j], a / beta, np.sqrt(a) / beta)


def test_gamma_without_beta_is_the_unit_rate():
    assert_moments(run(tf.random_gamma([N], 4.0, seed=18)), 4.0, 2.0)


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64, tf.int32, tf.int64])
def test_poisson_has_mean_and_variance_lam(dtype):
    values = run(tf.random_poisson([0.5, 30.0], [N // 2], dtype=dtype, seed=19))
    assert values.shape == (N // 2, 2) and values.dtype == dtype.as_numpy_dtype
    assert (values >= 0).all() and (values == np.round(values)).all()
    assert_moments(values[:, 0], 0.5, np.sqrt(0.5))
    assert_moments(values[:, 1], 30.0, np.sqrt(30.0))


def test_random_crop_takes_a_contiguous_block_at_every_offset():
    value = np.arange(5 * 6 * 2).reshape(5, 6, 2)
    crop = tf.random_crop(value, [3, 4, 2], seed=20)
    offsets = set()
    with tf.Session() as sess:
        for _ in range(300):
            got = sess.run(crop)
            i, j = np.argwhere(value[..., 0] == got[0, 0, 0])[0]
            np.testing.assert_array_equal(got, value[i:i + 3, j:j + 4])
            offsets.add((i, j))
    assert offsets == {(i, j) for i in range(3) for j in range(3)}


def test_random_crop_checks_sizes_at_run_time():
    image = tf.placeholder(tf.float32, [None, None])
    crop = tf.random_crop(image, [2, 3])
    with tf.Session() as sess:
        assert sess.run(crop, {image: np.ones((2, 5))}).shape == (2, 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match="random_crop"):
            sess.run(crop, {image: np.ones((4, 2))})


# ---- seeding --------------------------------------------------------------------------------------------------------
def test_an_op_seed_repeats_in_every_session_and_graph():
    def draw():
        with tf.Graph().as_default():
            t = tf.random_normal([5], seed=21)
            with tf.Session() as sess:
                return sess.run(t), sess.run(t)
    first, second = draw(), draw()
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])


def test_a_graph_seed_makes_each_op_repeatable_and_different_ops_different():
    def program():
        with tf.Graph().as_default():
            tf.set_random_seed(1234)
            a, b = tf.random_uniform([4]), tf.random_uniform([4])
            with tf.Session() as sess:
                return sess.run([a, b])
    first, second = program(), program()
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])


def test_unseeded_ops_differ_between_sessions():
    t = tf.random_uniform([8])
    assert not np.array_equal(run(t), run(t))


def test_one_session_continues_a_stream_across_run_signatures():
    x = tf.random_uniform([3], seed=22)
    y = x * 2.0
    with tf.Session() as sess:
        first, (second, doubled) = sess.run(x), sess.run([x, y])
    np.testing.assert_array_equal(doubled, 2 * second)
    assert not np.array_equal(first, second)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(x), first)
        np.testing.assert_array_equal(sess.run(x), second)


def test_set_random_seed_makes_a_training_program_repeatable():
    def train():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            x = tf.random_normal([16, 4])
            w = tf.Variable(tf.truncated_normal([4, 1], stddev=0.5))
            h = tf.nn.dropout(tf.matmul(x, w), keep_prob=0.5)
            step = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_mean(tf.square(h - 1.0)))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(step)
                return sess.run(w)
    np.testing.assert_array_equal(train(), train())


# ---- shapes known at run time, gradients --------------------------------------------------------------------------
def test_shapes_known_only_at_run_time():
    dims = tf.placeholder(tf.int32, [None])
    x = tf.placeholder(tf.float32, [None, None])
    n = tf.placeholder(tf.int64, [])
    fetches = [tf.random_uniform(dims), tf.truncated_normal(tf.shape(x), dtype=tf.float64), tf.random_normal([n, 2]),
               tf.multinomial([[0.0, 0.0]], tf.placeholder_with_default(4, []))]
    got = run(fetches, {dims: [2, 0, 3], x: np.zeros((3, 5)), n: 4})
    assert [g.shape for g in got] == [(2, 0, 3), (3, 5), (4, 2), (1, 4)]
    assert got[1].dtype == np.float64


def test_gradients_flow_through_the_affine_math():
    low, high = tf.constant(-1.0), tf.constant(3.0)
    mean, stddev = tf.constant([1.0, 2.0]), tf.constant(0.5)
    uniform = tf.random_uniform([1000], low, high, seed=23)
    normal = tf.random_normal([500, 2], mean, stddev, seed=24)
    grads = tf.gradients(tf.reduce_sum(uniform), [low, high]) + tf.gradients(tf.reduce_sum(normal), [mean, stddev])
    u, z, d_low, d_high, d_mean, d_stddev = run([uniform, normal] + grads)
    fraction = (u.astype(np.float64) + 1) / 4
    np.testing.assert_allclose([d_low, d_high], [np.sum(1 - fraction), np.sum(fraction)], rtol=1e-4)
    np.testing.assert_allclose(d_mean, [500, 500])
    np.testing.assert_allclose(d_stddev, np.sum((z - [1.0, 2.0]) / 0.5), rtol=1e-3, atol=1e-2)


# ---- concurrency ----------------------------------------------------------------------------------------------------
def test_concurrent_steps_split_one_stream_without_repeats():
    t = tf.truncated_normal([2000], dtype=tf.float64, seed=25)
    with tf.Session() as sess:
        sequential = np.concatenate([sess.run(t) for _ in range(16)])
    with tf.Session() as sess:
        workers = [start(lambda: [sess.run(t) for _ in range(4)]) for _ in range(4)]
        concurrent = np.concatenate([a for w in workers for a in w.finish()])
    np.testing.assert_array_equal(np.sort(concurrent), np.sort(sequential))
    assert np.unique(concurrent).size == concurrent.size


# ---- run-time errors ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("build, feed, match", [
    (lambda p: tf.random_uniform(p), [2, -3], "non-negative"),
    (lambda p: tf.random_uniform([2], minval=p, maxval=3, dtype=tf.int32), 3, "minval < maxval"),
    (lambda p: tf.random_gamma([2], p), [1.0, 0.0], "alpha.*positive"),
    (lambda p: tf.random_poisson(p, [2]), [-1.0], "rate.*non-negative"),
    (lambda p: tf.multinomial(p, 3), [[-np.inf, -np.inf]], "at least one finite"),
], ids=["negative-shape", "empty-range", "gamma-alpha", "poisson-rate", "all-impossible"])
def test_bad_run_time_values_are_invalid_arguments_naming_the_op(build, feed, match):
    value = np.asarray(feed)
    dtype = tf.int32 if value.dtype.kind == "i" else tf.float32
    p = tf.placeholder(dtype, value.shape)
    t = build(p)
    with pytest.raises(tf.errors.InvalidArgumentError, match=match) as info:
        run(t, {p: value})
    assert "test_random_ops.py" in str(info.value)
