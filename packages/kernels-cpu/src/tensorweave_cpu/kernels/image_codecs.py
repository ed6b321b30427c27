"""Host kernels of the image codecs, on well-kept libraries set up the way TF sets up its own.

JPEG decoding goes through simplejpeg (libjpeg-turbo's TurboJPEG API), which exposes the two switches TF sets:
TF's default decode is the fast integer DCT *with* fancy upsampling, a pair Pillow cannot ask libjpeg for, and
simplejpeg's output equals TF's for every dct_method / fancy_upscaling / ratio / channels combination
(tests/fixtures/tf1/make_image_codecs.py). JPEG encoding, 8-bit PNG and GIF go through Pillow (its JPEG encoder
writes TF's bytes exactly); 16-bit PNG through pypng (Pillow keeps only 8 bits of color channels). BMP is read
with numpy as TF reads it: uncompressed 8/24/32-bit, alpha kept.
"""

import io
import zlib

import numpy as np

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")

_DCT = {"": True, "INTEGER_FAST": True, "INTEGER_ACCURATE": False}  # fastdct per TF's dct_method


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _bytes(contents):
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    return data.encode() if isinstance(data, str) else bytes(data)


def _image_kind(data):
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:3] == b"GIF":
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    return None


# ---- JPEG -----------------------------------------------------------------------------------------------------------
def decode_jpeg(data, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False, dct_method=""):
    import simplejpeg
    if channels not in (0, 1, 3):
        raise _invalid(f"DecodeJpeg: channels must be 0, 1 or 3, got {channels}")
    if ratio not in (1, 2, 4, 8):
        raise _invalid(f"DecodeJpeg: ratio must be 1, 2, 4 or 8, got {ratio}")
    if dct_method not in _DCT:
        raise _invalid(f"DecodeJpeg: dct_method must be '', 'INTEGER_FAST' or 'INTEGER_ACCURATE', got {dct_method!r}")
    try:
        height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
        gray = channels == 1 or (channels == 0 and colorspace == "Gray")
        if colorspace in ("CMYK", "YCCK") and not gray:
            return _cmyk_to_rgb(simplejpeg.decode_jpeg(data, colorspace="CMYK", strict=not try_recover_truncated))
        image = simplejpeg.decode_jpeg(
            data, colorspace="GRAY" if gray else "RGB", fastdct=_DCT[dct_method], fastupsample=not fancy_upscaling,
            min_height=-(-height // ratio), min_width=-(-width // ratio), strict=not try_recover_truncated)
    except ValueError as exc:
        raise _invalid(f"Invalid JPEG data ({len(data)} bytes): {exc}") from None
    return image.reshape(image.shape[:2] + (1 if gray else 3,))


def _cmyk_to_rgb(cmyk):
    """TF's conversion of Adobe (inverted) CMYK: each of R, G, B is K * C / 255 (integer division)."""
    c = cmyk.astype(np.int32)
    return (c[..., :3] * c[..., 3:4] // 255).astype(np.uint8)


@KERNELS.register("DecodeJpeg")
def _decode_jpeg(contents, *, channels, ratio, fancy_upscaling, try_recover_truncated, dct_method):
    return decode_jpeg(_bytes(contents), channels, ratio, fancy_upscaling, try_recover_truncated, dct_method)


@KERNELS.register("EncodeJpeg")
def _encode_jpeg(image, *, format, quality, progressive, optimize_size, chroma_downsampling,  # noqa: A002
                 density_unit, x_density, y_density, xmp_metadata):
    from PIL import Image
    channels = {"": None, "grayscale": 1, "rgb": 3}[format]
    if image.ndim != 3 or image.shape[2] not in (1, 3) or channels not in (None, image.shape[2]):
        raise _invalid(f"EncodeJpeg: image must be [height, width, 1 or 3]{'' if not format else ' for ' + format}, "
                       f"got shape {list(image.shape)}")
    if not 0 <= quality <= 100:
        raise _invalid(f"EncodeJpeg: quality must be in [0, 100], got {quality}")
    picture = Image.fromarray(np.ascontiguousarray(image[..., 0] if image.shape[2] == 1 else image))
    options = {"quality": quality, "progressive": progressive, "optimize": optimize_size,
               "subsampling": 2 if chroma_downsampling and image.shape[2] == 3 else 0, "dpi": (x_density, y_density)}
    if xmp_metadata:
        options["xmp"] = xmp_metadata.encode() if isinstance(xmp_metadata, str) else xmp_metadata
    out = io.BytesIO()
    picture.save(out, format="JPEG", **options)
    data = bytearray(out.getvalue())
    if density_unit == "cm":  # the JFIF header's unit byte (Pillow writes dots per inch)
        data[13] = 2
    return np.array(bytes(data), dtype=object)


# ---- PNG ------------------------------------------------------------------------------------------------------------
def _gray_from_rgb(rgb, maximum):
    """libpng's png_set_rgb_to_gray as TF asks for it: 0.299 R + 0.587 G + 0.114 B in 1/32768ths, truncated
    for 8-bit samples and rounded for 16-bit ones; gray pixels pass unchanged."""
    weights = np.array([9797, 19234, 3737], np.int64)
    gray = ((rgb.astype(np.int64) * weights).sum(-1, keepdims=True) + (16384 if maximum > 255 else 0)) >> 15
    same = (rgb[..., :1] == rgb[..., 1:2]) & (rgb[..., :1] == rgb[..., 2:3])
    return np.where(same, rgb[..., :1], np.minimum(gray, maximum)).astype(rgb.dtype)


def convert_channels(pixels, channels, maximum):
    """[h, w, n] pixels (n = 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) as ``channels`` of them, as libpng for TF."""
    have = pixels.shape[2]
    if channels in (0, have):
        return pixels
    color, alpha = pixels[..., : 1 if have < 3 else 3], pixels[..., 1:2] if have == 2 else pixels[..., 3:4]
    has_alpha = have in (2, 4)
    if channels == 1:
        return color if color.shape[2] == 1 else _gray_from_rgb(color, maximum)
    rgb = np.repeat(color, 3, axis=2) if color.shape[2] == 1 else color
    if channels == 3:
        return rgb
    alpha = alpha if has_alpha else np.full(rgb.shape[:2] + (1,), maximum, pixels.dtype)
    return np.concatenate([rgb, alpha], axis=2)


def _png_pixels(data):
    """(pixels [h, w, n] as uint8 or uint16, whether the file has 16-bit samples)."""
    import png
    try:
        reader = png.Reader(bytes=data)
        reader.preamble()
        if reader.bitdepth == 16:
            width, height, rows, info = reader.asDirect()
            planes = info["planes"]
            return np.vstack([np.asarray(r, np.uint16) for r in rows]).reshape(height, width, planes), True
        from PIL import Image
        picture = Image.open(io.BytesIO(data))
        picture.load()
    except Exception as exc:  # noqa: BLE001 - png and Pillow raise their own error types
        raise _invalid(f"Invalid PNG data ({len(data)} bytes): {exc}") from None
    if picture.mode == "P":
        picture = picture.convert("RGBA" if "transparency" in picture.info else "RGB")
    elif picture.mode in ("1", "I", "I;16"):
        picture = picture.convert("L")
    pixels = np.asarray(picture)
    return (pixels[..., None] if pixels.ndim == 2 else pixels), False


def decode_png(data, channels=0, dtype=np.uint8):
    if channels not in (0, 1, 3, 4):
        raise _invalid(f"DecodePng: channels must be 0, 1, 3 or 4, got {channels}")
    pixels, sixteen = _png_pixels(data)
    pixels = convert_channels(pixels, channels, np.iinfo(pixels.dtype).max)  # at the file's bit depth, as libpng
    wide = np.dtype(dtype) == np.uint16
    if sixteen and not wide:
        return (pixels >> 8).astype(np.uint8)
    return pixels.astype(np.uint16) * 257 if wide and not sixteen else pixels


@KERNELS.register("DecodePng")
def _decode_png(contents, *, channels, dtype):
    return decode_png(_bytes(contents), channels, dtype.as_numpy_dtype)


@KERNELS.register("EncodePng", dtypes=["uint8", "uint16"])
def _encode_png(image, *, compression):
    import png
    if image.ndim != 3 or not 1 <= image.shape[2] <= 4:
        raise _invalid(f"EncodePng: image must be [height, width, 1-4 channels], got shape {list(image.shape)}")
    if not -1 <= compression <= 9:
        raise _invalid(f"EncodePng: compression must be in [-1, 9], got {compression}")
    height, width, planes = image.shape
    writer = png.Writer(width, height, greyscale=planes < 3, alpha=planes in (2, 4),
                        bitdepth=image.dtype.itemsize * 8,
                        compression=zlib.Z_DEFAULT_COMPRESSION if compression == -1 else compression)
    out = io.BytesIO()
    writer.write_array(out, np.ascontiguousarray(image).reshape(-1))
    return np.array(out.getvalue(), dtype=object)


# ---- GIF and BMP ----------------------------------------------------------------------------------------------------
def decode_gif(data):
    """Every frame drawn over the previous one (TF ignores GIF disposal methods; transparent pixels keep what
    was there, black on the first frame)."""
    from PIL import Image, ImageSequence
    try:
        picture = Image.open(io.BytesIO(data))
        canvas = np.zeros((picture.height, picture.width, 3), np.uint8)
        frames = []
        for frame in ImageSequence.Iterator(picture):
            left, top, right, bottom = frame.dispose_extent if hasattr(frame, "dispose_extent") else (
                0, 0, picture.width, picture.height)
            rgba = np.asarray(frame.convert("RGBA"))
            region = (slice(top, bottom), slice(left, right))
            opaque = rgba[region][..., 3:] > 0
            canvas[region] = np.where(opaque, rgba[region][..., :3], canvas[region])
            frames.append(canvas.copy())
    except Exception as exc:  # noqa: BLE001 - Pillow raises several error types
        raise _invalid(f"Invalid GIF data ({len(data)} bytes): {exc}") from None
    return np.stack(frames)


@KERNELS.register("DecodeGif")
def _decode_gif(contents):
    return decode_gif(_bytes(contents))


def decode_bmp(data, channels=0):
    """TF's BMP reader: uncompressed 8-, 24- or 32-bit rows (bottom-up unless the height is negative), BGR(A)
    turned to RGB(A)."""
    if channels not in (0, 1, 3, 4):
        raise _invalid(f"DecodeBmp: channels must be 0, 1, 3 or 4, got {channels}")
    if len(data) < 54 or data[:2] != b"BM":
        raise _invalid(f"Invalid BMP data ({len(data)} bytes): no BMP header")
    offset = int.from_bytes(data[10:14], "little")
    width = int.from_bytes(data[18:22], "little", signed=True)
    height = int.from_bytes(data[22:26], "little", signed=True)
    depth = int.from_bytes(data[28:30], "little") // 8
    if depth not in (1, 3, 4) or width <= 0 or height == 0:
        raise _invalid(f"DecodeBmp: only 8-, 24- and 32-bit BMPs with positive width are supported, got "
                       f"{depth * 8} bits per pixel and size {width}x{height}")
    row = (width * depth + 3) // 4 * 4
    rows = abs(height)
    if len(data) < offset + row * rows:
        raise _invalid(f"Invalid BMP data: {len(data)} bytes, need {offset + row * rows} for {width}x{rows}")
    pixels = np.frombuffer(data, np.uint8, row * rows, offset).reshape(rows, row)[:, : width * depth]
    pixels = pixels.reshape(rows, width, depth)
    if height > 0:
        pixels = pixels[::-1]
    if depth >= 3:
        pixels = pixels[..., [2, 1, 0, 3][:depth]]
    return np.ascontiguousarray(convert_channels(pixels, channels, 255))


@KERNELS.register("DecodeBmp")
def _decode_bmp(contents, *, channels):
    return decode_bmp(_bytes(contents), channels)


@KERNELS.register("DecodeImage")
def _decode_image(contents, *, channels, dtype, expand_animations):
    data = _bytes(contents)
    kind = _image_kind(data)
    if kind is None:
        raise _invalid(f"DecodeImage: unknown image file format ({len(data)} bytes); one of JPEG, PNG, GIF, BMP "
                       f"is required")
    if kind == "png":
        image = decode_png(data, channels, np.uint8 if dtype.name == "uint8" else np.uint16)
    else:
        if kind == "jpeg":
            image = decode_jpeg(data, channels)
        elif kind == "bmp":
            image = decode_bmp(data, channels)
        else:
            if channels not in (0, 3):
                raise _invalid(f"DecodeImage: channels must be 0 or 3 for a GIF, got {channels}")
            image = decode_gif(data)
            image = image if expand_animations else image[0]
        if dtype.name == "uint16":  # TF shifts 8-bit samples up (x 256) here, where DecodePng scales by 257
            image = image.astype(np.uint16) << 8
    if dtype.name == "float32":
        return image.astype(np.float32) * np.float32(1.0 / np.iinfo(image.dtype).max)
    return image
