"""Math ops against numpy (float64 references) over shapes with broadcasting and over dtypes."""

import warnings

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_op

BROADCAST_SHAPES = [[(3, 4), (3, 4)], [(2, 3, 4), (4,)], [(3, 1), (1, 4)], [(), (5,)], [(2, 1, 3), (4, 1)]]
FLOATS = ["float16", "float32", "float64"]
NUMBERS = FLOATS + ["int32", "int64"]


def in_float64(fn):
    """A numpy reference computed in float64 and rounded to the input's dtype (as a TF kernel's result)."""
    return lambda *arrays: np.asarray(fn(*(a.astype(np.float64) for a in arrays))).astype(arrays[0].dtype)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


@pytest.mark.parametrize("tf_fn, np_fn, dtypes", [
    (tf.add, np.add, NUMBERS), (tf.subtract, np.subtract, NUMBERS), (tf.multiply, np.multiply, NUMBERS),
    (tf.maximum, np.maximum, NUMBERS), (tf.minimum, np.minimum, NUMBERS),
    (tf.squared_difference, lambda x, y: (x - y) ** 2, NUMBERS),
], ids=lambda v: getattr(v, "__name__", ""))
def test_broadcasting_binary_ops(tf_fn, np_fn, dtypes):
    check_op(tf_fn, in_float64(np_fn), BROADCAST_SHAPES, dtypes=dtypes)


def test_add_concatenates_strings(sess):
    got = sess.run(tf.add(np.array([b"ab", b"c"], object), b"!"))
    assert got.tolist() == [b"ab!", b"c!"]


MIXED_SIGNS = [np.array([[-7.5, -7, -1, 0], [1, 6.5, 7, 9]]), np.array([2, -2, 3, -4])]


@pytest.mark.parametrize("tf_fn, np_fn", [
    (tf.realdiv, np.true_divide), (tf.divide, np.true_divide), (tf.floordiv, np.floor_divide),
    (tf.floormod, np.remainder), (tf.truncatediv, lambda x, y: np.trunc(x / y)), (tf.truncatemod, np.fmod),
    (tf.div, np.true_divide),
], ids=lambda v: getattr(v, "__name__", ""))
def test_float_division_flavours(tf_fn, np_fn):
    for dtype in FLOATS:
        check_op(tf_fn, in_float64(np_fn), None, inputs=[a.astype(dtype) for a in MIXED_SIGNS], dtypes=[dtype])


@pytest.mark.parametrize("tf_fn, np_fn", [
    (tf.floordiv, np.floor_divide), (tf.floormod, np.remainder), (tf.div, np.floor_divide),
    (tf.truncatediv, lambda x, y: np.trunc(x / y)), (tf.truncatemod, np.fmod),
], ids=lambda v: getattr(v, "__name__", ""))
def test_integer_division_flavours(tf_fn, np_fn):
    x, y = np.array([[-7, -6, -1, 0], [1, 5, 7, 9]]), np.array([2, -2, 3, -4])
    for dtype in ["int32", "int64"]:
        check_op(tf_fn, lambda a, b: np_fn(a, b).astype(a.dtype), None, inputs=[x.astype(dtype), y.astype(dtype)],
                 dtypes=[dtype])


def test_truediv_makes_integers_floats_like_numpy(sess):
    for dtype, want in [(np.int32, np.float64), (np.int64, np.float64), (np.int16, np.float32), (np.uint8, np.float32)]:
        got = sess.run(tf.truediv(np.array([7, 9], dtype), np.array([2, 4], dtype)))
        assert got.dtype == want
        np.testing.assert_allclose(got, [3.5, 2.25])


def test_integer_division_by_zero_is_an_error_naming_the_op():
    x = tf.placeholder(tf.int32, [3])
    for fn in (tf.floordiv, tf.floormod, tf.truncatediv, tf.truncatemod):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero") as info:
            run(fn(x, x, name=f"my_{fn.__name__}"), {x: np.array([1, 0, 2], np.int32)})
        assert f"'my_{fn.__name__}'" in str(info.value) and "test_math_ops.py" in str(info.value)


