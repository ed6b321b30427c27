"""Image summaries' pixels: float images scaled to uint8 as TF1's ImageSummary does, and PNG encoding."""

import io

import numpy as np
from PIL import Image

_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def to_uint8(image, bad_color=(255, 0, 0, 255)):
    """[height, width, channels] uint8 from uint8 or float pixels.

    Floats are scaled as TF1 does: with no negative value, by 255 / max; otherwise around 128, by
    127 / max(|min|, |max|). Non-finite pixels get ``bad_color`` (its first ``channels`` entries).
    """
    image = np.asarray(image)
    if image.dtype == np.uint8:
        return image
    x = image.astype(np.float64)
    finite = np.isfinite(x)
    good = x[finite]
    lo, hi = (float(good.min()), float(good.max())) if good.size else (0.0, 0.0)
    if lo < 0:
        bound = max(-lo, hi)
        scale, offset = (127.0 / bound if bound > 1e-10 else 0.0), 128.0
    else:
        scale, offset = (255.0 / hi if hi > 1e-10 else 0.0), 0.0
    out = np.clip(np.where(finite, x, 0.0) * scale + offset, 0, 255).astype(np.uint8)
    bad_pixels = ~finite.all(axis=-1)
    if bad_pixels.any():
        out[bad_pixels] = np.asarray(bad_color, dtype=np.uint8)[:image.shape[-1]]
    return out


def encode_png(image):
    """PNG bytes of a [height, width, channels] uint8 image with 1, 3 or 4 channels."""
    channels = image.shape[-1]
    if channels not in _MODES:
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {channels}")
    pixels = image[..., 0] if channels == 1 else image
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels), _MODES[channels]).save(buffer, format="PNG")
    return buffer.getvalue()
