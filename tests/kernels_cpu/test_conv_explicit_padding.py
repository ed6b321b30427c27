"""conv2d, conv2d_transpose and max_pool with explicit padding lists, and their input and filter gradients, against
TF1 (tests/fixtures/tf1/make_conv_explicit_padding.py), in NHWC and NCHW; TF's refusals of other padding lists."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

CASES = load("conv_explicit_padding")
TOLERANCE = {np.float64: 1e-10, np.float32: 1e-5, np.float16: 3e-2}


def _nchw(a):
    return np.transpose(a, (0, 3, 1, 2))


def _nhwc(a):
    return np.transpose(a, (0, 2, 3, 1))


def _padding(padding, data_format):
    """An NHWC padding list in ``data_format``'s order."""
    return padding if data_format == "NHWC" else [padding[0], padding[3], padding[1], padding[2]]


def _close(got, want, dtype):
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n]["kind"] == "conv2d"))
def test_conv2d_and_its_gradients_match_tf1(name, data_format, dtype):
    case = CASES[name]
    x, w, grad_ys = (array(case[k]) for k in ("x", "w", "grad_ys"))
    to_format = _nchw if data_format == "NCHW" else (lambda a: a)
    from_format = _nhwc if data_format == "NCHW" else (lambda a: a)
    xt, wt = tf.constant(to_format(x).astype(dtype)), tf.constant(w.astype(dtype))
    y = tf.nn.conv2d(xt, wt, case["strides"], _padding(case["padding"], data_format), data_format=data_format)
    assert y.shape.as_list() == list(to_format(array(case["out"])).shape)
    dx, dw = tf.gradients(y, [xt, wt], grad_ys=tf.constant(to_format(grad_ys).astype(dtype)))
    with tf.Session() as sess:
        out, dx, dw = sess.run([y, dx, dw])
    _close(from_format(out), array(case["out"]), dtype)
    _close(from_format(dx), array(case["dx"]), dtype)
    _close(dw, array(case["dw"]), dtype)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n]["kind"] == "transpose"))
def test_conv2d_transpose_and_its_gradients_match_tf1(name, data_format):
    case = CASES[name]
    value, w = array(case["value"]), array(case["w"])
    output_shape = case["output_shape"]
    to_format = _nchw if data_format == "NCHW" else (lambda a: a)
    from_format = _nhwc if data_format == "NCHW" else (lambda a: a)
    shape_in_format = list(to_format(np.zeros(output_shape)).shape)
    vt, wt = tf.constant(to_format(value)), tf.constant(w)
    y = tf.nn.conv2d_transpose(vt, wt, shape_in_format, case["strides"], _padding(case["padding"], data_format),
                               data_format=data_format)
    grad_ys = np.linspace(-1, 1, np.prod(output_shape)).reshape(output_shape)
    dvalue, dw = tf.gradients(y, [vt, wt], grad_ys=tf.constant(to_format(grad_ys)))
    with tf.Session() as sess:
        out, dvalue, dw = sess.run([y, dvalue, dw])
    _close(from_format(out), array(case["out"]), np.float64)
    _close(from_format(dvalue), array(case["dvalue"]), np.float64)
    _close(dw, array(case["dw"]), np.float64)


