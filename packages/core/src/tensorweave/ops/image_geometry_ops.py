"""Flips, rotations, crops and pads of 3-D images and 4-D batches, built from array ops as TF 1.15 builds them
(differentiable through those ops). Sizes and offsets may be Python ints or tensors; static shapes come out as
TF infers them, and checks TF makes while building are made here too, with the rest as run-time asserts.
"""

import numbers

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    comparison_ops, concat_split_ops, control_flow_ops, logging_ops, math_ops, pad_tile_ops, random_ops,
    reduction_ops, shape_ops, slicing_ops, transpose_ops, unary_math_ops,
)
from tensorweave.ops import cond as cond_mod

__all__ = ["flip_left_right", "flip_up_down", "random_flip_left_right", "random_flip_up_down", "rot90",
           "transpose_image", "crop_to_bounding_box", "pad_to_bounding_box", "resize_image_with_crop_or_pad",
           "central_crop"]


def _checked_image(image, what):
    """``image`` as a tensor of rank 3 or 4 (or unknown), with TF's "inner 3 dims must be > 0" rule."""
    image = convert_to_tensor(image, name="image")
    shape = image.shape
    if shape.ndims is not None and shape.ndims < 3:
        raise ValueError(f"{what}: 'image' (shape {shape}) must be at least three-dimensional")
    if shape.ndims is not None and any(d.value == 0 for d in shape[-3:]):
        raise ValueError(f"{what}: inner 3 dims of 'image.shape' must be > 0: {shape}")
    return image


def _by_rank(image, rank3, rank4, what):
    """rank3(image) or rank4(image) by the static rank, or a tf.cond on the rank when it is unknown."""
    ndims = image.shape.ndims
    if ndims is None:
        return cond_mod.cond(comparison_ops.equal(shape_ops.rank(image), 3), lambda: rank3(image),
                                     lambda: rank4(image))
    if ndims not in (3, 4):
        raise ValueError(f"{what}: 'image' (shape {image.shape}) must have either 3 or 4 dimensions")
    return rank3(image) if ndims == 3 else rank4(image)


def _fix_flip_shape(image, result):
    result.set_shape([None, None, None] if image.shape.ndims is None else image.shape)
    return result


def _flip(image, axis, scope_name):
    with graph_mod.name_scope(None, scope_name, [image]):
        image = _checked_image(image, scope_name)
        return _by_rank(image, lambda im: _fix_flip_shape(im, transpose_ops.reverse(im, [axis])),
                        lambda im: transpose_ops.reverse(im, [axis + 1]), scope_name)


def flip_left_right(image):
    """The image (or each image of a batch) mirrored horizontally."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image):
    """The image (or each image of a batch) mirrored vertically."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image, axis, seed, scope_name):
    with graph_mod.name_scope(None, scope_name, [image]) as scope:
        image = _checked_image(image, scope_name)

        def rank3(im):
            mirror = comparison_ops.less(random_ops.random_uniform([], 0, 1.0, seed=seed), 0.5)
            result = cond_mod.cond(mirror, lambda: transpose_ops.reverse(im, [axis]), lambda: im, name=scope)
            return _fix_flip_shape(im, result)

        def rank4(im):  # each image of the batch flips with probability 1/2
            batch = shape_ops.shape(im)[0]
            draws = random_ops.random_uniform(concat_split_ops.stack([batch]), 0, 1.0, seed=seed)
            flips = unary_math_ops.cast(unary_math_ops.round(shape_ops.reshape(draws, [batch, 1, 1, 1])), im.dtype)
            return flips * transpose_ops.reverse(im, [axis + 1]) + (1 - flips) * im

        return _by_rank(image, rank3, rank4, scope_name)


