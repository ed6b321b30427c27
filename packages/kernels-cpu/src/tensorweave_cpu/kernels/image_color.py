"""Kernels of the color ops, reproducing TF's CPU kernels' float32 arithmetic step by step (vectorized).

RGBToHSV and HSVToRGB follow TF's Eigen expressions in the input type; AdjustHue and AdjustSaturation follow
its per-pixel float code (including the double-precision constants AdjustSaturation adds); AdjustContrastv2
sums each channel by TF's halving folds, so even its mean rounds as TF's does. Divisions by zero are steered
around with ``where``, never left to raise floating-point warnings.
"""

import numpy as np

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"RGBToHSV", "HSVToRGB", "AdjustContrastv2", "AdjustHue", "AdjustSaturation"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""

_F32 = np.float32


def _rgb(images, op_type):
    if images.ndim < 1 or images.shape[-1] != 3:
        raise errors.InvalidArgumentError(None, None, f"{op_type}: input must have 3 channels in its last dimension, "
                                                      f"got shape {list(images.shape)}")
    return images[..., 0], images[..., 1], images[..., 2]


def _safe(divisor, usable, xp):
    return xp.where(usable, divisor, divisor.dtype.type(1))


@KERNELS.register("RGBToHSV", dtypes=["float16", "float32", "float64"])
def _rgb_to_hsv(images, *, xp):
    red, green, blue = _rgb(images, "RGBToHSV")
    one = images.dtype.type(1)
    value = xp.maximum(xp.maximum(red, green), blue)
    spread = value - xp.minimum(xp.minimum(red, green), blue)
    saturation = xp.where(value > 0, spread / _safe(value, value > 0, xp), images.dtype.type(0))
    norm = (one / _safe(spread, spread != 0, xp)) * (one / images.dtype.type(6))
    hue = xp.where(red == value, norm * (green - blue),
                   xp.where(green == value, norm * (blue - red) + images.dtype.type(2) / images.dtype.type(6),
                            norm * (red - green) + images.dtype.type(4) / images.dtype.type(6)))
    hue = xp.where(spread > 0, hue, images.dtype.type(0))
    hue = xp.where(hue < 0, hue + one, hue)
    return xp.stack([hue, saturation, value], axis=-1)


@KERNELS.register("HSVToRGB", dtypes=["float16", "float32", "float64"])
def _hsv_to_rgb(images, *, xp):
    hue, saturation, value = _rgb(images, "HSVToRGB")
    t = images.dtype.type
    dh = hue * t(6)
    red = xp.clip(xp.abs(dh - t(3)) - t(1), t(0), t(1))
    green = xp.clip(-xp.abs(dh - t(2)) + t(2), t(0), t(1))
    blue = xp.clip(-xp.abs(dh - t(4)) + t(2), t(0), t(1))
    one_minus_s = -saturation + t(1)
    return xp.stack([(one_minus_s + saturation * c) * value for c in (red, green, blue)], axis=-1)


def _image_planes(images, op_type):
    if images.ndim < 3:
        raise errors.InvalidArgumentError(None, None, f"{op_type}: input must be at least 3-D, got shape "
                                                      f"{list(images.shape)}")
    height, width, channels = images.shape[-3:]
    return images.reshape((-1, height * width, channels)).astype(_F32)


def _folded_sum(planes):
    """TF's ReduceMeanAcrossImage sum: repeatedly add the second half of the pixels onto the first."""
    remaining = planes.shape[1]
    total = planes
    while True:
        right = remaining // 2
        left = remaining - right
        folded = total[:, :left].copy()
        folded[:, :right] = total[:, left:left + right] + total[:, :right]
        total, remaining = folded, left
        if remaining <= 1:
            return total[:, 0]


@KERNELS.register("AdjustContrastv2", dtypes=["float16", "float32"])
def _adjust_contrast(images, contrast_factor, *, xp):
    planes = _image_planes(images, "AdjustContrastv2")
    mean = _folded_sum(planes) * (_F32(1) / _F32(planes.shape[1]))
    mean = mean[:, None, :]
    factor = contrast_factor.astype(xp.float32)
    return (mean + factor * (planes - mean)).reshape(images.shape).astype(images.dtype)