def test_float_division_by_zero_gives_ieee_values_without_warnings(sess):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = sess.run([tf.realdiv([1.0, -1.0, 0.0], 0.0), tf.log([0.0, -1.0]), tf.sqrt(-1.0),
                        tf.div_no_nan([1.0, 2.0], [0.0, 4.0]), tf.floordiv(1.0, 0.0), tf.exp(1000.0)])
    np.testing.assert_array_equal(got[0], [np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(got[1], [-np.inf, np.nan])
    assert np.isnan(got[2]) and got[4] == np.inf and got[5] == np.inf
    np.testing.assert_array_equal(got[3], [0.0, 0.5])


def test_pow():
    check_op(tf.pow, in_float64(np.power), [[(3, 4), (4,)], [(2, 3), ()]], dtypes=FLOATS, positive=True)
    base, exponent = np.array([[-3, 0, 2], [5, -1, 4]]), np.array([3, 2, 0])
    for dtype in ["int32", "int64"]:
        check_op(tf.pow, lambda a, b: np.power(a, b), None, inputs=[base.astype(dtype), exponent.astype(dtype)],
                 dtypes=[dtype])


def test_integer_to_negative_power_is_an_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative integer powers"):
        run(tf.pow(np.array([2], np.int32), np.array([-1], np.int32)))


UNARY = {
    "negative": (tf.negative, np.negative, {}), "abs": (tf.abs, np.abs, {}), "sign": (tf.sign, np.sign, {}),
    "square": (tf.square, np.square, {}), "exp": (tf.exp, np.exp, {}), "expm1": (tf.expm1, np.expm1, {}),
    "log": (tf.log, np.log, {"positive": True}), "log1p": (tf.log1p, np.log1p, {"positive": True}),
    "sqrt": (tf.sqrt, np.sqrt, {"positive": True}), "rsqrt": (tf.rsqrt, lambda x: 1 / np.sqrt(x), {"positive": True}),
    "reciprocal": (tf.reciprocal, np.reciprocal, {"positive": True}), "tanh": (tf.tanh, np.tanh, {}),
    "sigmoid": (tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), {}), "sin": (tf.sin, np.sin, {}),
    "cos": (tf.cos, np.cos, {}), "floor": (tf.floor, np.floor, {}), "ceil": (tf.ceil, np.ceil, {}),
    "round": (tf.round, np.round, {}),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions(name):
    tf_fn, np_fn, options = UNARY[name]
    check_op(tf_fn, in_float64(np_fn), [[(3, 4)], [(2, 3, 5)], [()]], dtypes=["float32", "float64"], **options)
    check_op(tf_fn, in_float64(np_fn), [[(17,)]], dtypes=["float16"], rtol=2e-3, atol=2e-3, **options)


@pytest.mark.parametrize("tf_fn, np_fn", [(tf.negative, np.negative), (tf.abs, np.abs), (tf.sign, np.sign),
                                          (tf.square, np.square)], ids=lambda v: getattr(v, "__name__", ""))
def test_unary_functions_on_integers(tf_fn, np_fn):
    check_op(tf_fn, np_fn, [[(3, 4)], [()]], dtypes=["int32", "int64"])


def test_round_is_half_to_even_and_keeps_integers(sess):
    got = sess.run(tf.round([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6]))
    np.testing.assert_array_equal(got, [-2, -2, -0.0, 0, 2, 2, 3])
    integers = tf.constant([1, 2])
    assert tf.round(integers) is integers


def test_sigmoid_is_accurate_in_both_tails(sess):
    x = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    np.testing.assert_allclose(sess.run(tf.sigmoid(x)), [0.0, 9.357622968840175e-14, 0.5, 1.0, 1.0], rtol=1e-12)


def test_complex_unary_functions(sess):
    z = np.array([1 + 2j, -0.5 + 0.25j], np.complex128)
    got = sess.run([tf.exp(z), tf.log(z), tf.sqrt(z), tf.conj(z), tf.sign(z), tf.square(z), tf.sigmoid(z)])
    want = [np.exp(z), np.log(z), np.sqrt(z), np.conj(z), z / np.abs(z), z * z, 1 / (1 + np.exp(-z))]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    real = tf.constant([1.0])
    assert tf.conj(real) is real


def test_is_finite_nan_inf(sess):
    x = np.array([1.0, np.nan, np.inf, -np.inf], np.float32)
    finite, nan, inf = sess.run([tf.is_finite(x), tf.is_nan(x), tf.is_inf(x)])
    assert finite.tolist() == [True, False, False, False] and nan.tolist() == [False, True, False, False]
    assert inf.tolist() == [False, False, True, True]


@pytest.mark.parametrize("tf_fn, np_fn", [
    (tf.less, np.less), (tf.less_equal, np.less_equal), (tf.greater, np.greater),
    (tf.greater_equal, np.greater_equal), (tf.equal, np.equal), (tf.not_equal, np.not_equal),
], ids=lambda v: getattr(v, "__name__", ""))
def test_comparisons(tf_fn, np_fn):
    check_op(tf_fn, np_fn, BROADCAST_SHAPES, dtypes=NUMBERS)


def test_equality_of_bools_and_strings(sess):
    words = np.array([b"a", b"b", b"c"], object)
    assert sess.run(tf.equal(words, b"b")).tolist() == [False, True, False]
    assert sess.run(tf.not_equal([True, False], True)).tolist() == [False, True]


@pytest.mark.parametrize("tf_fn, np_fn", [
    (tf.logical_and, np.logical_and), (tf.logical_or, np.logical_or), (tf.logical_xor, np.logical_xor),
], ids=lambda v: getattr(v, "__name__", ""))
def test_logical_ops(tf_fn, np_fn):
    check_op(tf_fn, np_fn, BROADCAST_SHAPES, dtypes=["bool"])


def test_logical_not(sess):
    check_op(tf.logical_not, np.logical_not, [[(3, 4)], [()]], dtypes=["bool"])


@pytest.mark.parametrize("source, target", [
    ("float32", "int32"), ("float64", "int64"), ("int32", "float32"), ("int64", "float16"), ("bool", "float32"),
    ("float32", "bool"), ("int32", "bool"), ("float16", "float64"), ("float64", "float16"), ("int32", "int64"),
    ("bool", "int32"), ("uint8", "float32"),
])
def test_cast(source, target):
    check_op(lambda x: tf.cast(x, target), lambda x: x.astype(target), [[(3, 4)], [()]], dtypes=[source])


def test_cast_truncates_floats_and_takes_the_real_part(sess):
    got = sess.run([tf.cast([-2.7, -0.5, 0.5, 2.7], tf.int32), tf.cast(np.array([1.5 + 2j]), tf.float32),
                    tf.to_int64([3.9]), tf.to_double([1]), tf.to_int32([True])])
    assert got[0].tolist() == [-2, 0, 0, 2] and got[1].tolist() == [1.5] and got[1].dtype == np.float32
    assert got[2].dtype == np.int64 and got[3].dtype == np.float64 and got[4].tolist() == [1]


def test_where_select_with_a_row_vector_condition(sess):
    condition = np.array([True, False, True])
    x, y = np.arange(6.0).reshape(3, 2), -np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(sess.run(tf.where(condition, x, y)), np.where(condition[:, None], x, y))
    np.testing.assert_array_equal(sess.run(tf.where(True, x, y)), x)
    full = np.array([[True, False], [False, True], [True, True]])
    np.testing.assert_array_equal(sess.run(tf.select(full, x, y)), np.where(full, x, y))


def test_where_v2_broadcasts_all_three():
    check_op(lambda c, x, y: tf.where_v2(c, x, y), np.where, None, dtypes=["float32"],
             inputs=[np.array([[True], [False]]), np.arange(3.0), np.array(-1.0)])
    rng = np.random.default_rng(2)
    condition = rng.random((3, 1)) < 0.5
    for dtype in ["int32", "float16", "bool", "int64"]:
        x, y = rng.integers(0, 2, (4,)).astype(dtype), rng.integers(0, 2, (3, 4)).astype(dtype)
        check_op(tf.where_v2, np.where, None, inputs=[condition, x, y], dtypes=[dtype])


def test_where_of_strings_and_run_time_shape_errors(sess):
    words = np.array([b"yes", b"no"], object)
    assert sess.run(tf.where([True, False], words, np.array([b"-", b"-"], object))).tolist() == [b"yes", b"-"]
    condition, values = tf.placeholder(tf.bool, [None]), tf.placeholder(tf.float32, [None, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="one entry per row"):
        sess.run(tf.where(condition, values, values), {condition: [True], values: np.ones((2, 2))})


def test_clip_by_value():
    check_op(lambda t: tf.clip_by_value(t, -1.0, 1.5), lambda t: np.clip(t, -1.0, 1.5), [[(3, 4)], [()]],
             dtypes=FLOATS)
    check_op(tf.clip_by_value, lambda t, lo, hi: np.maximum(np.minimum(t, hi), lo), [[(3, 4), (4,), ()]],
             dtypes=["float64", "int32", "int64"])


def test_clip_by_value_with_crossed_bounds_and_sparse_values(sess):
    assert sess.run(tf.clip_by_value([0.0, 5.0], 3.0, 1.0)).tolist() == [3.0, 3.0]  # min(max(t, lo), hi) order
    sparse = tf.IndexedSlices(tf.constant([[-5.0, 0.5]]), tf.constant([2]), tf.constant([4, 2]))
    clipped = tf.clip_by_value(sparse, -1.0, 1.0)
    assert isinstance(clipped, tf.IndexedSlices) and sess.run(clipped.values).tolist() == [[-1.0, 0.5]]


def test_add_n():
    for count in (2, 3, 5):
        check_op(lambda *xs: tf.add_n(list(xs)), lambda *xs: sum(xs), [[(3, 4)] * count], dtypes=NUMBERS)
    with tf.Session() as sess:
        a = tf.placeholder(tf.float32, [None])
        with pytest.raises(tf.errors.InvalidArgumentError, match="one shape"):
            sess.run(tf.add_n([a, a, tf.constant([1.0, 2.0])]), {a: [1.0]})


def test_accumulate_n_and_scalar_mul(sess):
    assert sess.run(tf.accumulate_n([[1.0, 2.0], [3.0, 4.0]])).tolist() == [4.0, 6.0]
    assert sess.run(tf.scalar_mul(2.0, tf.constant([1.0, 3.0]))).tolist() == [2.0, 6.0]
    sparse = tf.scalar_mul(3.0, tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([0])))
    assert isinstance(sparse, tf.IndexedSlices) and sess.run(sparse.values).tolist() == [[3.0, 6.0]]


def test_broadcast_gradient_args_kernel(sess):
    def args(s0, s1):
        return tf.extension.apply_op("BroadcastGradientArgs", [np.array(s0, np.int32), np.array(s1, np.int32)])
    r0, r1 = sess.run(args([2, 1, 4], [3, 1]))
    assert r0.tolist() == [1] and r1.tolist() == [0, 2] and r0.dtype == np.int32
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        sess.run(args([2], [3]))


# ---- matmul ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_with_transposes(transpose_a, transpose_b):
    a_shape, b_shape = (4, 3) if transpose_a else (3, 4), (5, 4) if transpose_b else (4, 5)
    check_op(lambda a, b: tf.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b),
             in_float64(lambda a, b: (a.T if transpose_a else a) @ (b.T if transpose_b else b)),
             [[a_shape, b_shape]], dtypes=["float32", "float64", "int32", "int64"])


def test_float16_matmul_accumulates_in_float32(sess):
    a = np.full((1, 4096), 0.1, np.float16)
    got = sess.run(tf.matmul(a, a.T))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, a.astype(np.float64) @ a.T.astype(np.float64), rtol=2e-3)


