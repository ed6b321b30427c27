"""Random ops while building graphs (no kernels needed): seeds, static shapes, dtypes, names and errors."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import random_seed


def seeds_of(t):
    op = getattr(t, "op", t)
    return op.get_attr("seed"), op.get_attr("seed2")


def draw_op(t):
    """The stateful random op that produced ``t`` (through the affine math, if any)."""
    stack = [t.op]
    while stack:
        op = stack.pop()
        if op.op_def.is_stateful:
            return op
        stack.extend(i.op for i in op.inputs)
    raise AssertionError(f"no random op under {t.name}")


# ---- get_seed and set_random_seed -----------------------------------------------------------------------------------
def test_no_graph_seed_and_no_op_seed_mean_fresh_entropy():
    assert tf.get_seed(None) == (None, None)
    assert seeds_of(tf.random_uniform([2])) == (0, 0)


def test_an_op_seed_alone_pairs_with_the_default_graph_seed():
    assert tf.get_seed(7) == (random_seed.DEFAULT_GRAPH_SEED, 7) == (87654321, 7)
    assert seeds_of(tf.random_normal([2], seed=7)) == (87654321, 7)


def test_a_graph_seed_alone_takes_the_op_seed_from_the_op_counter():
    tf.set_random_seed(5)
    graph = tf.get_default_graph()
    assert graph.seed == 5
    tf.constant(1.0)
    assert tf.get_seed(None) == (5, graph._id_counter)
    first, second = tf.random_uniform([2]), tf.random_uniform([2])
    assert seeds_of(first)[0] == seeds_of(second)[0] == 5
    assert seeds_of(first)[1] != seeds_of(second)[1]


def test_graph_and_op_seed_both_set_are_used_as_given():
    tf.set_random_seed(3)
    assert tf.get_seed(11) == (3, 11)
    assert seeds_of(tf.truncated_normal([2], seed=11)) == (3, 11)


def test_ops_built_in_the_same_order_get_the_same_seeds_in_another_graph():
    def program():
        tf.set_random_seed(42)
        x = tf.placeholder(tf.float32, [None, 3])
        return [seeds_of(draw_op(t)) for t in (tf.random_uniform([3, 2], -1, 1), tf.nn.dropout(x, 0.5),
                                                tf.random_shuffle([1, 2, 3]))]
    with tf.Graph().as_default():
        first = program()
    with tf.Graph().as_default():
        second = program()
    assert first == second and len(set(first)) == 3


def test_zero_zero_never_reads_as_unset():
    tf.set_random_seed(0)
    assert tf.get_seed(0) == (0, 2 ** 31 - 1)


def test_seeds_wrap_into_31_bits():
    assert tf.get_seed(2 ** 31 - 1 + 5) == (87654321, 5)
    tf.set_random_seed(2 ** 40)
    assert tf.get_seed(1) == (2 ** 40 % (2 ** 31 - 1), 1)


def test_set_random_seed_applies_to_the_default_graph_only():
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(9)
    assert graph.seed == 9 and tf.get_default_graph().seed is None
    tf.set_random_seed(None)
    assert tf.get_default_graph().seed is None


@pytest.mark.parametrize("bad", [1.5, "1", True])
def test_non_integer_seeds_are_a_type_error(bad):
    with pytest.raises(TypeError, match="integer"):
        tf.set_random_seed(bad)
    with pytest.raises(TypeError, match="integer"):
        tf.random_uniform([2], seed=bad)


# ---- namespaces -----------------------------------------------------------------------------------------------------
def test_tf_random_has_the_tf_1_13_names_and_tf_keeps_the_old_ones():
    assert tf.random.uniform is tf.random_uniform and tf.random.normal is tf.random_normal
    assert tf.random.truncated_normal is tf.truncated_normal and tf.random.shuffle is tf.random_shuffle
    assert tf.random.gamma is tf.random_gamma and tf.random.poisson is tf.random_poisson
    assert tf.random.multinomial is tf.multinomial and callable(tf.random.categorical)
    assert tf.random.set_random_seed is tf.set_random_seed and tf.random.get_seed is tf.get_seed
    assert callable(tf.random_crop) and callable(tf.random.uniform_candidate_sampler)
    for v2_only in ("uniform", "normal", "shuffle", "gamma", "poisson", "categorical"):
        assert not hasattr(tf, v2_only), v2_only


# ---- static shapes and dtypes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [tf.random_uniform, tf.random_normal, tf.truncated_normal])
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_float_draws_have_the_given_shape_and_dtype(fn, dtype):
    for shape in ([2, 3], (4,), [], np.array([1, 0, 5]), tf.TensorShape([3, 2])):
        t = fn(shape, dtype=dtype)
        assert t.dtype == dtype and t.shape.as_list() == list(tf.TensorShape(list(np.asarray(shape))).as_list())


def test_integer_uniform_draws_take_int32_or_int64():
    for dtype in (tf.int32, tf.int64):
        t = tf.random_uniform([3, 4], minval=-5, maxval=5, dtype=dtype)
        assert t.dtype == dtype and t.shape.as_list() == [3, 4] and t.op.type == "RandomUniformInt"


def test_shape_tensors_give_what_the_graph_knows():
    assert tf.random_uniform(tf.placeholder(tf.int32, [3])).shape.as_list() == [None, None, None]
    assert tf.random_normal(tf.placeholder(tf.int64, [None])).shape.ndims is None
    assert tf.random_uniform(tf.constant([2, 5], tf.int64)).shape.as_list() == [2, 5]


def test_shape_lists_may_hold_scalar_tensors():
    n = tf.placeholder(tf.int32, [])
    t = tf.random_normal([n, 4])
    assert t.shape.as_list() == [None, 4]
    assert tf.random_uniform([tf.constant(3, tf.int64), 2]).shape.as_list() == [3, 2]


def test_draws_shaped_like_a_tensor_know_its_static_shape():
    x = tf.placeholder(tf.float32, [None, 7])
    assert tf.random_uniform(tf.shape(x)).shape.as_list() == [None, 7]
    assert tf.random_normal([x.shape[1], 2]).shape.as_list() == [7, 2]


def test_plain_draws_are_one_op_named_by_the_caller():
    t = tf.random_uniform([2], name="noise")
    assert t.op.name == "noise" and t.op.type == "RandomUniform"
    assert tf.random_normal([2]).op.type == "RandomStandardNormal"
    scaled = tf.random_normal([2], mean=1.0, stddev=2.0, name="w")
    assert scaled.op.name == "w" and scaled.op.type == "Add"
    assert tf.random_uniform([2], maxval=4.0).op.type == "Mul"


def test_random_ops_are_stateful_and_seeded_by_attrs():
    for t in (tf.random_uniform([2]), tf.random_uniform([2], maxval=3, dtype=tf.int32), tf.random_normal([2]),
              tf.truncated_normal([2]), tf.random_shuffle([1, 2]), tf.multinomial([[0.0, 1.0]], 3),
              tf.random_gamma([2], 1.0), tf.random_poisson(1.0, [2])):
        op = draw_op(t)
        assert op.op_def.is_stateful and {"seed", "seed2"} <= set(op.attrs)


def test_shuffle_keeps_the_shape_and_dtype():
    t = tf.random_shuffle(tf.placeholder(tf.string, [None, 3]))
    assert t.dtype == tf.string and t.shape.as_list() == [None, 3]


def test_multinomial_is_batch_by_samples():
    logits = tf.placeholder(tf.float32, [None, 10])
    t = tf.multinomial(logits, 5)
    assert t.shape.as_list() == [None, 5] and t.dtype == tf.int64
    assert tf.multinomial(logits, tf.placeholder(tf.int32, []), output_dtype=tf.int32).shape.as_list() == [None, None]
    assert tf.random.categorical(logits, 2, dtype=tf.int32).dtype == tf.int32


def test_gamma_and_poisson_append_their_parameter_shape():
    assert tf.random_gamma([5], [1.0, 2.0]).shape.as_list() == [5, 2]
    gamma = tf.random_gamma([4], [1.0, 2.0], beta=[[1.0], [2.0], [3.0]], dtype=tf.float64)
    assert gamma.shape.as_list() == [4, 3, 2] and gamma.dtype == tf.float64
    poisson = tf.random_poisson([2.0, 3.0], [4, 1], dtype=tf.int64)
    assert poisson.shape.as_list() == [4, 1, 2] and poisson.dtype == tf.int64
    assert tf.random_poisson(1.5, [3]).dtype == tf.float32


def test_random_crop_has_the_crop_size_as_its_shape():
    image = tf.placeholder(tf.float32, [32, 32, 3])
    assert tf.random_crop(image, [24, 20, 3]).shape.as_list() == [24, 20, 3]
    assert tf.random_crop(tf.placeholder(tf.float32, [None, 5]), [2, 5]).shape.as_list() == [2, 5]


# ---- gradients ------------------------------------------------------------------------------------------------------
def test_draws_differentiate_through_tensor_bounds_and_moments_only():
    low, high = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
    mean, stddev = tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [])
    shape = tf.placeholder(tf.int32, [1])
    uniform = tf.random_uniform(shape, low, high)
    normal = tf.random_normal([3], mean, stddev)
    assert all(g is not None for g in tf.gradients(uniform, [low, high]))
    assert all(g is not None for g in tf.gradients(normal, [mean, stddev]))
    assert tf.gradients(uniform, shape) == [None]
    alpha = tf.placeholder(tf.float32, [2])
    assert tf.gradients(tf.random_gamma([3], alpha), alpha) == [None]


# ---- errors while building ------------------------------------------------------------------------------------------
def test_integer_draws_need_maxval():
    with pytest.raises(ValueError, match="int32.*maxval"):
        tf.random_uniform([2], dtype=tf.int32)


def test_unsupported_dtypes_are_named():
    with pytest.raises(ValueError, match="bool"):
        tf.random_uniform([2], dtype=tf.bool)
    with pytest.raises(ValueError, match="random_normal.*int32"):
        tf.random_normal([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="truncated_normal.*int64"):
        tf.truncated_normal([2], dtype=tf.int64)
    with pytest.raises(ValueError, match="output_dtype.*float32"):
        tf.multinomial([[1.0]], 1, output_dtype=tf.float32)
    with pytest.raises(ValueError, match="random_poisson.*bool"):
        tf.random_poisson(1.0, [2], dtype=tf.bool)


def test_known_empty_integer_ranges_fail_while_building():
    with pytest.raises(ValueError, match="minval.*less than.*maxval"):
        tf.random_uniform([2], minval=5, maxval=5, dtype=tf.int64)


def test_integer_bounds_must_be_scalars():
    with pytest.raises(ValueError, match="scalars"):
        tf.random_uniform([2], minval=[0, 1], maxval=5, dtype=tf.int32)


@pytest.mark.parametrize("shape, error, match", [
    ([2, -1], ValueError, "non-negative"), (5, ValueError, r"1-D.*\[n\]"), ([2.5], TypeError, "integers"),
    (tf.TensorShape([None, 2]), ValueError, r"unknown dimension.*tf.shape\(x\)"),
    (tf.TensorShape(None), ValueError, "unknown dimension"), ([None, 3], ValueError, "unknown dimension"),
])
def test_bad_python_shapes_say_what_to_pass(shape, error, match):
    with pytest.raises(error, match=match):
        tf.random_uniform(shape)


def test_shape_tensors_must_be_integer_vectors():
    with pytest.raises(TypeError, match="int32 or int64.*float32.*tf.cast"):
        tf.random_normal(tf.placeholder(tf.float32, [2]))
    with pytest.raises(ValueError, match="rank 1.*RandomUniform"):
        tf.random_uniform(tf.placeholder(tf.int32, [2, 2]))
    with pytest.raises(ValueError, match="non-negative"):
        tf.random_uniform(tf.constant([3, -2]))


def test_multinomial_shape_errors_name_the_op():
    with pytest.raises(ValueError, match="rank 2.*Multinomial"):
        tf.multinomial([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="non-negative"):
        tf.multinomial([[1.0, 2.0]], -1)


def test_random_crop_checks_sizes_it_can_see():
    image = tf.placeholder(tf.float32, [8, 8, 3])
    with pytest.raises(ValueError, match=r"size \[9, 4, 3\].*\[8, 8, 3\]"):
        tf.random_crop(image, [9, 4, 3])
    with pytest.raises(ValueError, match="2 entries.*rank 3"):
        tf.random_crop(image, [4, 4])