def random_flip_left_right(image, seed=None):
    """The image mirrored horizontally with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """The image mirrored vertically with probability 1/2 (each image of a batch on its own)."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def rot90(image, k=1, name=None):
    """The image (or batch) rotated counter-clockwise by ``k`` quarter turns (``k`` may be a tensor)."""
    with graph_mod.name_scope(name, "rot90", [image, k]) as scope:
        image = _checked_image(image, "rot90")
        k = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        k.shape.assert_has_rank(0)
        k = math_ops.mod(k, 4)

        def rotations(im, h, w, perm):
            return [(comparison_ops.equal(k, 1), lambda: transpose_ops.transpose(transpose_ops.reverse(im, [w]), perm)),
                    (comparison_ops.equal(k, 2), lambda: transpose_ops.reverse(im, [h, w])),
                    (comparison_ops.equal(k, 3), lambda: transpose_ops.reverse(transpose_ops.transpose(im, perm), [w]))]

        def rank3(im):
            result = cond_mod.case(rotations(im, 0, 1, [1, 0, 2]), default=lambda: im, exclusive=True, name=scope)
            result.set_shape([None, None, im.shape[2]])
            return result

        def rank4(im):
            result = cond_mod.case(rotations(im, 1, 2, [0, 2, 1, 3]), default=lambda: im, exclusive=True, name=scope)
            result.set_shape([result.shape[0], None, None, result.shape[3]])
            return result

        return _by_rank(image, rank3, rank4, "rot90")


def transpose_image(image, name=None):
    """The image (or each image of a batch) with height and width swapped."""
    with graph_mod.name_scope(name, "transpose", [image]):
        image = _checked_image(image, "transpose_image")
        return _by_rank(image, lambda im: transpose_ops.transpose(im, [1, 0, 2], name=name),
                        lambda im: transpose_ops.transpose(im, [0, 2, 1, 3], name=name), "transpose_image")


# ---- crops and pads -------------------------------------------------------------------------------------------------
def _as_batch(image, what):
    """(4-D image, is_batch) as TF's crop/pad functions take it; an unknown rank is taken as one 3-D image."""
    image = convert_to_tensor(image, name="image")
    ndims = image.shape.ndims
    if ndims == 4:
        return image, True
    if ndims not in (None, 3):
        raise ValueError(f"{what}: 'image' (shape {image.shape}) must have either 3 or 4 dimensions")
    batch = shape_ops.expand_dims(image, 0)
    if ndims is None:
        batch.set_shape([None] * 4)
    return batch, False


def _dims(image):
    """The four dimensions of a 4-D image: static ints where known, scalar tensors otherwise."""
    static = image.shape.as_list()
    if None not in static:
        return static
    dynamic = concat_split_ops.unstack(shape_ops.shape(image), 4)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def _static(value):
    """A Python int for ints and constant tensors; None for tensors known only at run time."""
    if isinstance(value, numbers.Integral):
        return int(value)
    const = constant_value(value) if is_tensor_like(value) else None
    return None if const is None else int(const)


def _checks(image, conditions, what):
    """``image`` after the (condition, message) checks: static ones raise now, dynamic ones become asserts."""
    asserts = []
    for condition, message in conditions:
        if is_tensor_like(condition):
            asserts.append(logging_ops.Assert(condition, [f"{what}: {message}"]))
        elif not condition:
            raise ValueError(f"{what}: {message}")
    return control_flow_ops.with_dependencies(asserts, image) if asserts else image


def _positive_inner_dims(image, what):
    if image.shape[-3:].is_fully_defined():
        if any(d.value == 0 for d in image.shape[-3:]):
            raise ValueError(f"{what}: inner 3 dims of 'image.shape' must be > 0: {image.shape}")
        return []
    return [(reduction_ops.reduce_all(comparison_ops.greater(shape_ops.shape(image)[-3:], 0)),
             "inner 3 dims of 'image.shape' must be > 0.")]