def _hue_ranges(red, green, blue, xp):
    """TF's rgb_to_hv_range: hue in [0, 6), and the smallest and largest channel, from its if/else tree."""
    r_lt_g = red < green
    cases = [  # (when, v_max, v_mid, v_min, category) in TF's branch order
        (r_lt_g & (blue < red), green, red, blue, 1),
        (r_lt_g & ~(blue < red) & (blue > green), blue, green, red, 3),
        (r_lt_g & ~(blue < red) & ~(blue > green), green, blue, red, 2),
        (~r_lt_g & (blue < green), red, green, blue, 0),
        (~r_lt_g & ~(blue < green) & (blue > red), blue, red, green, 4),
        (~r_lt_g & ~(blue < green) & ~(blue > red), red, blue, green, 5),
    ]
    v_max, v_mid, v_min, category = red, red, red, xp.zeros(red.shape, _F32)
    for when, high, mid, low, cat in cases:
        v_max, v_mid, v_min = xp.where(when, high, v_max), xp.where(when, mid, v_mid), xp.where(when, low, v_min)
        category = xp.where(when, _F32(cat), category)
    spread = v_max - v_min
    ratio = (v_mid - v_min) / _safe(spread, spread != 0, xp)
    odd = (category.astype(xp.int32) & 1) == 1
    hue = xp.where(spread != 0, category + xp.where(odd, _F32(1) - ratio, ratio), _F32(0))
    return hue, v_min, v_max


def _rgb_from_hue_ranges(hue, v_min, v_max, xp):
    """TF's hv_range_to_rgb."""
    category = hue.astype(xp.int32)
    ratio = hue - category.astype(_F32)
    ratio = xp.where((category & 1) == 1, _F32(1) - ratio, ratio)
    v_mid = v_min + ratio * (v_max - v_min)
    table = [(v_max, v_mid, v_min), (v_mid, v_max, v_min), (v_min, v_max, v_mid), (v_min, v_mid, v_max),
             (v_mid, v_min, v_max), (v_max, v_min, v_mid)]
    channels = list(table[5])
    for cat in range(5):
        channels = [xp.where(category == cat, table[cat][k], channels[k]) for k in range(3)]
    return channels


@KERNELS.register("AdjustHue", dtypes=["float16", "float32"])
def _adjust_hue(images, delta, *, xp):
    red, green, blue = _rgb(images.astype(_F32), "AdjustHue")
    hue, v_min, v_max = _hue_ranges(red, green, blue, xp)
    hue = hue + delta.astype(xp.float32) * _F32(6)
    while bool((hue < 0).any()):
        hue = xp.where(hue < 0, hue + _F32(6), hue)
    while bool((hue >= 6).any()):
        hue = xp.where(hue >= 6, hue - _F32(6), hue)
    return xp.stack(_rgb_from_hue_ranges(hue, v_min, v_max, xp), axis=-1).astype(images.dtype)


def _rgb_to_hsv_float(red, green, blue, xp):
    """TF's per-pixel rgb_to_hsv of AdjustSaturation; its 2/6 and 4/6 are added in double, then rounded."""
    value = xp.maximum(red, xp.maximum(green, blue))
    spread = value - xp.minimum(red, xp.minimum(green, blue))
    saturation = xp.where(value > 0, spread / _safe(value, value > 0, xp), _F32(0))
    norm = _F32(1) / _safe(_F32(6) * spread, spread != 0, xp)
    second = (norm * (blue - red)).astype(xp.float64) + 2.0 / 6.0
    third = (norm * (red - green)).astype(xp.float64) + 4.0 / 6.0
    hue = xp.where(red == value, norm * (green - blue),
                   xp.where(green == value, second.astype(_F32), third.astype(_F32)))
    hue = xp.where(spread <= 0, _F32(0), hue)
    return xp.where(hue < 0, hue + _F32(1), hue), saturation, value


def _hsv_to_rgb_float(hue, saturation, value, xp):
    """TF's per-pixel hsv_to_rgb of AdjustSaturation."""
    chroma = saturation * value
    low = value - chroma
    dh = hue * _F32(6)
    category = dh.astype(xp.int32)
    phase = dh
    while bool((phase <= 0).any()):
        phase = xp.where(phase <= 0, phase + _F32(2), phase)
    while bool((phase >= 2).any()):
        phase = xp.where(phase >= 2, phase - _F32(2), phase)
    mid = chroma * (_F32(1) - xp.abs(phase - _F32(1)))
    zero = xp.zeros_like(chroma)
    table = [(chroma, mid, zero), (mid, chroma, zero), (zero, chroma, mid), (zero, mid, chroma), (mid, zero, chroma),
             (chroma, zero, mid)]
    channels = [zero, zero, zero]
    for cat in range(6):
        channels = [xp.where(category == cat, table[cat][k], channels[k]) for k in range(3)]
    return [c + low for c in channels]


@KERNELS.register("AdjustSaturation", dtypes=["float16", "float32"])
def _adjust_saturation(images, scale, *, xp):
    red, green, blue = _rgb(images.astype(_F32), "AdjustSaturation")
    hue, saturation, value = _rgb_to_hsv_float(red, green, blue, xp)
    saturation = xp.minimum(_F32(1), xp.maximum(_F32(0), saturation * scale.astype(xp.float32)))
    return xp.stack(_hsv_to_rgb_float(hue, saturation, value, xp), axis=-1).astype(images.dtype)
