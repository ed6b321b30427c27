"""What the GPU pooling and convolution kernels take of the CPU package's windows: sizes, padding and strides.

The windows themselves (sizes, padding, the attr checks) are ``tensorweave_cpu.kernels.sliding_windows``'s.
The kernels index every array through four element strides in NHWC order, so NCHW tensors (and transposed
views) are read and written where they lie, with no layout copy; ``window_args`` is the integer block every
window kernel takes.
"""

import numpy as np


def from_nhwc_shape(shape, data_format):
    n, h, w, c = shape
    return (n, c, h, w) if data_format == "NCHW" else (n, h, w, c)


def nhwc_strides(array, data_format):
    """``array``'s element strides in NHWC order: element (n, h, w, c) is at n*s0 + h*s1 + w*s2 + c*s3."""
    strides = [s // array.itemsize for s in array.strides]
    if len(strides) != 4:
        raise ValueError(f"expected a 4-D array, got shape {list(array.shape)}")
    return (strides[0], strides[2], strides[3], strides[1]) if data_format == "NCHW" else tuple(strides)


def window_args(windows):
    """n, h, w, c, out_h, out_w, kh, kw, sh, sw, dh, dw, pad_top, pad_left of the CPU package's ``Windows``, as
    the int64 block every window kernel takes."""
    values = windows.in_shape + (windows.out_h, windows.out_w) + windows.window + windows.strides + \
        windows.dilations + (windows.pad_top, windows.pad_left)
    return tuple(np.int64(v) for v in values)


# The C side of window_args() and of an array's NHWC strides, shared by the window kernels.
GEOMETRY_PARAMS = ("long long n, long long h, long long w, long long c, long long oh, long long ow, "
                   "long long kh, long long kw, long long sh, long long sw, long long dh, long long dw, "
                   "long long pt, long long pl")


def strides_params(name):
    return ", ".join(f"long long {name}{i}" for i in range(4))


def strides_args(array, data_format):
    return tuple(np.int64(s) for s in nhwc_strides(array, data_format))
