"""conv2d, its backward ops, and pooling against naive float64 loops; NCHW against NHWC; gradients."""

import itertools
import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.testing import check_gradients, check_op

RNG = np.random.default_rng(0)


# ---- naive references (NHWC, float64), written from TF's documented arithmetic -------------------------------
def _geometry(size, window, stride, dilation, padding):
    effective = (window - 1) * dilation + 1
    if padding == "SAME":
        out = math.ceil(size / stride)
        return out, max((out - 1) * stride + effective - size, 0) // 2
    return math.ceil((size - effective + 1) / stride), 0


def _window_cells(x_shape, window, strides, dilations, padding):
    """For each output (i, j): the in-bounds (row, col, di, dj) the window covers, in row-major order."""
    _, h, w, _ = x_shape
    oh, top = _geometry(h, window[0], strides[0], dilations[0], padding)
    ow, left = _geometry(w, window[1], strides[1], dilations[1], padding)
    cells = {}
    for i, j in itertools.product(range(oh), range(ow)):
        cells[i, j] = [(i * strides[0] - top + di * dilations[0], j * strides[1] - left + dj * dilations[1], di, dj)
                       for di in range(window[0]) for dj in range(window[1])]
        cells[i, j] = [c for c in cells[i, j] if 0 <= c[0] < h and 0 <= c[1] < w]
    return oh, ow, cells


def conv_ref(x, f, strides, padding, dilations=(1, 1)):
    oh, ow, cells = _window_cells(x.shape, f.shape[:2], strides, dilations, padding)
    out = np.zeros((x.shape[0], oh, ow, f.shape[3]))
    for (i, j), where in cells.items():
        for r, c, di, dj in where:
            out[:, i, j, :] += x[:, r, c, :].astype(np.float64) @ f[di, dj].astype(np.float64)
    return out


def conv_backprop_ref(x, f, dy, strides, padding, dilations=(1, 1)):
    _, _, cells = _window_cells(x.shape, f.shape[:2], strides, dilations, padding)
    dx, df = np.zeros(x.shape), np.zeros(f.shape)
    for (i, j), where in cells.items():
        for r, c, di, dj in where:
            dx[:, r, c, :] += dy[:, i, j, :] @ f[di, dj].T
            df[di, dj] += x[:, r, c, :].T @ dy[:, i, j, :]
    return dx, df


def pool_ref(x, ksize, strides, padding, kind):
    oh, ow, cells = _window_cells(x.shape, ksize, strides, (1, 1), padding)
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for (i, j), where in cells.items():
        values = np.stack([x[:, r, c, :] for r, c, _, _ in where])
        out[:, i, j, :] = values.max(0) if kind == "max" else values.astype(np.float64).mean(0)
    return out.astype(x.dtype)


def max_pool_grad_ref(x, dy, ksize, strides, padding):
    _, _, cells = _window_cells(x.shape, ksize, strides, (1, 1), padding)
    dx = np.zeros(x.shape)
    for (i, j), where in cells.items():
        values = np.stack([x[:, r, c, :] for r, c, _, _ in where])
        first = values.argmax(0)  # argmax returns the first maximum, as TF routes the gradient
        for k, (r, c, _, _) in enumerate(where):
            dx[:, r, c, :] += np.where(first == k, dy[:, i, j, :], 0)
    return dx