def _finish(result, shape, is_batch):
    result.set_shape([None if is_tensor_like(d) else d for d in shape])
    return result if is_batch else shape_ops.squeeze(result, axis=[0])


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``target_height`` x ``target_width`` window at (``offset_height``, ``offset_width``) of each image."""
    what = "crop_to_bounding_box"
    with graph_mod.name_scope(None, what, [image]):
        image, is_batch = _as_batch(image, what)
        batch, height, width, depth = _dims(image)
        image = _checks(image, _positive_inner_dims(image, what) + [
            (offset_width >= 0, "offset_width must be >= 0."), (offset_height >= 0, "offset_height must be >= 0."),
            (target_width > 0, "target_width must be > 0."), (target_height > 0, "target_height must be > 0."),
            (width >= (target_width + offset_width), "width must be >= target + offset."),
            (height >= (target_height + offset_height), "height must be >= target + offset.")], what)
        shape = shape_ops.shape(image)
        cropped = slicing_ops.slice(image, concat_split_ops.stack([0, offset_height, offset_width, 0]),
                                  concat_split_ops.stack([shape[0], target_height, target_width, shape[3]]))
        return _finish(cropped, [batch, target_height, target_width, depth], is_batch)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Each image zero-padded to ``target_height`` x ``target_width``, its top-left at the offsets."""
    what = "pad_to_bounding_box"
    with graph_mod.name_scope(None, what, [image]):
        image, is_batch = _as_batch(image, what)
        batch, height, width, depth = _dims(image)
        after_width = target_width - offset_width - width
        after_height = target_height - offset_height - height
        image = _checks(image, _positive_inner_dims(image, what) + [
            (offset_height >= 0, "offset_height must be >= 0"), (offset_width >= 0, "offset_width must be >= 0"),
            (after_width >= 0, "width must be <= target - offset"),
            (after_height >= 0, "height must be <= target - offset")], what)
        paddings = shape_ops.reshape(concat_split_ops.stack([0, 0, offset_height, after_height, offset_width, after_width,
                                                      0, 0]), [4, 2])
        padded = pad_tile_ops.pad(image, paddings)
        return _finish(padded, [batch, target_height, target_width, depth], is_batch)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """Each image centrally cropped and/or zero-padded to ``target_height`` x ``target_width``."""
    what = "resize_image_with_crop_or_pad"
    with graph_mod.name_scope(None, what, [image]):
        image, is_batch = _as_batch(image, what)
        image = _checks(image, _positive_inner_dims(image, what) + [
            (target_width > 0, "target_width must be > 0."), (target_height > 0, "target_height must be > 0.")],
            what)
        either = (lambda f, g: lambda x, y: f(x, y) if is_tensor_like(x) or is_tensor_like(y) else g(x, y))
        max_, min_ = either(math_ops.maximum, max), either(math_ops.minimum, min)
        _, height, width, _ = _dims(image)
        width_diff, height_diff = target_width - width, target_height - height
        cropped = crop_to_bounding_box(image, max_(-height_diff // 2, 0), max_(-width_diff // 2, 0),
                                       min_(target_height, height), min_(target_width, width))
        resized = pad_to_bounding_box(cropped, max_(height_diff // 2, 0), max_(width_diff // 2, 0), target_height,
                                      target_width)
        return resized if is_batch else shape_ops.squeeze(resized, axis=[0])


def central_crop(image, central_fraction):
    """The central ``central_fraction`` (in (0, 1]) of each image's height and width."""
    with graph_mod.name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        fraction = constant_value(central_fraction) if is_tensor_like(central_fraction) else central_fraction
        if fraction is not None:
            if not 0.0 < fraction <= 1.0:
                raise ValueError(f"central_crop: central_fraction must be within (0, 1], got {fraction}")
            if fraction == 1.0:
                return image
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"central_crop: 'image' should have rank 3 or 4, got shape {image.shape}")
        first = rank - 3
        shape = shape_ops.shape(image)
        sizes, starts, static = [], [], []
        for axis in (first, first + 1):
            dim = image.shape[axis].value
            if dim is not None and fraction is not None:
                start = int((float(dim) - float(dim) * fraction) / 2)
                static.append(dim - 2 * start)
            else:
                extent = unary_math_ops.cast(shape[axis] if dim is None else dim, dtypes.float64)
                start = unary_math_ops.cast((extent - extent * unary_math_ops.cast(central_fraction, dtypes.float64)) / 2,
                                      dtypes.int32)
                static.append(None)
            starts.append(start)
            sizes.append((shape[axis] if dim is None else dim) - start * 2)
        begin = concat_split_ops.stack(([0] if rank == 4 else []) + starts + [0])
        size = concat_split_ops.stack(([-1] if rank == 4 else []) + sizes + [-1])
        cropped = slicing_ops.slice(image, begin, size)
        cropped.set_shape(([image.shape[0]] if rank == 4 else []) + static + [image.shape[-1]])
        return cropped