def test_matmul_adjoints_conjugate_complex_operands(sess):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    b = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
    np.testing.assert_allclose(sess.run(tf.matmul(a, b, adjoint_a=True)), a.conj().T @ b)
    batched_a, batched_b = np.stack([a, 2 * a]), np.stack([b, b])
    np.testing.assert_allclose(sess.run(tf.matmul(batched_a, batched_b, adjoint_a=True)),
                               np.conj(np.swapaxes(batched_a, 1, 2)) @ batched_b)


@pytest.mark.parametrize("a_shape, b_shape", [((2, 3, 4), (2, 4, 5)), ((7, 1, 3, 4), (6, 4, 2)), ((3, 4), (2, 4, 5)),
                                              ((2, 3, 4), (4, 5))])
def test_batch_matmul_broadcasts_like_numpy(a_shape, b_shape):
    check_op(tf.matmul, in_float64(np.matmul), [[a_shape, b_shape]], dtypes=["float32", "float64", "int32"])


def test_batch_matmul_with_adjoint_flags():
    check_op(lambda a, b: tf.matmul(a, b, transpose_a=True, adjoint_b=True),
             in_float64(lambda a, b: np.swapaxes(a, -1, -2) @ np.swapaxes(b, -1, -2)), [[(2, 4, 3), (1, 5, 4)]])