def _nchw(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def _nhwc(a):
    return a.transpose(0, 2, 3, 1)


# ---- conv2d -------------------------------------------------------------------------------------------------
CONV_CASES = [  # input shape, filter shape, strides, padding, dilations
    ((2, 7, 7, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 7, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", (1, 1)),   # odd padding goes bottom/right
    ((1, 6, 6, 2), (2, 2, 2, 3), (2, 2), "SAME", (1, 1)),   # even filter: pad 0 top, 0 bottom
    ((1, 5, 5, 2), (4, 4, 2, 3), (1, 1), "SAME", (1, 1)),   # even filter: pad 1 top, 2 bottom
    ((2, 9, 7, 2), (3, 2, 2, 5), (2, 3), "VALID", (1, 1)),
    ((1, 9, 9, 2), (3, 3, 2, 2), (1, 1), "SAME", (2, 2)),   # dilated
    ((1, 10, 9, 1), (2, 3, 1, 2), (1, 1), "VALID", (3, 2)),
    ((3, 5, 5, 4), (1, 1, 4, 6), (1, 1), "VALID", (1, 1)),  # 1x1 convolution
    ((1, 3, 3, 1), (5, 5, 1, 1), (1, 1), "SAME", (1, 1)),   # filter larger than the image
]


@pytest.mark.parametrize("x_shape,f_shape,strides,padding,dilations", CONV_CASES)
def test_conv2d_matches_naive_loops_nhwc(x_shape, f_shape, strides, padding, dilations):
    x, f = RNG.standard_normal(x_shape), RNG.standard_normal(f_shape)
    check_op(lambda a, b: tf.nn.conv2d(a, b, [1, *strides, 1], padding, dilations=[1, *dilations, 1]),
             lambda a, b: conv_ref(a, b, strides, padding, dilations), None, inputs=[x, f], dtypes=["float64"])
    check_op(lambda a, b: tf.nn.conv2d(a, b, [1, *strides, 1], padding, dilations=[1, *dilations, 1]),
             lambda a, b: conv_ref(a, b, strides, padding, dilations), None, dtypes=["float32"],
             inputs=[x.astype(np.float32), f.astype(np.float32)], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("x_shape,f_shape,strides,padding,dilations", CONV_CASES)
def test_conv2d_nchw_equals_nhwc_transposed(x_shape, f_shape, strides, padding, dilations):
    x, f = RNG.standard_normal(x_shape), RNG.standard_normal(f_shape)
    y = tf.nn.conv2d(_nchw(x), f, [1, 1, *strides], padding, data_format="NCHW", dilations=[1, 1, *dilations])
    assert y.shape.as_list() == list(_nchw(conv_ref(x, f, strides, padding, dilations)).shape)
    with tf.Session() as sess:
        np.testing.assert_allclose(_nhwc(sess.run(y)), conv_ref(x, f, strides, padding, dilations), atol=1e-10)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("x_shape,f_shape,strides,padding,dilations", CONV_CASES)
def test_conv2d_backprop_ops_match_naive_loops(x_shape, f_shape, strides, padding, dilations, data_format):
    x, f = RNG.standard_normal(x_shape), RNG.standard_normal(f_shape)
    dy = RNG.standard_normal(conv_ref(x, f, strides, padding, dilations).shape)
    want_dx, want_df = conv_backprop_ref(x, f, dy, strides, padding, dilations)
    to, back = (_nchw, _nhwc) if data_format == "NCHW" else (np.asarray, np.asarray)
    attrs = dict(strides=[1, *strides, 1] if data_format == "NHWC" else [1, 1, *strides], padding=padding,
                 data_format=data_format,
                 dilations=[1, *dilations, 1] if data_format == "NHWC" else [1, 1, *dilations])
    dx = tf.nn.conv2d_backprop_input(list(to(x).shape), f, to(dy), **attrs)
    df = tf.nn.conv2d_backprop_filter(to(x), list(f.shape), to(dy), **attrs)
    assert dx.shape.as_list() == list(to(x).shape) and df.shape.as_list() == list(f.shape)
    with tf.Session() as sess:
        got_dx, got_df = sess.run([dx, df])
    np.testing.assert_allclose(back(got_dx), want_dx, atol=1e-10)
    np.testing.assert_allclose(got_df, want_df, atol=1e-10)


def test_conv2d_transpose_is_the_adjoint_of_conv2d(sess):
    x, f = RNG.standard_normal((2, 6, 5, 3)), RNG.standard_normal((3, 3, 3, 4))
    y = conv_ref(x, f, (2, 2), "SAME")
    v = RNG.standard_normal(y.shape)
    out = tf.nn.conv2d_transpose(v, f, output_shape=[2, 6, 5, 3], strides=[1, 2, 2, 1], padding="SAME")
    assert out.shape.as_list() == [2, 6, 5, 3]
    # <conv(x), v> == <x, conv_transpose(v)>
    np.testing.assert_allclose(np.vdot(y, v), np.vdot(x, sess.run(out)), rtol=1e-10)


@pytest.mark.parametrize("strides,padding,dilations", [((1, 1), "SAME", (1, 1)), ((2, 1), "VALID", (1, 1)),
                                                       ((1, 1), "SAME", (2, 1))])
def test_conv2d_gradients_match_finite_differences(strides, padding, dilations):
    check_gradients(lambda x, f: tf.nn.conv2d(x, f, [1, *strides, 1], padding, dilations=[1, *dilations, 1]),
                    [(1, 4, 5, 2), (2, 2, 2, 2)])


def test_conv2d_gradients_nchw():
    check_gradients(lambda x, f: tf.nn.conv2d(x, f, [1, 1, 2, 2], "SAME", data_format="NCHW"),
                    [(2, 2, 4, 3), (3, 2, 2, 1)])


def test_second_order_through_conv_backprop_ops():
    attrs = dict(strides=[1, 2, 2, 1], padding="SAME")
    check_gradients(lambda f, dy: tf.nn.conv2d_backprop_input([1, 4, 3, 2], f, dy, **attrs),
                    [(2, 2, 2, 3), (1, 2, 2, 3)])
    check_gradients(lambda x, dy: tf.nn.conv2d_backprop_filter(x, [2, 2, 2, 3], dy, **attrs),
                    [(1, 4, 3, 2), (1, 2, 2, 3)])


def test_conv2d_static_shapes_and_clear_errors():
    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    assert tf.nn.conv2d(x, tf.zeros([5, 5, 1, 32]), [1, 1, 1, 1], "SAME").shape.as_list() == [None, 28, 28, 32]
    assert tf.nn.conv2d(x, tf.zeros([5, 5, 1, 32]), [1, 2, 2, 1], "VALID").shape.as_list() == [None, 12, 12, 32]
    with pytest.raises(ValueError, match=r"input depth 1 does not match the filter's in_channels 3.*test_conv_pool"):
        tf.nn.conv2d(x, tf.zeros([5, 5, 3, 32]), [1, 1, 1, 1], "SAME", name="bad_conv")
    with pytest.raises(ValueError, match="strides in the batch and channel dimensions must be 1"):
        tf.nn.conv2d(x, tf.zeros([5, 5, 1, 32]), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="must be one of"):
        tf.nn.conv2d(x, tf.zeros([5, 5, 1, 32]), [1, 1, 1, 1], "same")
    with pytest.raises(ValueError, match="output size would be negative"):
        tf.nn.conv2d(tf.zeros([1, 3, 3, 1]), tf.zeros([5, 5, 1, 1]), [1, 1, 1, 1], "VALID")


def test_conv2d_run_time_shape_mismatch_names_the_op():
    x = tf.placeholder(tf.float32, [None, None, None, None])
    y = tf.nn.conv2d(x, tf.zeros([3, 3, 2, 4]), [1, 1, 1, 1], "SAME", name="late_conv")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"(?s)in_channels 2.*'late_conv' \(Conv2D\)"):
            sess.run(y, {x: np.zeros((1, 4, 4, 3), np.float32)})


# ---- pooling ------------------------------------------------------------------------------------------------
POOL_CASES = [  # input shape, ksize, strides, padding
    ((2, 6, 6, 3), (2, 2), (2, 2), "VALID"),
    ((2, 7, 7, 3), (2, 2), (2, 2), "SAME"),
    ((1, 7, 6, 2), (3, 3), (2, 2), "SAME"),
    ((2, 5, 8, 2), (3, 2), (1, 3), "VALID"),
    ((1, 5, 5, 1), (3, 3), (1, 1), "SAME"),
    ((1, 4, 4, 2), (4, 4), (3, 3), "SAME"),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("x_shape,ksize,strides,padding", POOL_CASES)
def test_pooling_matches_naive_loops(kind, x_shape, ksize, strides, padding):
    fn = tf.nn.max_pool if kind == "max" else tf.nn.avg_pool
    check_op(lambda x: fn(x, [1, *ksize, 1], [1, *strides, 1], padding),
             lambda x: pool_ref(x, ksize, strides, padding, kind), [[x_shape]], dtypes=["float32", "float64"])


@pytest.mark.parametrize("x_shape,ksize,strides,padding", POOL_CASES)
def test_pooling_nchw_equals_nhwc_transposed(x_shape, ksize, strides, padding):
    x = RNG.standard_normal(x_shape)
    with tf.Session() as sess:
        for fn, kind in [(tf.nn.max_pool, "max"), (tf.nn.avg_pool, "avg")]:
            got = sess.run(fn(_nchw(x), [1, 1, *ksize], [1, 1, *strides], padding, data_format="NCHW"))
            np.testing.assert_allclose(_nhwc(got), pool_ref(x, ksize, strides, padding, kind), atol=1e-12)


def test_max_pool_on_integers():
    check_op(lambda x: tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
             lambda x: pool_ref(x, (3, 3), (2, 2), "SAME", "max"), [[(2, 5, 5, 2)]],
             dtypes=["int32", "uint8", "int64"])


def test_avg_pool_divides_by_valid_elements_only(sess):
    x = np.ones((1, 3, 3, 1), np.float32)
    out = sess.run(tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"))
    np.testing.assert_array_equal(out, np.ones((1, 2, 2, 1)))  # a zero-padded mean would give 0.5 and 0.25


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("x_shape,ksize,strides,padding", POOL_CASES)
def test_pool_gradient_ops_match_naive_loops(x_shape, ksize, strides, padding, data_format):
    x = RNG.permutation(np.prod(x_shape)).reshape(x_shape).astype(np.float64)  # distinct values: unique maxima
    dy = RNG.standard_normal(pool_ref(x, ksize, strides, padding, "max").shape)
    to, back = (_nchw, _nhwc) if data_format == "NCHW" else (np.asarray, np.asarray)
    spatial = (lambda v: [1, *v, 1]) if data_format == "NHWC" else (lambda v: [1, 1, *v])
    attrs = dict(ksize=spatial(ksize), strides=spatial(strides), padding=padding, data_format=data_format)
    xt = tf.constant(to(x))
    max_grad = tf.gradients(tf.nn.max_pool(xt, **attrs), xt, grad_ys=to(dy))[0]
    avg_grad = tf.gradients(tf.nn.avg_pool(xt, **attrs), xt, grad_ys=to(dy))[0]
    # The avg-pool gradient is the adjoint of avg_pool: <avg_pool(x), dy> == <x, grad>.
    with tf.Session() as sess:
        got_max, got_avg = sess.run([max_grad, avg_grad])
    np.testing.assert_allclose(back(got_max), max_pool_grad_ref(x, dy, ksize, strides, padding), atol=1e-12)
    np.testing.assert_allclose(np.vdot(pool_ref(x, ksize, strides, padding, "avg"), dy), np.vdot(x, back(got_avg)),
                               rtol=1e-10)


def test_max_pool_grad_sends_ties_to_the_first_maximum(sess):
    x = np.ones((1, 2, 2, 1))
    xt = tf.constant(x)
    g = sess.run(tf.gradients(tf.nn.max_pool(xt, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), xt)[0])
    np.testing.assert_array_equal(g.reshape(-1), [1, 0, 0, 0])


@pytest.mark.parametrize("ksize,strides,padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME")])
def test_pool_gradients_match_finite_differences(ksize, strides, padding):
    spatial = dict(ksize=[1, *ksize, 1], strides=[1, *strides, 1], padding=padding)
    x = RNG.permutation(50).reshape(1, 5, 5, 2) / 10.0  # well separated values keep max pooling differentiable
    check_gradients(lambda v: tf.nn.max_pool(v, **spatial), None, inputs=[x])
    check_gradients(lambda v: tf.nn.avg_pool(v, **spatial), [(1, 5, 5, 2)])


def test_second_order_pool_gradients():
    spatial = dict(ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="SAME")
    x_value = RNG.permutation(18).reshape(1, 3, 3, 2).astype(np.float64)

    def max_pool_grad(dy):
        x = tf.constant(x_value)
        return apply_op("MaxPoolGrad", [x, tf.nn.max_pool(x, **spatial), dy], spatial)

    check_gradients(max_pool_grad, [(1, 3, 3, 2)])
    check_gradients(lambda dy: apply_op("AvgPoolGrad", [[1, 3, 3, 2], dy], spatial), [(1, 3, 3, 2)])


def test_pool_shapes_and_errors():
    x = tf.placeholder(tf.float32, [None, 28, 28, 32])
    assert tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME").shape.as_list() == [None, 14, 14, 32]
    assert tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID").shape.as_list() == [None, 13, 13, 32]
    with pytest.raises(ValueError, match="ksize in the batch and channel dimensions must be 1"):
        tf.nn.max_pool(x, [1, 2, 2, 2], [1, 2, 2, 1], "SAME")
    with pytest.raises(TypeError, match="not in the allowed list"):
        tf.nn.avg_pool(tf.zeros([1, 4, 4, 1], tf.int32), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")


@pytest.mark.parametrize("padding,stride", [("SAME", 1), ("VALID", 2)])
def test_conv1d_is_conv2d_over_a_height_of_one(sess, padding, stride):
    x, f = RNG.standard_normal((2, 9, 3)), RNG.standard_normal((3, 3, 4))
    want = conv_ref(x[:, None], f[None], (1, stride), padding)[:, 0]
    y = tf.nn.conv1d(x, f, stride, padding)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(sess.run(y), want, atol=1e-12)
    ncw = tf.nn.conv1d(x.transpose(0, 2, 1), f, [1, 1, stride], padding, data_format="NCW")
    np.testing.assert_allclose(sess.run(ncw), want.transpose(0, 2, 1), atol=1e-12)
