"""Color: RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustHue and AdjustSaturation, and the tf.image functions over them
(adjust_* and random_*, as TF 1.15 builds them).

Integer images are adjusted in float32 (``convert_image_dtype``) and converted back; brightness and contrast
saturate on the way back, as TF's do. The random adjustments draw their factor with ``random_uniform`` under the
graph- and op-level seeds, so a seeded graph repeats its draws.
"""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.ops.image_convert_ops import convert_image_dtype
from tensorweave.ops import (
    comparison_ops, control_flow_ops, logging_ops, math_ops, random_ops, reduction_ops, unary_math_ops,
)

DEFS = OpDefList()

__all__ = ["rgb_to_hsv", "hsv_to_rgb", "adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue",
           "adjust_saturation", "random_brightness", "random_contrast", "random_hue", "random_saturation"]

_COLOR_TYPES = "T: {float16, float32, float64} = float32"
_ADJUST_TYPES = "T: {float16, float32} = float32"


def _colorspace_shape(op):
    shape = op.inputs[0].shape.with_rank_at_least(1)
    if shape.ndims is not None and shape[-1].value not in (None, 3):
        raise ValueError(f"{op.type}: the last dimension must be 3 (the color channels), got shape {shape}")
    return shape


def _adjust_shape(op):
    shape = op.inputs[0].shape.with_rank_at_least(3)
    if not op.inputs[1].shape.is_compatible_with([]):
        raise ValueError(f"{op.type}: {op.op_def.input_args[1].name} must be a scalar, got shape {op.inputs[1].shape}")
    return shape


RGB_TO_HSV = DEFS.define("RGBToHSV", inputs=["images: T"], outputs=["output: T"], attrs=[_COLOR_TYPES],
                         shape_fn=_colorspace_shape, doc="RGB in [0, 1] to hue, saturation, value in [0, 1].")
HSV_TO_RGB = DEFS.define("HSVToRGB", inputs=["images: T"], outputs=["output: T"], attrs=[_COLOR_TYPES],
                         shape_fn=_colorspace_shape, grad=NOT_DIFFERENTIABLE,
                         doc="Hue, saturation, value in [0, 1] to RGB.")
ADJUST_CONTRAST = DEFS.define(
    "AdjustContrastv2", inputs=["images: T", "contrast_factor: float32"], outputs=["output: T"],
    attrs=[_ADJUST_TYPES], shape_fn=_adjust_shape,
    doc="(x - mean) * contrast_factor + mean, the mean of each channel over each image's height and width.")
ADJUST_HUE = DEFS.define("AdjustHue", inputs=["images: T", "delta: float32"], outputs=["output: T"],
                         attrs=[_ADJUST_TYPES], shape_fn=_adjust_shape,
                         doc="Rotates the hue of RGB pixels by delta (a fraction of the color circle).")
ADJUST_SATURATION = DEFS.define("AdjustSaturation", inputs=["images: T", "scale: float32"], outputs=["output: T"],
                                attrs=[_ADJUST_TYPES], shape_fn=_adjust_shape,
                                doc="Multiplies the saturation of RGB pixels by scale, clipped to [0, 1].")


@ADJUST_CONTRAST.set_gradient
def _adjust_contrast_grad(op, grad):
    """Linear in the image: dx = f * g + (1 - f) * mean(g); d factor = sum(g * (x - mean(x))) (TF has none)."""
    images, factor = op.inputs
    axes = [-3, -2]
    factor_t = unary_math_ops.cast(factor, grad.dtype)
    grad_mean = reduction_ops.reduce_mean(grad, axis=axes, keepdims=True)
    dx = factor_t * grad + (1 - factor_t) * grad_mean
    centered = images - reduction_ops.reduce_mean(images, axis=axes, keepdims=True)
    dfactor = unary_math_ops.cast(reduction_ops.reduce_sum(grad * centered), dtypes.float32)
    return [dx, dfactor]


# ---- wrappers -------------------------------------------------------------------------------------------------------
def rgb_to_hsv(images, name=None):
    """RGB images (last dimension 3, floats in [0, 1]) as hue, saturation and value."""
    return apply_op("RGBToHSV", [convert_to_tensor(images, name="images")], name=name or "RGBToHSV")


