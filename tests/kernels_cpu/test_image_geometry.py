"""tf.image's flips, rotations, crops and pads against TF1 (tests/fixtures/tf1/make_image_geometry.py), fed and
captured the ways programs write them, and the random flips' distribution and seeding."""

import numpy as np
import pytest
from tf1_fixtures import array, load

import tensorweave as tf

CASES = load("image_geometry")


def _cases(kind):
    return [pytest.param(case, id=name) for name, case in CASES.items() if case["kind"] == kind]


def _run(fetch, feed=None):
    with tf.Session() as s:
        return s.run(fetch, feed)


@pytest.mark.parametrize("case", _cases("value"))
def test_geometry_matches_tf(case):
    x = array(case["x"], np.int32)
    np.testing.assert_array_equal(_run(getattr(tf.image, case["fn"])(tf.constant(x), *case["args"])),
                                  array(case["out"], np.int32))


@pytest.mark.parametrize("case", _cases("value"))
def test_geometry_matches_tf_with_unknown_dimensions_fed(case):
    x = array(case["x"], np.int32)
    image = tf.placeholder(tf.int32, [None] * x.ndim)
    np.testing.assert_array_equal(_run(getattr(tf.image, case["fn"])(image, *case["args"]), {image: x}),
                                  array(case["out"], np.int32))


@pytest.mark.parametrize("case", _cases("shape"))
def test_geometry_infers_tf_static_shapes(case):
    args = [tf.placeholder(tf.int32, []) if a == "fed" else a for a in case["args"]]
    out = getattr(tf.image, case["fn"])(tf.placeholder(tf.float32, case["shape"]), *args)
    assert (out.shape.as_list() if out.shape.ndims is not None else None) == case["out_shape"]


def test_flip_of_unknown_rank_picks_the_rank_at_run_time():
    image = tf.placeholder(tf.int32)
    flipped = tf.image.flip_left_right(image)
    x3 = np.arange(12).reshape(2, 3, 2)
    np.testing.assert_array_equal(_run(flipped, {image: x3}), x3[:, ::-1])
    np.testing.assert_array_equal(_run(flipped, {image: x3[None]}), x3[None, :, ::-1])


def test_crop_checks_fed_offsets_at_run_time():
    image = tf.placeholder(tf.float32, [4, 4, 1])
    offset = tf.placeholder(tf.int32, [])
    crop = tf.image.crop_to_bounding_box(image, offset, 0, 3, 3)
    _run(crop, {image: np.zeros((4, 4, 1)), offset: 1})
    with pytest.raises(tf.errors.InvalidArgumentError, match="height must be >= target \\+ offset"):
        _run(crop, {image: np.zeros((4, 4, 1)), offset: 2})
    with pytest.raises(ValueError, match="width must be >= target \\+ offset"):
        tf.image.crop_to_bounding_box(image, 0, 2, 3, 3)


def test_crops_inside_a_cond_and_a_loop_capture_the_image():
    image = tf.constant(np.arange(36, dtype=np.float32).reshape(6, 6, 1))
    pick = tf.placeholder(tf.bool, [])
    out = tf.cond(pick, lambda: tf.image.central_crop(image, 0.5), lambda: tf.image.resize_image_with_crop_or_pad(
        image, 3, 3))
    grid = np.arange(36).reshape(6, 6)
    np.testing.assert_array_equal(_run(out, {pick: True})[..., 0], grid[1:5, 1:5])
    np.testing.assert_array_equal(_run(out, {pick: False})[..., 0], grid[1:4, 1:4])
    total = tf.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc + tf.reduce_sum(
        tf.image.rot90(image, i))), [0, 0.0])[1]
    assert _run(total) == 3 * np.arange(36).sum()


def test_geometry_differentiates_through_its_array_ops():
    image = tf.constant(np.ones((4, 5, 1), np.float32))
    out = tf.image.pad_to_bounding_box(tf.image.flip_up_down(tf.image.transpose_image(image)), 1, 1, 7, 7)
    np.testing.assert_array_equal(_run(tf.gradients(tf.reduce_sum(out * 2.0), image)[0]), np.full((4, 5, 1), 2.0))


@pytest.mark.parametrize("fn, axis", [(tf.image.random_flip_left_right, 1), (tf.image.random_flip_up_down, 0)])
def test_random_flips_flip_half_the_time_and_repeat_under_a_seed(fn, axis):
    tf.set_random_seed(3)
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    single = fn(tf.constant(x), seed=9)
    batch = fn(tf.constant(np.stack([x] * 64)), seed=9)
    with tf.Session() as s:
        flips = [not np.array_equal(s.run(single), x) for _ in range(200)]
        batch_value = s.run(batch)
    flipped = np.flip(x, axis)
    assert all(np.array_equal(b, x) or np.array_equal(b, flipped) for b in batch_value)
    assert 70 < sum(flips) < 130
    assert 16 < sum(np.array_equal(b, flipped) for b in batch_value) < 48
    with tf.Session() as s:
        assert [not np.array_equal(s.run(single), x) for _ in range(200)] == flips