def test_matmul_shape_mismatch_at_run_time_names_the_op(sess):
    a = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(tf.matmul(a, a, name="product"), {a: np.ones((2, 3))})
    assert "'product'" in str(info.value)


# ---- reductions --------------------------------------------------------------------------------------------------
REDUCTIONS = {
    "reduce_sum": (tf.reduce_sum, np.sum), "reduce_mean": (tf.reduce_mean, np.mean),
    "reduce_max": (tf.reduce_max, np.max), "reduce_min": (tf.reduce_min, np.min),
    "reduce_prod": (tf.reduce_prod, np.prod), "reduce_logsumexp": (tf.reduce_logsumexp, None),
}


def logsumexp(x, axis=None, keepdims=False):
    shift = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axis)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (-1, True), ((0, 2), False), ((0, 2), True),
                                            ((), False)])
def test_float_reductions(name, axis, keepdims):
    tf_fn, np_fn = REDUCTIONS[name]
    np_fn = np_fn or logsumexp
    reference = in_float64(lambda x: np_fn(x, axis=axis, keepdims=keepdims))
    tf_axis = list(axis) if isinstance(axis, tuple) else axis
    check_op(lambda x: tf_fn(x, tf_axis, keepdims=keepdims), reference, [[(2, 3, 4)]], dtypes=["float32", "float64"])
    long_axis = (2, 3, 4) if name == "reduce_prod" else (2, 3, 40)  # keeps float16 products finite
    check_op(lambda x: tf_fn(x, tf_axis, keepdims=keepdims), reference, [[long_axis]], dtypes=["float16"],
             rtol=3e-3, atol=3e-3)


