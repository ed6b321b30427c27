"""Pixel conversions that TF builds from other ops: convert_image_dtype, rgb_to_grayscale, grayscale_to_rgb and
per_image_standardization (differentiable wherever their ops are).

``convert_image_dtype`` follows TF: integers scale by the ratio of the dtypes' maxima (floor division going
down), integer to float multiplies by 1 / max, float to integer multiplies by max + 0.5 and truncates.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops, comparison_ops, concat_split_ops, control_flow_ops, fill_ops, logging_ops, math_ops, pad_tile_ops,
    reduction_ops, shape_ops, unary_math_ops,
)

__all__ = ["convert_image_dtype", "rgb_to_grayscale", "grayscale_to_rgb", "per_image_standardization"]

_GRAY_WEIGHTS = [0.2989, 0.5870, 0.1140]


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``image`` in ``dtype``, rescaled: floats span [0, 1], integers [0, dtype.max]."""
    image = convert_to_tensor(image, name="image")
    dtype = dtypes.as_dtype(dtype)
    for what, t in (("dtype", dtype), ("image dtype", image.dtype)):
        if not (t.is_floating or t.is_integer):
            raise AttributeError(f"convert_image_dtype: {what} must be floating point or integer, got {t.name}")
    if dtype == image.dtype:
        return array_ops.identity(image, name=name)
    cast = unary_math_ops.saturate_cast if saturate else unary_math_ops.cast
    with graph_mod.name_scope(name, "convert_image", [image]) as scope:
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = image.dtype.max, dtype.max
            if scale_in > scale_out:
                return cast(math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1)), dtype, name=scope)
            return math_ops.multiply(cast(image, dtype), (scale_out + 1) // (scale_in + 1), name=scope)
        if image.dtype.is_floating and dtype.is_floating:
            return unary_math_ops.cast(image, dtype, name=scope)
        if image.dtype.is_integer:
            return math_ops.multiply(unary_math_ops.cast(image, dtype), 1.0 / image.dtype.max, name=scope)
        return cast(math_ops.multiply(image, dtype.max + 0.5), dtype, name=scope)


def rgb_to_grayscale(images, name=None):
    """RGB images (last dimension 3) as one-channel luma 0.2989 R + 0.5870 G + 0.1140 B, in the input dtype."""
    with graph_mod.name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        flt = convert_image_dtype(images, dtypes.float32)
        weights = convert_to_tensor(_GRAY_WEIGHTS, dtype=dtypes.float32)
        gray = reduction_ops.reduce_sum(flt * weights, axis=-1, keepdims=True)
        return convert_image_dtype(gray, images.dtype, name=scope)


def grayscale_to_rgb(images, name=None):
    """One-channel images (last dimension 1) repeated into 3 channels."""
    with graph_mod.name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"grayscale_to_rgb: a grayscale image must be at least two-dimensional, got {shape}")
        if shape.ndims is not None and shape[-1].value is not None:
            if shape[-1].value != 1:
                raise ValueError(f"grayscale_to_rgb: the last dimension of a grayscale image must be 1, got {shape}")
        else:
            check = logging_ops.Assert(comparison_ops.equal(shape_ops.shape(images)[-1], 1),
                                       ["Last dimension of a grayscale image should be size 1."])
            images = control_flow_ops.with_dependencies([check], images)
        multiples = concat_split_ops.concat([fill_ops.ones(shape_ops.expand_dims(shape_ops.rank(images) - 1, 0),
                                                     dtype=dtypes.int32), [3]], 0)
        rgb = pad_tile_ops.tile(images, multiples, name=scope)
        if shape.ndims is not None:
            rgb.set_shape(shape[:-1].concatenate([3]))
        return rgb


def per_image_standardization(image):
    """Each image scaled to mean 0 and variance 1 over its height, width and channels, as float32.

    The divisor is max(stddev, 1 / sqrt(number of values)), so a uniform image does not divide by zero.
    """
    with graph_mod.name_scope(None, "per_image_standardization", [image]) as scope:
        image = convert_to_tensor(image, name="image")
        if image.shape.ndims is not None and image.shape.ndims < 3:
            raise ValueError(f"per_image_standardization: 'image' must be at least three-dimensional, got shape "
                             f"{image.shape}")
        image = unary_math_ops.cast(image, dtypes.float32)
        count = reduction_ops.reduce_prod(shape_ops.shape(image)[-3:])
        mean = reduction_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        stddev = reduction_ops.reduce_std(image, axis=[-1, -2, -3], keepdims=True)
        floor = unary_math_ops.rsqrt(unary_math_ops.cast(count, dtypes.float32))
        return math_ops.divide(image - mean, math_ops.maximum(stddev, floor), name=scope)