@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n]["kind"] == "refused"))
def test_padding_lists_tf_refuses_are_refused_with_a_reason(name):
    case = CASES[name]
    shape = case["shape"] if case["data_format"] == "NHWC" else (1, 2, 4, 4)
    with pytest.raises(ValueError) as info:
        tf.nn.conv2d(tf.zeros(shape), tf.zeros((2, 2, 2, 1)), 1, case["padding"], data_format=case["data_format"])
    assert "padding" in str(info.value) or "window" in str(info.value), str(info.value)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_dilated_explicit_padding_is_tf_pad_then_valid(data_format):
    """TF's CPU refuses dilated Conv2D, so dilations are checked against padding by hand then VALID."""
    rng = np.random.default_rng(15)
    x, w = rng.standard_normal((2, 7, 8, 3)), rng.standard_normal((3, 2, 3, 4))
    padding = [[0, 0], [3, 1], [0, 2], [0, 0]]
    to_format = _nchw if data_format == "NCHW" else (lambda a: a)
    xt, wt = tf.constant(to_format(x)), tf.constant(w)
    dilations, strides = ([1, 2, 3, 1], [1, 2, 1, 1]) if data_format == "NHWC" else ([1, 1, 2, 3], [1, 1, 2, 1])
    explicit = tf.nn.conv2d(xt, wt, strides, _padding(padding, data_format), data_format=data_format,
                            dilations=dilations)
    padded = tf.nn.conv2d(tf.pad(xt, _padding(padding, data_format)), wt, strides, "VALID", data_format=data_format,
                          dilations=dilations)
    grad_ys = tf.constant(rng.standard_normal(explicit.shape.as_list()))
    with tf.Session() as sess:
        got = sess.run([explicit] + tf.gradients(explicit, [xt, wt], grad_ys=grad_ys))
        want = sess.run([padded] + tf.gradients(padded, [xt, wt], grad_ys=grad_ys))
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-12)


def test_explicit_padding_survives_a_graph_def_round_trip():
    x = tf.constant(np.arange(16.0).reshape(1, 4, 4, 1))
    tf.nn.conv2d(x, tf.ones((2, 2, 1, 1), tf.float64), 1, [[0, 0], [1, 0], [0, 1], [0, 0]], name="padded")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        y, = tf.import_graph_def(graph_def, return_elements=["padded:0"])
        assert y.op.get_attr("padding") == "EXPLICIT"
        assert list(y.op.get_attr("explicit_paddings")) == [0, 0, 1, 0, 0, 1, 0, 0]
        with tf.Session() as sess:
            assert sess.run(y)[0, :, 3, 0].tolist() == [3.0, 10.0, 18.0, 26.0]


def test_conv1d_takes_no_padding_list_as_in_tf():
    with pytest.raises(TypeError, match="conv1d: padding must be 'SAME' or 'VALID'"):
        tf.nn.conv1d(tf.zeros((1, 5, 2)), tf.zeros((2, 2, 3)), 1, [[0, 0], [1, 0], [0, 0]])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("name", sorted(n for n in CASES if CASES[n]["kind"] == "max_pool"))
def test_max_pool_with_explicit_padding_matches_tf1(name, data_format):
    """Explicit paddings must be smaller than the window (TF checks when the step runs; here while building)."""
    case = CASES[name]
    x = array(case["x"])
    to_format = _nchw if data_format == "NCHW" else (lambda a: a)
    from_format = _nhwc if data_format == "NCHW" else (lambda a: a)

    def in_format(values):
        return values if data_format == "NHWC" else [values[0], values[3], values[1], values[2]]
    xt = tf.constant(to_format(x))
    pool = {"ksize": in_format(case["ksize"]), "strides": in_format(case["strides"]),
            "padding": _padding(case["padding"], data_format), "data_format": data_format}
    if "error" in case:
        with pytest.raises(ValueError, match="padding"):
            tf.nn.max_pool(xt, **pool)
        return
    y = tf.nn.max_pool(xt, **pool)
    grad_ys = tf.constant(to_format(array(case["grad_ys"])))
    dx = tf.gradients(y, xt, grad_ys=grad_ys)[0]
    # d(sum(dx * x))/d(grad_ys) is x at each window's maximum, the output itself (MaxPoolGradGrad, which TF
    # defines for SAME and VALID only)
    picked = tf.gradients(tf.reduce_sum(dx * xt), grad_ys)[0]
    with tf.Session() as sess:
        out, dx, picked = sess.run([y, dx, picked])
    _close(from_format(out), array(case["out"]), np.float64)
    _close(from_format(dx), array(case["dx"]), np.float64)
    _close(picked, out, np.float64)


def test_avg_pool_takes_no_padding_list_as_in_tf():
    assert CASES["avg_pool/refused"]["error"] == "TypeError"
    with pytest.raises(TypeError, match="avg_pool: padding must be 'SAME' or 'VALID'"):
        tf.nn.avg_pool(tf.zeros((1, 4, 4, 2)), [1, 2, 2, 1], [1, 1, 1, 1], [[0, 0], [1, 0], [0, 1], [0, 0]])
