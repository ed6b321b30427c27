"""Image measures and filters that TF 1.15 builds from other ops (so their gradients follow): total_variation,
image_gradients, sobel_edges, psnr, ssim, and the YUV and YIQ color conversions (a 3x3 matrix on the channels)."""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    concat_split_ops, depthwise_conv_ops, einsum_ops, fill_ops, loss_ops, math_ops, pad_tile_ops, range_ops,
    reduction_ops, shape_ops, unary_math_ops,
)
from tensorweave.ops.image_convert_ops import convert_image_dtype

__all__ = []  # tf.image's only
IMAGE = ["total_variation", "image_gradients", "sobel_edges", "psnr", "ssim", "rgb_to_yuv", "yuv_to_rgb",
         "rgb_to_yiq", "yiq_to_rgb"]


def total_variation(images, name=None):
    """The sum of absolute differences of neighbouring pixels, per image (a scalar for one 3-D image)."""
    with graph_mod.name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        ndims = images.shape.ndims
        if ndims == 3:
            dif1, dif2, axes = images[1:, :, :] - images[:-1, :, :], images[:, 1:, :] - images[:, :-1, :], None
        elif ndims == 4:
            dif1, dif2 = images[:, 1:, :, :] - images[:, :-1, :, :], images[:, :, 1:, :] - images[:, :, :-1, :]
            axes = [1, 2, 3]
        else:
            raise ValueError(f"total_variation: images must be 3-D or 4-D, got shape {images.shape}")
        return (reduction_ops.reduce_sum(unary_math_ops.abs(dif1), axis=axes) +
                reduction_ops.reduce_sum(unary_math_ops.abs(dif2), axis=axes))


def image_gradients(image):
    """(dy, dx): forward differences of a [batch, h, w, d] image, 0 in the last row / column."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4-D [batch, height, width, depth] tensor, got {image.shape}")
    image_shape = shape_ops.shape(image)
    batch, height, width, depth = concat_split_ops.unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = concat_split_ops.concat([dy, fill_ops.zeros(concat_split_ops.stack([batch, 1, width, depth]), image.dtype)],
                                 1)
    dx = concat_split_ops.concat([dx, fill_ops.zeros(concat_split_ops.stack([batch, height, 1, depth]),
                                                     image.dtype)], 2)
    return shape_ops.reshape(dy, image_shape), shape_ops.reshape(dx, image_shape)


def sobel_edges(image):
    """The Sobel filters' responses [batch, h, w, d, 2] (dy, dx) of a 4-D image, edges reflected."""
    image = convert_to_tensor(image, name="image")
    image_shape = shape_ops.shape(image)
    kernels = np.expand_dims(np.transpose(np.asarray([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                                                      [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]), (1, 2, 0)), -2)
    filters = pad_tile_ops.tile(convert_to_tensor(kernels, dtype=image.dtype), [1, 1, image_shape[-1], 1],
                                name="sobel_filters")
    padded = pad_tile_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = depthwise_conv_ops.depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    output = shape_ops.reshape(output, concat_split_ops.concat([image_shape, [2]], 0))
    output.set_shape(image.shape.concatenate([2]))
    return output


def _as_float_images(a, b, max_val):
    a, b = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
    max_val = convert_image_dtype(unary_math_ops.cast(max_val, a.dtype), dtypes.float32)
    return convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32), max_val


def psnr(a, b, max_val, name=None):
    """The peak signal-to-noise ratio in dB of each image pair (over the last three axes)."""
    with graph_mod.name_scope(name, "PSNR", [a, b]):
        a, b, max_val = _as_float_images(a, b, max_val)
        mse = reduction_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        return math_ops.subtract(20 * unary_math_ops.log(max_val) / np.log(10.0).astype(np.float32),
                                 np.float32(10 / np.log(10)) * unary_math_ops.log(mse), name="psnr")


def _gaussian(size, sigma):
    coords = unary_math_ops.cast(range_ops.range(size), sigma.dtype)
    coords -= unary_math_ops.cast(size - 1, sigma.dtype) / 2.0
    g = unary_math_ops.square(coords) * (-0.5 / unary_math_ops.square(sigma))
    g = shape_ops.reshape(g, [1, -1]) + shape_ops.reshape(g, [-1, 1])
    return shape_ops.reshape(loss_ops.softmax(shape_ops.reshape(g, [1, -1])), [size, size, 1, 1])


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
    """The structural similarity of each image pair (11x11 Gaussian window of sigma 1.5, VALID), averaged over
    channels, as TF 1.15 computes it."""
    with graph_mod.name_scope(None, "SSIM", [img1, img2]):
        img1, img2, max_val = _as_float_images(img1, img2, max_val)
        kernel = _gaussian(filter_size, convert_to_tensor(filter_sigma, dtypes.float32))
        kernel = pad_tile_ops.tile(kernel, [1, 1, shape_ops.shape(img1)[-1], 1])

        def reducer(x):
            shape = shape_ops.shape(x)
            x = shape_ops.reshape(x, concat_split_ops.concat([[-1], shape[-3:]], 0))
            y = depthwise_conv_ops.depthwise_conv2d(x, kernel, [1, 1, 1, 1], "VALID")
            return shape_ops.reshape(y, concat_split_ops.concat([shape[:-3], shape_ops.shape(y)[1:]], 0))

        c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
        mean0, mean1 = reducer(img1), reducer(img2)
        num0 = mean0 * mean1 * 2.0
        den0 = unary_math_ops.square(mean0) + unary_math_ops.square(mean1)
        luminance = (num0 + c1) / (den0 + c1)
        num1 = reducer(img1 * img2) * 2.0
        den1 = reducer(unary_math_ops.square(img1) + unary_math_ops.square(img2))
        cs = (num1 - num0 + c2) / (den1 - den0 + c2)
        per_channel = reduction_ops.reduce_mean(luminance * cs, [-3, -2])
        return reduction_ops.reduce_mean(per_channel, [-1])


def _color_matrix(matrix, doc):
    def convert(images):
        images = convert_to_tensor(images, name="images")
        kernel = convert_to_tensor(matrix, dtype=images.dtype, name="kernel")
        return einsum_ops.tensordot(images, kernel, axes=[[images.shape.ndims - 1], [0]])
    convert.__doc__ = doc
    return convert


rgb_to_yuv = _color_matrix([[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
                            [0.114, 0.43601035, -0.10001026]], "RGB images (floats in [0, 1]) as YUV.")
yuv_to_rgb = _color_matrix([[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]],
                           "YUV images as RGB.")
rgb_to_yiq = _color_matrix([[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
                            [0.114, -0.32134392, 0.31119955]], "RGB images (floats in [0, 1]) as YIQ.")
yiq_to_rgb = _color_matrix([[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]],
                           "YIQ images as RGB.")
