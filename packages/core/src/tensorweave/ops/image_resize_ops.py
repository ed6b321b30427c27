"""Image resizing as TF1 does it: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea, their gradient
ops, and ``tf.image.resize_images`` over them.

TF1's ``align_corners=False`` maps output pixel ``i`` to input coordinate ``i * in / out`` (no half-pixel
offset), which is what TF1 programs were trained with; ``half_pixel_centers=True`` gives the TF2 mapping. The
bilinear, bicubic and area resizes return float32 for every input type; nearest neighbor keeps the dtype.
"""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.framework import graph as graph_mod
from tensorweave.ops import math_ops, shape_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["ResizeMethod", "resize_images", "resize", "resize_bilinear", "resize_nearest_neighbor", "resize_bicubic",
           "resize_area"]

_IMAGE_TYPES = "{int8, uint8, int16, uint16, int32, int64, float16, float32, float64}"
_CORNERS = ["align_corners: bool = false", "half_pixel_centers: bool = false"]


def _resize(op_type, out, doc, attrs=_CORNERS):
    return DEFS.define(op_type, inputs=["images: T", "size: int32"], outputs=[f"resized_images: {out}"],
                       attrs=[f"T: {_IMAGE_TYPES}"] + attrs, doc=doc)


RESIZE_BILINEAR = _resize("ResizeBilinear", "float32", "Bilinear interpolation of the 2x2 nearest input pixels.")
RESIZE_NEAREST_NEIGHBOR = _resize("ResizeNearestNeighbor", "T", "The input pixel each output pixel maps to.")
RESIZE_BICUBIC = _resize("ResizeBicubic", "float32", "Cubic convolution over the 4x4 nearest input pixels.")
RESIZE_AREA = _resize("ResizeArea", "float32", "The area-weighted mean of the input pixels each output pixel covers.",
                      attrs=["align_corners: bool = false"])
RESIZE_BILINEAR_GRAD = DEFS.define(
    "ResizeBilinearGrad", inputs=["grads: float32", "original_image: T"], outputs=["output: T"],
    attrs=["T: {float16, float32, float64}"] + _CORNERS, grad=NOT_DIFFERENTIABLE,
    doc="Spreads each resized pixel's gradient over the 2x2 input pixels it interpolated.")
RESIZE_BICUBIC_GRAD = DEFS.define(
    "ResizeBicubicGrad", inputs=["grads: float32", "original_image: T"], outputs=["output: T"],
    attrs=["T: {float32, float64}"] + _CORNERS, grad=NOT_DIFFERENTIABLE,
    doc="Spreads each resized pixel's gradient over the 4x4 input pixels it interpolated.")
RESIZE_NEAREST_NEIGHBOR_GRAD = DEFS.define(
    "ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"], outputs=["output: T"],
    attrs=["T: {uint8, int8, int32, float16, float32, float64}"] + _CORNERS,
    doc="Sums each resized pixel's gradient into the input pixel it was copied from.")


# ---- shape functions ------------------------------------------------------------------------------------------------
def sized_image_shape(batch, size, channels):
    """[batch, height, width, channels] with height and width from the 2-element int32 ``size`` tensor (TF's
    SetOutputToSizedImage: both known when ``size`` is a constant, both unknown otherwise)."""
    if size.shape.ndims is not None:
        size.shape.with_rank(1)
        if size.shape[0].value not in (None, 2):
            raise ValueError(f"size must have 2 elements (new_height, new_width), got shape {size.shape}")
    value = constant_value(size)
    height, width = (None, None) if value is None else (int(value[0]), int(value[1]))
    return tensor_shape.TensorShape([batch, height, width, channels])


@RESIZE_BILINEAR.set_shape_fn
@RESIZE_NEAREST_NEIGHBOR.set_shape_fn
@RESIZE_BICUBIC.set_shape_fn
@RESIZE_AREA.set_shape_fn
def _resize_shape(op):
    images = op.inputs[0].shape.with_rank(4)
    return sized_image_shape(images[0], op.inputs[1], images[3])


@RESIZE_BILINEAR_GRAD.set_shape_fn
@RESIZE_BICUBIC_GRAD.set_shape_fn
def _resize_grad_shape(op):
    op.inputs[0].shape.with_rank(4)
    return op.inputs[1].shape.with_rank(4)


@RESIZE_NEAREST_NEIGHBOR_GRAD.set_shape_fn
def _resize_nearest_neighbor_grad_shape(op):
    grads = op.inputs[0].shape.with_rank(4)
    return sized_image_shape(grads[0], op.inputs[1], grads[3])


# ---- gradients ------------------------------------------------------------------------------------------------------
def _corner_attrs(op):
    return {"align_corners": op.get_attr("align_corners"), "half_pixel_centers": op.get_attr("half_pixel_centers")}


@RESIZE_BILINEAR.set_gradient
def _resize_bilinear_grad(op, grad):
    image = op.inputs[0]
    if image.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
        return [None, None]
    return [apply_op("ResizeBilinearGrad", [grad, image], _corner_attrs(op), name="ResizeBilinearGrad"), None]


@RESIZE_BICUBIC.set_gradient
def _resize_bicubic_grad(op, grad):
    image = op.inputs[0]
    if image.dtype not in (dtypes.float32, dtypes.float64):  # as TF: other types get no gradient
        return [None, None]
    return [apply_op("ResizeBicubicGrad", [grad, image], _corner_attrs(op), name="ResizeBicubicGrad"), None]


