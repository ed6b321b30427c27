"""Ops of the core's list over every dtype that makes sense (float16, float32, float64, int32, int64, bool,
string), for the ops whose own test files try fewer: values against numpy (float64 references rounded to
the input's dtype) and the exact dtype each kernel returns."""

import operator

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import check_op

FLOATS = ["float16", "float32", "float64"]
INTS = ["int32", "int64"]
NUMBERS = FLOATS + INTS
ALL = NUMBERS + ["bool", "string"]
RNG = np.random.default_rng(7)


def in_float64(fn):
    return lambda *a: np.asarray(fn(*(x.astype(np.float64) if x.dtype.kind == "f" else x for x in a))).astype(
        a[0].dtype)


def loose(dtype):
    """Tolerances for float16 results computed through float32 (softmax, convolutions, matmuls)."""
    return {"rtol": 5e-3, "atol": 5e-3} if dtype == "float16" else {}


def sample(shape, dtype):
    if dtype == "string":
        return np.array([f"s{v}".encode() for v in RNG.integers(0, 50, int(np.prod(shape)))], object).reshape(shape)
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    scale = 1 if dtype.startswith("float") else 10
    return (RNG.uniform(-3, 3, shape) * scale).astype(dtype)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# ---- nn ops -------------------------------------------------------------------------------------------------
NN = {
    "relu": (tf.nn.relu, lambda x: np.maximum(x, 0), NUMBERS),
    "relu6": (tf.nn.relu6, lambda x: np.clip(x, 0, 6), NUMBERS),
    "elu": (tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))), FLOATS),
    "softplus": (tf.nn.softplus, lambda x: np.logaddexp(x, 0), FLOATS),
    "softmax": (tf.nn.softmax, softmax, FLOATS),
    "log_softmax": (tf.nn.log_softmax, lambda x: np.log(softmax(x)), FLOATS),
    "l2_loss": (tf.nn.l2_loss, lambda x: (x * x).sum() / 2, FLOATS),
}


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_ops_over_dtypes(name):
    tf_fn, np_fn, dtypes = NN[name]
    for dtype in dtypes:
        check_op(tf_fn, in_float64(np_fn), [[(3, 5)]], dtypes=[dtype], **loose(dtype))


