"""CPU kernels for DepthwiseConv2dNative and its backward ops: one broadcast multiply per window offset.

Each input channel ``c`` meets its own ``[C, M]`` slice of the filter at offset (i, j); the output's channel
``c * M + m`` is TF's order, so [..., C, M] results reshape to [..., C * M] with no copy.
"""

from tensorweave.extension import KernelSet

from tensorweave_cpu.kernels.sliding_windows import Windows, from_nhwc, nhwc_shape, to_nhwc

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                     "DepthwiseConv2dNativeBackpropFilter"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""

_FLOATS = ["float16", "float32", "float64"]


def depthwise_windows(in_shape, filter_shape, strides, dilations, padding, data_format, explicit_paddings):
    if len(filter_shape) != 4 or len(in_shape) != 4:
        raise ValueError(f"depthwise_conv2d needs a 4-D input and a 4-D [height, width, in, multiplier] filter, got "
                         f"shapes {list(in_shape)} and {list(filter_shape)}")
    if in_shape[3] != filter_shape[2]:
        raise ValueError(f"input depth {in_shape[3]} does not match the depthwise filter's in_channels "
                         f"{filter_shape[2]} (input shape {list(in_shape)} in NHWC order, filter shape "
                         f"{list(filter_shape)})")
    return Windows.from_attrs(in_shape, filter_shape[:2], strides, dilations, padding, data_format, explicit_paddings)


def _check_dy(dy, windows, filter_shape):
    want = windows.out_shape[:3] + (filter_shape[2] * filter_shape[3],)
    if dy.shape != want:
        raise ValueError(f"out_backprop has shape {list(dy.shape)} (NHWC order), but the depthwise convolution's "
                         f"output has shape {list(want)}")
    return dy.reshape(want[:3] + tuple(filter_shape[2:]))


@KERNELS.register("DepthwiseConv2dNative", dtypes=_FLOATS)
def _depthwise(x, w, *, strides, padding, data_format, dilations, xp, explicit_paddings=()):
    x = to_nhwc(x, data_format)
    windows = depthwise_windows(x.shape, w.shape, strides, dilations, padding, data_format, explicit_paddings)
    padded = windows.pad(x, xp)
    out = xp.zeros(windows.out_shape + (w.shape[3],), dtype=x.dtype)
    for i, j, rows, cols in windows.offsets():
        out += padded[:, rows, cols, :, None] * w[i, j]
    return from_nhwc(out.reshape(windows.out_shape[:3] + (-1,)), data_format)


@KERNELS.register("DepthwiseConv2dNativeBackpropInput", dtypes=_FLOATS)
def _depthwise_backprop_input(input_sizes, w, dy, *, strides, padding, data_format, dilations, xp,
                              explicit_paddings=()):
    in_shape = nhwc_shape(input_sizes, data_format)
    windows = depthwise_windows(in_shape, w.shape, strides, dilations, padding, data_format, explicit_paddings)
    dy = _check_dy(to_nhwc(dy, data_format), windows, w.shape)
    d_padded = xp.zeros(windows.padded_shape, dtype=dy.dtype)
    for i, j, rows, cols in windows.offsets():
        d_padded[:, rows, cols, :] += (dy * w[i, j]).sum(axis=-1)
    return from_nhwc(windows.crop(d_padded), data_format)


@KERNELS.register("DepthwiseConv2dNativeBackpropFilter", dtypes=_FLOATS)
def _depthwise_backprop_filter(x, filter_sizes, dy, *, strides, padding, data_format, dilations, xp,
                               explicit_paddings=()):
    filter_shape = tuple(int(d) for d in filter_sizes)
    x = to_nhwc(x, data_format)
    windows = depthwise_windows(x.shape, filter_shape, strides, dilations, padding, data_format, explicit_paddings)
    dy = _check_dy(to_nhwc(dy, data_format), windows, filter_shape)
    padded = windows.pad(x, xp)
    d_filter = xp.zeros(filter_shape, dtype=dy.dtype)
    for i, j, rows, cols in windows.offsets():
        d_filter[i, j] = xp.einsum("nhwc,nhwcm->cm", padded[:, rows, cols, :], dy)
    return d_filter