@pytest.mark.parametrize("tf_fn, np_fn", [(tf.reduce_sum, np.sum), (tf.reduce_max, np.max), (tf.reduce_min, np.min),
                                          (tf.reduce_prod, np.prod)], ids=lambda v: getattr(v, "__name__", ""))
def test_integer_reductions_keep_their_dtype(tf_fn, np_fn):
    for axis in (None, 0, [0, 1]):
        np_axis = None if axis is None else tuple(np.atleast_1d(axis))
        check_op(lambda x: tf_fn(x, axis), lambda x: np_fn(x, axis=np_axis).astype(x.dtype), [[(3, 4)]],
                 dtypes=["int32", "int64"])


def test_integer_mean_truncates_toward_zero(sess):
    got = sess.run([tf.reduce_mean(np.array([[1, 2], [-1, -2], [3, 4]], np.int32), 1),
                    tf.reduce_mean(np.array([7, 8], np.int64))])
    assert got[0].tolist() == [1, -1, 3] and got[0].dtype == np.int32 and got[1] == 7


def test_float16_sums_accumulate_in_float32(sess):
    ones = np.ones(5000, np.float16)
    got = sess.run([tf.reduce_sum(ones), tf.reduce_mean(ones * np.float16(0.1))])
    assert got[0].dtype == np.float16 and got[0] == 5000 and abs(float(got[1]) - 0.1) < 1e-3


def test_empty_reductions_give_the_identity(sess):
    empty = np.zeros((0, 3), np.float32)
    total, product, largest, smallest = sess.run([tf.reduce_sum(empty, 0), tf.reduce_prod(empty, 0),
                                                  tf.reduce_max(empty, 0), tf.reduce_min(empty)])
    assert total.tolist() == [0, 0, 0] and product.tolist() == [1, 1, 1]
    assert largest.tolist() == [-np.inf] * 3 and smallest == np.inf
    assert sess.run(tf.reduce_max(np.zeros((0,), np.int32))) == np.iinfo(np.int32).min


def test_bool_reductions():
    for axis in (None, 0, 1, [0, 1]):
        np_axis = None if axis is None else tuple(np.atleast_1d(axis))
        check_op(lambda x: tf.reduce_all(x, axis), lambda x: np.all(x, axis=np_axis), [[(3, 4)]], dtypes=["bool"])
        check_op(lambda x: tf.reduce_any(x, axis, keepdims=True), lambda x: np.any(x, axis=np_axis, keepdims=True),
                 [[(3, 4)]], dtypes=["bool"])


