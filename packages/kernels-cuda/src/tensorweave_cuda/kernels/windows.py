"""Window geometry for the GPU pooling and convolution kernels: sizes, padding and element strides.

The kernels index every array through four element strides in NHWC order, so NCHW tensors (and transposed
views) are read and written where they lie, with no layout copy; ``Geometry.args()`` is the integer block
every window kernel takes.
"""

import numpy as np

from tensorweave.extension import spatial_params, window_geometry


def nhwc_shape(shape, data_format):
    """A 4-D shape given in ``data_format`` (any sequence of ints, even a device array) in NHWC order."""
    shape = tuple(int(d) for d in (shape.tolist() if hasattr(shape, "tolist") else shape))
    if len(shape) != 4:
        raise ValueError(f"expected a 4-D shape, got {list(shape)}")
    return (shape[0], shape[2], shape[3], shape[1]) if data_format == "NCHW" else shape


def from_nhwc_shape(shape, data_format):
    n, h, w, c = shape
    return (n, c, h, w) if data_format == "NCHW" else (n, h, w, c)


def nhwc_strides(array, data_format):
    """``array``'s element strides in NHWC order: element (n, h, w, c) is at n*s0 + h*s1 + w*s2 + c*s3."""
    strides = [s // array.itemsize for s in array.strides]
    if len(strides) != 4:
        raise ValueError(f"expected a 4-D array, got shape {list(array.shape)}")
    return (strides[0], strides[2], strides[3], strides[1]) if data_format == "NCHW" else tuple(strides)


class Geometry:
    """The windows of one call over an NHWC input shape: output size and the padding before each axis."""

    __slots__ = ("in_shape", "window", "strides", "dilations", "out_h", "out_w", "pad_top", "pad_left")

    def __init__(self, in_shape, window, strides, dilations=(1, 1), padding="VALID"):
        self.in_shape = tuple(int(d) for d in in_shape)
        self.window, self.strides, self.dilations = tuple(window), tuple(strides), tuple(dilations)
        _, h, w, _ = self.in_shape
        self.out_h, self.pad_top, _ = window_geometry(h, window[0], strides[0], dilations[0], padding)
        self.out_w, self.pad_left, _ = window_geometry(w, window[1], strides[1], dilations[1], padding)

    @classmethod
    def from_attrs(cls, in_shape, window, strides, dilations, padding, data_format):
        """From a node's 4-element ``strides``/``dilations`` attrs; ``window`` is the (height, width) pair."""
        strides = spatial_params(strides, data_format, "strides")
        dilations = spatial_params(dilations, data_format, "dilations") if dilations is not None else (1, 1)
        return cls(in_shape, window, strides, dilations, padding)

    @property
    def out_shape(self):
        """The NHWC output shape (channels as the input's)."""
        return (self.in_shape[0], self.out_h, self.out_w, self.in_shape[3])

    def args(self):
        """n, h, w, c, out_h, out_w, kh, kw, sh, sw, dh, dw, pad_top, pad_left as int64 kernel arguments."""
        values = self.in_shape + (self.out_h, self.out_w) + self.window + self.strides + self.dilations + (
            self.pad_top, self.pad_left)
        return tuple(np.int64(v) for v in values)


# The C side of Geometry.args() and of an array's NHWC strides, shared by the window kernels.
GEOMETRY_PARAMS = ("long long n, long long h, long long w, long long c, long long oh, long long ow, "
                   "long long kh, long long kw, long long sh, long long sw, long long dh, long long dw, "
                   "long long pt, long long pl")


def strides_params(name):
    return ", ".join(f"long long {name}{i}" for i in range(4))


def strides_args(array, data_format):
    return tuple(np.int64(s) for s in nhwc_strides(array, data_format))