@pytest.mark.parametrize("dtype", NUMBERS)
def test_bias_add_over_dtypes_and_formats(dtype):
    check_op(tf.nn.bias_add, in_float64(lambda x, b: x + b), [[(2, 3, 4), (4,)]], dtypes=[dtype])
    check_op(lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"),
             in_float64(lambda x, b: x + b.reshape(1, 3, 1, 1)), [[(2, 3, 2, 2), (3,)]], dtypes=[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_cross_entropies_over_float_dtypes(dtype):
    labels = softmax(RNG.normal(size=(4, 5))).astype(dtype)
    logits = RNG.normal(size=(4, 5)).astype(dtype) * 2
    check_op(lambda z, l: tf.nn.softmax_cross_entropy_with_logits(labels=l, logits=z),
             in_float64(lambda z, l: -(l * np.log(softmax(z))).sum(-1)), None, inputs=[logits, labels],
             dtypes=[dtype], **loose(dtype))
    for label_dtype in INTS:
        ids = RNG.integers(0, 5, 4).astype(label_dtype)
        check_op(lambda z, i: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=z),
                 lambda z, i: (-np.log(softmax(z.astype(np.float64)))[np.arange(4), i]).astype(z.dtype), None,
                 inputs=[logits, ids], dtypes=[dtype], **loose(dtype))
    targets = RNG.uniform(size=(4, 5)).astype(dtype)
    check_op(lambda z, t: tf.nn.sigmoid_cross_entropy_with_logits(labels=t, logits=z),
             in_float64(lambda z, t: np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z)))), None,
             inputs=[logits, targets], dtypes=[dtype], **loose(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_conv2d_over_float_dtypes(dtype, data_format):
    x, f = RNG.normal(size=(2, 5, 5, 3)), RNG.normal(size=(3, 3, 3, 4)) * 0.3

    def reference(x, f):  # SAME, stride 2, in float64
        x64 = np.pad(x.astype(np.float64), [(0, 0), (1, 1), (1, 1), (0, 0)])
        out = np.zeros((2, 3, 3, 4))
        for i in range(3):
            for j in range(3):
                out[:, i, j] = np.einsum("nhwc,hwco->no", x64[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3], f)
        return out.astype(x.dtype)

    if data_format == "NHWC":
        check_op(lambda a, b: tf.nn.conv2d(a, b, [1, 2, 2, 1], "SAME"), reference, None,
                 inputs=[x.astype(dtype), f.astype(dtype)], dtypes=[dtype], **loose(dtype))
    else:
        check_op(lambda a, b: tf.nn.conv2d(a, b, [1, 1, 2, 2], "SAME", data_format="NCHW"),
                 lambda a, b: reference(a.transpose(0, 2, 3, 1), b).transpose(0, 3, 1, 2), None,
                 inputs=[x.transpose(0, 3, 1, 2).astype(dtype), f.astype(dtype)], dtypes=[dtype], **loose(dtype))


@pytest.mark.parametrize("dtype", NUMBERS)
def test_pooling_over_dtypes(dtype):
    def windows(x):
        return x.reshape(2, 2, 2, 3, 2, 3).transpose(0, 1, 3, 5, 2, 4).reshape(2, 2, 3, 3, 4)

    check_op(lambda x: tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), lambda x: windows(x).max(-1),
             [[(2, 4, 6, 3)]], dtypes=[dtype])
    if dtype in FLOATS:
        check_op(lambda x: tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                 in_float64(lambda x: windows(x).mean(-1)), [[(2, 4, 6, 3)]], dtypes=[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_keeps_the_dtype_and_scales_what_it_keeps(dtype, sess):
    x = np.abs(sample((40, 50), dtype)) + np.array(0.5, dtype)
    y = sess.run(tf.nn.dropout(tf.constant(x), keep_prob=0.5, seed=4))
    kept = y != 0
    assert y.dtype == np.dtype(dtype) and 0.4 < kept.mean() < 0.6
    np.testing.assert_allclose(y[kept], (x[kept].astype(np.float64) * 2).astype(dtype), rtol=1e-3)


@pytest.mark.parametrize("dtype", ALL)
def test_identity_stop_gradient_and_embedding_lookup_over_dtypes(dtype, sess):
    table = sample((6, 3), dtype)
    ids = np.array([[5, 0], [2, 5]])
    got = sess.run([tf.identity(table), tf.stop_gradient(table), tf.nn.embedding_lookup(table, ids),
                    tf.nn.embedding_lookup([table[:3], table[3:]], ids, partition_strategy="div")])
    for g, want in zip(got, [table, table, table[ids], table[ids]]):
        assert g.dtype == want.dtype and g.shape == want.shape and (g == want).all()


@pytest.mark.parametrize("dtype", ALL)
def test_where_select_and_random_shuffle_over_dtypes(dtype, sess):
    x, y = sample((4, 3), dtype), sample((4, 3), dtype)
    condition, rows = RNG.random((4, 3)) < 0.5, np.array([True, False, False, True])
    got = sess.run([tf.where(condition, x, y), tf.select(rows, x, y), tf.random_shuffle(x, seed=1)])
    for g, want in zip(got[:2], [np.where(condition, x, y), np.where(rows[:, None], x, y)]):
        assert g.dtype == want.dtype and (g == want).all()
    assert got[2].dtype == x.dtype and sorted(map(tuple, got[2].tolist())) == sorted(map(tuple, x.tolist()))


# ---- math ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", NUMBERS)
def test_matmul_and_batch_matmul_over_dtypes(dtype):
    check_op(lambda a, b: tf.matmul(a, b, transpose_b=True), in_float64(lambda a, b: a @ b.T), [[(3, 4), (5, 4)]],
             dtypes=[dtype], **loose(dtype))
    check_op(tf.matmul, in_float64(np.matmul), [[(2, 3, 4), (2, 4, 5)], [(2, 1, 3, 4), (3, 4, 2)]], dtypes=[dtype],
             **loose(dtype))


@pytest.mark.parametrize("source", NUMBERS + ["bool"])
@pytest.mark.parametrize("target", NUMBERS + ["bool"])
def test_cast_between_every_pair(source, target):
    x = sample((3, 4), source)
    if source.startswith("float") and target.startswith("int"):
        x = np.trunc(x)  # numpy and TF agree on truncation; the fractional part is tested elsewhere
    check_op(lambda t: tf.cast(t, target), lambda t: t.astype(target), None, inputs=[x], dtypes=[source])


@pytest.mark.parametrize("dtype", NUMBERS)
def test_mod_over_dtypes(dtype):
    x = np.array([[-7, -3, 0, 5], [9, 2, -8, 1]]).astype(dtype)
    y = np.array([3, -2, 4, -5]).astype(dtype)
    check_op(tf.mod, in_float64(np.mod), None, inputs=[x, y], dtypes=[dtype])


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                                operator.pow, operator.neg, operator.lt, operator.ge, operator.matmul],
                         ids=lambda f: f.__name__)
def test_python_operators_over_dtypes(op, dtype, sess):
    x = (np.abs(sample((3, 3), dtype)) + np.array(1, dtype)) if op is operator.pow else sample((3, 3), dtype)
    y = np.array([[2, 3, 1], [1, 2, 3], [3, 1, 2]]).astype(dtype)
    if op is operator.pow and dtype in INTS:
        x = np.minimum(x, 6).astype(dtype)
    args = (x,) if op is operator.neg else (x, y)
    got = sess.run(op(*(tf.constant(a) for a in args)))
    want = op(*(a.astype(np.float64) if a.dtype.kind == "f" else a for a in args))
    assert got.dtype == (np.bool_ if op in (operator.lt, operator.ge) else np.dtype(dtype))
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(want, np.float64), **(
        {"rtol": 2e-3, "atol": 2e-2} if dtype == "float16" else {"rtol": 1e-6}))