def hsv_to_rgb(images, name=None):
    """HSV images (last dimension 3) as RGB."""
    return apply_op("HSVToRGB", [convert_to_tensor(images, name="images")], name=name or "HSVToRGB")


def _as_float(image):
    """The image itself when float16/float32, else converted to float32 in [0, 1] (TF's adjust_* rule)."""
    return image if image.dtype in (dtypes.float16, dtypes.float32) else convert_image_dtype(image, dtypes.float32)


def adjust_brightness(image, delta):
    """``image + delta`` (in [0, 1] units for integer images, which saturate)."""
    with graph_mod.name_scope(None, "adjust_brightness", [image, delta]) as scope:
        image = convert_to_tensor(image, name="image")
        flt = _as_float(image)
        adjusted = math_ops.add(flt, unary_math_ops.cast(delta, flt.dtype), name=scope)
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """Each channel of each image moved away from (factor > 1) or toward (< 1) its mean by ``contrast_factor``."""
    with graph_mod.name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        images = convert_to_tensor(images, name="images")
        factor = convert_to_tensor(contrast_factor, dtype=dtypes.float32, name="contrast_factor")
        adjusted = apply_op("AdjustContrastv2", [_as_float(images), factor], name=scope)
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def adjust_gamma(image, gamma=1, gain=1):
    """``gain * image ** gamma`` (on [0, 1] for integer images); gamma must be non-negative."""
    with graph_mod.name_scope(None, "adjust_gamma", [image, gamma, gain]):
        image = convert_to_tensor(image, name="image")
        flt = _as_float(image)
        if is_tensor_like(gamma):
            check = logging_ops.Assert(comparison_ops.greater_equal(gamma, 0),
                                       ["Gamma should be a non-negative real number."])
            gamma = control_flow_ops.with_dependencies([check], gamma)
        elif gamma < 0:
            raise ValueError(f"adjust_gamma: gamma should be a non-negative real number, got {gamma}")
        adjusted = gain * flt ** gamma
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


def _color_op(op_type, scope_name, image, factor, name):
    with graph_mod.name_scope(name, scope_name, [image]) as scope:
        image = convert_to_tensor(image, name="image")
        factor = convert_to_tensor(factor, dtype=dtypes.float32)
        adjusted = apply_op(op_type, [_as_float(image), factor], name=op_type)
        return convert_image_dtype(adjusted, image.dtype, name=scope)


def adjust_hue(image, delta, name=None):
    """RGB images with their hue rotated by ``delta`` in [-1, 1] (a fraction of the color circle)."""
    return _color_op("AdjustHue", "adjust_hue", image, delta, name)


def adjust_saturation(image, saturation_factor, name=None):
    """RGB images with their saturation multiplied by ``saturation_factor`` (clipped to [0, 1])."""
    return _color_op("AdjustSaturation", "adjust_saturation", image, saturation_factor, name)


def _uniform(low, high, seed):
    return random_ops.random_uniform([], low, high, seed=seed)


def _check_range(lower, upper, what):
    if upper <= lower:
        raise ValueError(f"{what}: upper ({upper}) must be > lower ({lower}).")
    if lower < 0:
        raise ValueError(f"{what}: lower ({lower}) must be non-negative.")


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError(f"random_brightness: max_delta ({max_delta}) must be non-negative.")
    return adjust_brightness(image, _uniform(-max_delta, max_delta, seed))


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    _check_range(lower, upper, "random_contrast")
    return adjust_contrast(image, _uniform(lower, upper, seed))


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta); max_delta at most 0.5."""
    if not 0 <= max_delta <= 0.5:
        raise ValueError(f"random_hue: max_delta ({max_delta}) must be in [0, 0.5].")
    return adjust_hue(image, _uniform(-max_delta, max_delta, seed))


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn uniformly from [lower, upper)."""
    _check_range(lower, upper, "random_saturation")
    return adjust_saturation(image, _uniform(lower, upper, seed))

