"""tf.image's resizes against TF1's numbers (tests/fixtures/tf1/make_image_resize.py): every forward value equal to
TF's bit for bit (bilinear, nearest, bicubic and area; align_corners and half_pixel_centers; integer and float
inputs), the gradients to float32 rounding, and the static shapes TF infers."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

CASES = load("image_resize")
OPS = {"bilinear": tf.image.resize_bilinear, "nearest": tf.image.resize_nearest_neighbor,
       "bicubic": tf.image.resize_bicubic, "area": tf.image.resize_area}


def _cases(kind):
    return [pytest.param(case, id=name) for name, case in CASES.items() if case["kind"] == kind]


def _run(fetch, feed=None):
    with tf.Session() as s:
        return s.run(fetch, feed)


@pytest.mark.parametrize("case", _cases("op"))
def test_resize_ops_match_tf_bit_for_bit(case):
    x = array(case["x"], case["dtype"])
    out = _run(OPS[case["op"]](tf.constant(x), case["size"], **case["attrs"]))
    assert out.dtype == np.dtype(case["out_dtype"])
    np.testing.assert_array_equal(out, array(case["out"], case["out_dtype"]))


@pytest.mark.parametrize("case", _cases("grad"))
def test_resize_gradients_match_tf(case):
    x = tf.constant(array(case["x"], np.float32))
    y = OPS[case["op"]](x, case["size"], **case["attrs"])
    dx = tf.gradients(y, x, grad_ys=tf.constant(array(case["grad_ys"], np.float32)))[0]
    np.testing.assert_allclose(_run(dx), array(case["dx"]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", _cases("images"))
def test_resize_images_matches_tf(case):
    method = getattr(tf.image.ResizeMethod, case["method"])
    out = _run(tf.image.resize_images(tf.constant(array(case["x"], np.uint8)), case["size"], method=method,
                                      **case["kwargs"]))
    assert out.dtype == np.dtype(case["out_dtype"])
    np.testing.assert_array_equal(out, array(case["out"], case["out_dtype"]))


def _size(case):
    return tf.placeholder(tf.int32, [2]) if case["size"] is None else case["size"]


@pytest.mark.parametrize("case", _cases("shape"))
def test_resize_ops_infer_tf_static_shapes(case):
    out = OPS[case["op"]](tf.placeholder(tf.float32, case["shape"]), _size(case))
    assert out.shape.as_list() == case["out_shape"]


@pytest.mark.parametrize("case", _cases("images_shape"))
def test_resize_images_infers_tf_static_shapes(case):
    method = getattr(tf.image.ResizeMethod, case["method"])
    out = tf.image.resize_images(tf.placeholder(tf.uint8, case["shape"]), _size(case), method=method)
    assert out.shape.as_list() == case["out_shape"]
    assert out.dtype.name == case["out_dtype"]
