"""Image codecs: DecodeJpeg, DecodePng, DecodeGif, DecodeBmp, DecodeImage, EncodeJpeg and EncodePng (TF's ops and
attrs), with TF's shape functions: decoded images have unknown height and width, and a channel count only
when the ``channels`` attr fixes it. Their kernels run on the host (the CPU package)."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework import graph as graph_mod
from tensorweave.ops.image_convert_ops import convert_image_dtype

DEFS = OpDefList()

__all__ = ["decode_jpeg", "decode_png", "decode_gif", "decode_bmp", "decode_image", "encode_jpeg", "encode_png"]


def _scalar_contents(op):
    if not op.inputs[0].shape.is_compatible_with([]):
        raise ValueError(f"{op.type}: contents must be a scalar string (one encoded image), got shape "
                         f"{op.inputs[0].shape}; decode a batch with tf.map_fn")


def _decoded_shape(op):
    """[?, ?, channels] (channels unknown when the attr is 0, i.e. taken from the file)."""
    _scalar_contents(op)
    channels = op.get_attr("channels") if "channels" in op.op_def.attrs else 0
    return tensor_shape.TensorShape([None, None, channels or None])


def _gif_shape(op):
    _scalar_contents(op)
    return tensor_shape.TensorShape([None, None, None, 3])


def _decode_image_shape(op):
    if op.get_attr("expand_animations"):  # a GIF decodes to 4-D, anything else to 3-D
        _scalar_contents(op)
        return tensor_shape.TensorShape(None)
    return _decoded_shape(op)


def _encoded_shape(op):
    op.inputs[0].shape.with_rank(3)
    return tensor_shape.TensorShape([])


def _codec(op_type, inputs, outputs, attrs, shape_fn, doc):
    return DEFS.define(op_type, inputs=inputs, outputs=outputs, attrs=attrs, shape_fn=shape_fn,
                       grad=NOT_DIFFERENTIABLE, doc=doc)


DECODE_JPEG = _codec(
    "DecodeJpeg", ["contents: string"], ["image: uint8"],
    ["channels: int = 0", "ratio: int = 1", "fancy_upscaling: bool = true", "try_recover_truncated: bool = false",
     "acceptable_fraction: float = 1.0", "dct_method: string = ''"], _decoded_shape,
    "A JPEG decoded to uint8 [height, width, channels] as TF's libjpeg-turbo settings decode it.")
DECODE_PNG = _codec("DecodePng", ["contents: string"], ["image: dtype"],
                    ["channels: int = 0", "dtype: {uint8, uint16} = uint8"], _decoded_shape,
                    "A PNG decoded to [height, width, channels] of uint8 or uint16.")
DECODE_GIF = _codec("DecodeGif", ["contents: string"], ["image: uint8"], [], _gif_shape,
                    "A GIF's frames as uint8 [frames, height, width, 3], each drawn over the one before.")
DECODE_BMP = _codec("DecodeBmp", ["contents: string"], ["image: uint8"], ["channels: int = 0"], _decoded_shape,
                    "An uncompressed BMP decoded to uint8 [height, width, channels].")
DECODE_IMAGE = _codec(
    "DecodeImage", ["contents: string"], ["image: dtype"],
    ["channels: int = 0", "dtype: {uint8, uint16, float32} = uint8", "expand_animations: bool = true"],
    _decode_image_shape, "A JPEG, PNG, GIF or BMP, told apart by its first bytes, decoded as its own op would.")
ENCODE_JPEG = _codec(
    "EncodeJpeg", ["image: uint8"], ["contents: string"],
    ["format: {'', 'grayscale', 'rgb'} = ''", "quality: int = 95", "progressive: bool = false",
     "optimize_size: bool = false", "chroma_downsampling: bool = true", "density_unit: {'in', 'cm'} = 'in'",
     "x_density: int = 300", "y_density: int = 300", "xmp_metadata: string = ''"], _encoded_shape,
    "A uint8 [height, width, 1 or 3] image as JPEG bytes (libjpeg-turbo, as TF's encoder).")
ENCODE_PNG = _codec("EncodePng", ["image: T"], ["contents: string"],
                    ["compression: int = -1", "T: {uint8, uint16} = uint8"], _encoded_shape,
                    "A [height, width, 1-4] image as PNG bytes (compression -1 is zlib's default, 0-9 a level).")


def _contents(contents):
    return convert_to_tensor(contents, dtype=dtypes.string, name="contents")


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """A JPEG as uint8 [height, width, channels]: channels 0 (the file's), 1 or 3; ratio 1, 2, 4 or 8
    downscales while decoding; dct_method '' (TF's default, INTEGER_FAST) or 'INTEGER_ACCURATE'."""
    attrs = {"channels": channels, "ratio": ratio, "fancy_upscaling": fancy_upscaling,
             "try_recover_truncated": try_recover_truncated, "acceptable_fraction": float(acceptable_fraction),
             "dct_method": dct_method}
    return apply_op("DecodeJpeg", [_contents(contents)], attrs, name=name or "DecodeJpeg")


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """A PNG as [height, width, channels] of uint8 or uint16 (8-bit files scale by 257 into uint16)."""
    return apply_op("DecodePng", [_contents(contents)], {"channels": channels, "dtype": dtypes.as_dtype(dtype)},
                    name=name or "DecodePng")


def decode_gif(contents, name=None):
    """A GIF as uint8 [frames, height, width, 3]."""
    return apply_op("DecodeGif", [_contents(contents)], name=name or "DecodeGif")


def decode_bmp(contents, channels=0, name=None):
    """An uncompressed 8-, 24- or 32-bit BMP as uint8 [height, width, channels]."""
    return apply_op("DecodeBmp", [_contents(contents)], {"channels": channels}, name=name or "DecodeBmp")


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """Any of JPEG, PNG, GIF or BMP, told apart by its first bytes; a GIF gives 4-D frames unless
    ``expand_animations`` is False (then its first frame). Other dtypes than uint8, uint16 and float32 are
    converted from uint16 with ``convert_image_dtype``."""
    dtype = dtypes.as_dtype(dtype)
    with graph_mod.name_scope(name, "decode_image"):
        channels = 0 if channels is None else channels
        decode_as = dtype if dtype in (dtypes.float32, dtypes.uint8, dtypes.uint16) else dtypes.uint16
        image = apply_op("DecodeImage", [_contents(contents)],
                         {"channels": channels, "dtype": decode_as, "expand_animations": expand_animations},
                         name="DecodeImage")
        if decode_as != dtype:
            image = convert_image_dtype(image, dtype)
        if not expand_animations:
            image.set_shape([None, None, channels or None])
        return image


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002 - TF's name
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """A uint8 [height, width, 1 or 3] image as a JPEG string (byte for byte what TF's encoder writes)."""
    attrs = {"format": format, "quality": quality, "progressive": progressive, "optimize_size": optimize_size,
             "chroma_downsampling": chroma_downsampling, "density_unit": density_unit, "x_density": x_density,
             "y_density": y_density, "xmp_metadata": xmp_metadata}
    return apply_op("EncodeJpeg", [convert_to_tensor(image, name="image")], attrs, name=name or "EncodeJpeg")


def encode_png(image, compression=-1, name=None):
    """A uint8 or uint16 [height, width, 1-4] image as a PNG string."""
    return apply_op("EncodePng", [convert_to_tensor(image, name="image")], {"compression": compression},
                    name=name or "EncodePng")