@RESIZE_NEAREST_NEIGHBOR.set_gradient
def _resize_nearest_neighbor_grad(op, grad):
    image = op.inputs[0]
    if image.shape[1:3].is_fully_defined():
        size = convert_to_tensor(image.shape[1:3].as_list(), dtype=dtypes.int32)
    else:
        size = shape_ops.shape(image)[1:3]
    return [apply_op("ResizeNearestNeighborGrad", [grad, size], _corner_attrs(op), name="ResizeNearestNeighborGrad"),
            None]


@RESIZE_NEAREST_NEIGHBOR_GRAD.set_gradient
def _resize_nearest_neighbor_grad_grad(op, grad):
    # The adjoint of the scatter-sum is the gather the forward op does, at the resized size.
    size = shape_ops.shape(op.inputs[0])[1:3]
    return [apply_op("ResizeNearestNeighbor", [grad, size], _corner_attrs(op), name="ResizeNearestNeighbor"), None]


# ---- wrappers -------------------------------------------------------------------------------------------------------
class ResizeMethod:
    """TF1's ``tf.image.ResizeMethod`` (integers); TF2's names ('bilinear', ...) are accepted too."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHODS = {ResizeMethod.BILINEAR: "ResizeBilinear", "bilinear": "ResizeBilinear",
            ResizeMethod.NEAREST_NEIGHBOR: "ResizeNearestNeighbor", "nearest": "ResizeNearestNeighbor",
            ResizeMethod.BICUBIC: "ResizeBicubic", "bicubic": "ResizeBicubic",
            ResizeMethod.AREA: "ResizeArea", "area": "ResizeArea"}


def _apply_resize(op_type, images, size, align_corners, half_pixel_centers, name):
    images = convert_to_tensor(images, name="images")
    size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
    attrs = {"align_corners": bool(align_corners)}
    if op_type != "ResizeArea":
        attrs["half_pixel_centers"] = bool(half_pixel_centers)
    return apply_op(op_type, [images, size], attrs, name=name or op_type)


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """4-D ``images`` resized to ``size`` = [new_height, new_width] by bilinear interpolation, as float32."""
    return _apply_resize("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """4-D ``images`` resized to ``size`` by copying the nearest pixel; keeps the dtype."""
    return _apply_resize("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """4-D ``images`` resized to ``size`` by cubic convolution (TF1: Keys' a=-0.75), as float32."""
    return _apply_resize("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images, size, align_corners=False, name=None):
    """4-D ``images`` resized to ``size`` by area averaging (the usual choice for shrinking), as float32."""
    return _apply_resize("ResizeArea", images, size, align_corners, False, name)


def _scaled_size(images, size):
    """TF1's preserve_aspect_ratio: the largest size within ``size`` with the image's aspect ratio."""
    shape = shape_ops.shape(images)
    dims = [images.shape[i].value if images.shape[i].value is not None else shape[i] for i in (1, 2)]
    current = [unary_math_ops.cast(d, dtypes.float32) for d in dims]
    factor = math_ops.minimum(unary_math_ops.cast(size[0], dtypes.float32) / current[0],
                              unary_math_ops.cast(size[1], dtypes.float32) / current[1])
    scaled = [unary_math_ops.cast(unary_math_ops.round(factor * c), dtypes.int32) for c in current]
    return convert_to_tensor(scaled, dtype=dtypes.int32, name="size")


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None):
    """TF1's ``tf.image.resize_images`` on a 3-D image or a 4-D batch.

    Returns the input itself (its dtype unchanged) when the static size already matches, as TF1 does;
    otherwise the method's op (bilinear, bicubic and area give float32).
    """
    if method not in _METHODS:
        raise ValueError(f"resize_images: unknown method {method!r}; use tf.image.ResizeMethod.BILINEAR, "
                         f"NEAREST_NEIGHBOR, BICUBIC or AREA")
    with graph_mod.name_scope(name, "resize", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("resize_images: 'images' contains no shape; give it a static rank of 3 or 4")
        if images.shape.ndims not in (3, 4):
            raise ValueError(f"resize_images: 'images' must have 3 or 4 dimensions, got shape {images.shape}")
        is_batch = images.shape.ndims == 4
        if not is_batch:
            images = shape_ops.expand_dims(images, 0)
        try:
            size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError(f"resize_images: 'size' must be a 1-D int32 tensor, got {size!r}") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError(f"resize_images: 'size' must be a 1-D tensor of 2 elements (new_height, new_width), "
                             f"got shape {size.shape}")
        if preserve_aspect_ratio:
            size = _scaled_size(images, size)
        new_height, new_width = constant_value_as_shape(size).with_rank(2).as_list()
        _, height, width, _ = images.shape.as_list()
        if None not in (height, width) and (new_height, new_width) == (height, width):
            return images if is_batch else shape_ops.squeeze(images, axis=[0])
        if _METHODS[method] == "ResizeArea":
            resized = resize_area(images, size, align_corners=align_corners)
        else:
            resized = _apply_resize(_METHODS[method], images, size, align_corners, False, None)
        resized.set_shape([None, new_height, new_width, None])
        return resized if is_batch else shape_ops.squeeze(resized, axis=[0])


resize = resize_images
