"""tf.image's color and pixel functions against TF1's numbers (tests/fixtures/tf1/make_image_color.py), the random
adjustments' seeding and ranges, and the gradients the adjustments have."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

CASES = load("image_color")
# Float results equal TF's bit for bit, except Pow (Eigen's powf against numpy's): within one float32 ulp.
ROUNDING = {"adjust_gamma": 1.2e-7}


def _cases(kind):
    return [pytest.param(case, id=name) for name, case in CASES.items() if case["kind"] == kind]


def _kwargs(args):
    return {k: (tf.as_dtype(v) if k == "dtype" else v) for k, v in args.items()}


def _run(fetch, feed=None):
    with tf.Session() as s:
        return s.run(fetch, feed)


@pytest.mark.parametrize("case", _cases("value"))
def test_color_functions_match_tf(case):
    x = array(case["x"], case["dtype"])
    out = _run(getattr(tf.image, case["fn"])(tf.constant(x), **_kwargs(case["args"])))
    want = array(case["out"], case["out_dtype"])
    assert out.dtype == want.dtype
    tolerance = ROUNDING.get(case["fn"], 0) if want.dtype.kind == "f" else 0
    np.testing.assert_allclose(out, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("case", _cases("shape"))
def test_color_functions_infer_tf_static_shapes(case):
    image = tf.placeholder(tf.as_dtype(case["in_dtype"]), case["shape"])
    out = getattr(tf.image, case["fn"])(image, **_kwargs(case["args"]))
    assert out.shape.as_list() == case["out_shape"]
    assert out.dtype.name == case["out_dtype"]


def test_hsv_round_trip_and_uint8_adjustments_on_a_fed_image():
    image = tf.placeholder(tf.uint8, [None, None, 3])
    flt = tf.image.convert_image_dtype(image, tf.float32)
    back = tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(flt))
    pixels = np.random.RandomState(0).randint(0, 256, (6, 7, 3)).astype(np.uint8)
    got, flt_value = _run([back, flt], {image: pixels})
    np.testing.assert_allclose(got, flt_value, atol=1e-6)


@pytest.mark.parametrize("fn, args, low, high", [
    ("random_brightness", {"max_delta": 0.3}, -0.3, 0.3),
    ("random_contrast", {"lower": 0.2, "upper": 1.8}, 0.2, 1.8),
    ("random_saturation", {"lower": 0.5, "upper": 1.5}, 0.5, 1.5),
    ("random_hue", {"max_delta": 0.4}, -0.4, 0.4)])
def test_random_adjustments_draw_their_factor_uniformly_and_repeat_under_a_seed(fn, args, low, high):
    tf.set_random_seed(5)
    image = tf.placeholder(tf.float32, [2, 3, 3])
    out = getattr(tf.image, fn)(image, seed=7, **args)
    draws = [op for op in tf.get_default_graph().get_operations() if op.type == "RandomUniform"]
    assert len(draws) == 1 and (draws[0].get_attr("seed"), draws[0].get_attr("seed2")) == (5, 7)
    factor = tf.get_default_graph().get_tensor_by_name("random_uniform:0")  # the draw mapped to [low, high)
    pixels = np.random.RandomState(1).uniform(0, 1, (2, 3, 3)).astype(np.float32)
    with tf.Session() as s:
        first = s.run(out, {image: pixels})
        factors = [s.run(factor) for _ in range(400)]
    assert low <= min(factors) and max(factors) < high
    assert abs(np.mean(factors) - (low + high) / 2) < 0.1 * (high - low)
    assert len(set(factors)) == len(factors)
    with tf.Session() as s:  # a new session restarts the seeded stream
        np.testing.assert_array_equal(s.run(out, {image: pixels}), first)
        assert s.run(factor) == factors[0]


def test_random_adjustments_refuse_bad_ranges_as_tf():
    image = tf.zeros([2, 2, 3])
    with pytest.raises(ValueError, match="upper"):
        tf.image.random_contrast(image, 1.0, 0.5)
    with pytest.raises(ValueError, match="non-negative"):
        tf.image.random_saturation(image, -0.5, 0.5)
    with pytest.raises(ValueError, match="0.5"):
        tf.image.random_hue(image, 0.7)
    with pytest.raises(ValueError, match="non-negative"):
        tf.image.random_brightness(image, -0.1)


def test_adjust_contrast_gradient_matches_finite_differences():
    rs = np.random.RandomState(3)
    x0 = rs.uniform(0, 1, (2, 3, 4, 3))
    image = tf.placeholder(tf.float32, x0.shape)
    factor = tf.placeholder(tf.float32, [])
    weights = rs.uniform(-1, 1, x0.shape).astype(np.float32)
    loss = tf.reduce_sum(tf.image.adjust_contrast(image, factor) * weights)
    dx, df = tf.gradients(loss, [image, factor])
    with tf.Session() as s:
        got_dx, got_df = s.run([dx, df], {image: x0, factor: 1.7})

    def f(x, c):
        mean = x.mean(axis=(1, 2), keepdims=True)
        return ((x - mean) * c + mean) * weights
    want_dx = np.zeros_like(x0)
    for index in np.ndindex(*x0.shape):
        step = np.zeros_like(x0)
        step[index] = 1e-3
        want_dx[index] = (f(x0 + step, 1.7).sum() - f(x0 - step, 1.7).sum()) / 2e-3
    np.testing.assert_allclose(got_dx, want_dx, atol=1e-4)
    np.testing.assert_allclose(got_df, (f(x0, 1.7 + 1e-3).sum() - f(x0, 1.7 - 1e-3).sum()) / 2e-3, rtol=1e-4)


def test_brightness_and_gamma_differentiate_through_their_ops():
    image = tf.constant(np.full((2, 2, 3), 0.5, np.float32))
    loss = tf.reduce_sum(tf.image.adjust_gamma(tf.image.adjust_brightness(image, 0.1), gamma=2.0))
    np.testing.assert_allclose(_run(tf.gradients(loss, image)[0]), np.full((2, 2, 3), 1.2), rtol=1e-6)


def test_hue_and_saturation_have_no_gradient_as_in_tf():
    image = tf.constant(np.full((2, 2, 3), 0.5, np.float32))
    with pytest.raises(LookupError, match="AdjustHue"):
        tf.gradients(tf.reduce_sum(tf.image.adjust_hue(image, 0.1)), image)


def test_color_ops_name_the_channel_problem():
    with pytest.raises(ValueError, match="last dimension must be 3"):
        tf.image.rgb_to_hsv(tf.zeros([2, 2, 4]))
    with pytest.raises(ValueError, match="last dimension of a grayscale image must be 1"):
        tf.image.grayscale_to_rgb(tf.zeros([2, 2, 3]))
    image = tf.placeholder(tf.float32, [None, None, None])
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="3 channels"):
        s.run(tf.image.adjust_hue(image, 0.1), {image: np.zeros((2, 2, 4))})