def test_reduction_axes_fed_at_run_time_and_unknown_rank(sess):
    x, axes = tf.placeholder(tf.float32), tf.placeholder(tf.int32, [None])
    data = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(sess.run(tf.reduce_sum(x, axes), {x: data, axes: [0, -1]}), data.sum(axis=(0, 2)))
    np.testing.assert_allclose(sess.run(tf.reduce_max(x), {x: data}), 23.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension 3"):
        sess.run(tf.reduce_sum(x, axes), {x: data, axes: [3]})
    np.testing.assert_allclose(sess.run(tf.reduce_sum(x, axes), {x: data, axes: [1, 1, -2]}), data.sum(axis=1))


def test_reduce_logsumexp_is_stable(sess):
    x = np.array([[1000.0, 1000.0], [-1000.0, -np.inf], [-np.inf, -np.inf]])
    got = sess.run(tf.reduce_logsumexp(x, 1))
    np.testing.assert_allclose(got[:2], [1000.0 + np.log(2.0), -1000.0])
    assert got[2] == -np.inf


def test_count_nonzero(sess):
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    got = sess.run([tf.count_nonzero(x), tf.count_nonzero(x, 1, keepdims=True), tf.count_nonzero(x > 1, dtype=tf.int32),
                    tf.count_nonzero(np.array([b"", b"a", b"bc"], object)), tf.count_nonzero(x, reduction_indices=0)])
    assert got[0] == 3 and got[0].dtype == np.int64 and got[1].tolist() == [[1], [2]]
    assert got[2] == 2 and got[2].dtype == np.int32 and got[3] == 2 and got[4].tolist() == [1, 1, 1]


def test_argmax_argmin(sess):
    for axis in (0, 1, -1):
        check_op(lambda x: tf.argmax(x, axis), lambda x: np.argmax(x, axis=axis), [[(3, 4)]], dtypes=NUMBERS)
        check_op(lambda x: tf.argmin(x, dimension=axis, output_type=tf.int32),
                 lambda x: np.argmin(x, axis=axis).astype(np.int32), [[(3, 4)]], dtypes=["float32", "int64"])
    assert sess.run(tf.argmax([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], 1)).tolist() == [1, 0]  # first index on ties
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
        sess.run(tf.argmax(np.zeros((0, 2)), 0))


# ---- range, cumulative, segments -----------------------------------------------------------------------------
@pytest.mark.parametrize("args, kwargs", [((5,), {}), ((2, 11, 3), {}), ((10, 0, -3), {}), ((0.0, 1.0, 0.25), {}),
                                          ((3,), {"dtype": tf.float64}), ((1, 1), {}), ((-1.5, -4.0, -1.0), {})])
def test_range_matches_numpy(sess, args, kwargs):
    got = sess.run(tf.range(*args, **kwargs))
    want = np.arange(*args, dtype=kwargs.get("dtype", tf.int32 if all(isinstance(a, int) for a in args)
                                             else tf.float32).as_numpy_dtype)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want)


def test_range_from_run_time_values(sess):
    n = tf.placeholder(tf.int32, [])
    assert sess.run(tf.range(n), {n: 4}).tolist() == [0, 1, 2, 3]
    assert sess.run(tf.range(1, n * 2, 2), {n: 3}).tolist() == [1, 3, 5]
    with pytest.raises(tf.errors.InvalidArgumentError, match="delta != 0"):
        sess.run(tf.range(0, n, 0 * n), {n: 3})
    with pytest.raises(tf.errors.InvalidArgumentError, match="start <= limit"):
        sess.run(tf.range(n, 0), {n: 3})


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_and_cumprod(exclusive, reverse, axis):
    def reference(run, identity):
        def fn(x):
            x = np.flip(x, axis) if reverse else x
            out = run(x.astype(np.float64), axis=axis)
            if exclusive:
                out = np.concatenate([np.full_like(np.take(out, [0], axis), identity),
                                      np.delete(out, -1, axis)], axis)
            return (np.flip(out, axis) if reverse else out).astype(x.dtype)
        return fn
    options = {"axis": axis, "exclusive": exclusive, "reverse": reverse}
    check_op(lambda x: tf.cumsum(x, **options), reference(np.cumsum, 0), [[(3, 4)]], dtypes=NUMBERS)
    check_op(lambda x: tf.cumprod(x, **options), reference(np.cumprod, 1), [[(3, 4)]],
             dtypes=["float32", "float64", "int64"])


def test_unsorted_segment_sum(sess):
    data = np.arange(24.0).reshape(2, 3, 4)
    ids = np.array([[0, 2, -1], [2, 2, 0]])
    want = np.zeros((4, 4))
    for i, j in np.ndindex(ids.shape):
        if ids[i, j] >= 0:
            want[ids[i, j]] += data[i, j]
    for dtype in ["float32", "float64", "int32", "int64", "float16"]:
        got = sess.run(tf.unsorted_segment_sum(data.astype(dtype), ids, 4))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1\] = 5 is out of range \[0, 4\)"):
        sess.run(tf.unsorted_segment_sum([1.0, 2.0], [0, 5], 4))


def test_segment_sum(sess):
    data = np.arange(12.0).reshape(4, 3)
    got = sess.run(tf.segment_sum(data, [0, 0, 2, 2]))
    np.testing.assert_array_equal(got, [data[0] + data[1], np.zeros(3), data[2] + data[3]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="sorted"):
        sess.run(tf.segment_sum(data, [1, 0, 2, 2]))
