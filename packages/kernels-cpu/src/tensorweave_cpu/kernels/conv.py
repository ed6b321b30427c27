"""CPU kernels for Conv2D and its backward ops: im2col as a strided view, then one GEMM.

The filter is [kh, kw, in, out], so a window laid out as [kh, kw, in] multiplies the filter reshaped to
[kh*kw*in, out] with no transpose; the one copy is the im2col matrix itself.
"""

from tensorweave.extension import KernelSet

from tensorweave_cpu.kernels.sliding_windows import Windows, from_nhwc, nhwc_shape, to_nhwc

KERNELS = KernelSet("CPU")

_FLOATS = ["float16", "float32", "float64"]


def conv_windows(in_shape, filter_shape, strides, dilations, padding, data_format, explicit_paddings=()):
    """The convolution's windows over an NHWC ``in_shape``, checked against the filter (every device's kernels)."""
    if len(filter_shape) != 4 or len(in_shape) != 4:
        raise ValueError(f"conv2d needs a 4-D input and a 4-D [height, width, in, out] filter, got shapes "
                         f"{list(in_shape)} and {list(filter_shape)}")
    kh, kw, in_channels, _ = filter_shape
    if in_shape[3] != in_channels:
        raise ValueError(f"input depth {in_shape[3]} does not match the filter's in_channels {in_channels} "
                         f"(input shape {list(in_shape)} in NHWC order, filter shape {list(filter_shape)})")
    return Windows.from_attrs(in_shape, (kh, kw), strides, dilations, padding, data_format, explicit_paddings)


def _im2col(x, windows, xp):
    """The [N*out_h*out_w, kh*kw*C] matrix of every window of ``x`` (NHWC)."""
    kh, kw = windows.window
    return windows.patches(windows.pad(x, xp), xp).reshape(-1, kh * kw * x.shape[3])


def check_out_backprop(dy, windows, out_channels):
    """Refuses an NHWC ``dy`` (an array or view on any device) that is not the convolution's output shape."""
    want = windows.out_shape[:3] + (out_channels,)
    if dy.shape != want:
        raise ValueError(f"out_backprop has shape {list(dy.shape)} (NHWC order), but the convolution's output "
                         f"has shape {list(want)}")



@KERNELS.register("Conv2D", dtypes=_FLOATS)
def _conv2d(x, w, *, strides, padding, data_format, dilations, xp, explicit_paddings=()):
    x = to_nhwc(x, data_format)
    windows = conv_windows(x.shape, w.shape, strides, dilations, padding, data_format, explicit_paddings)
    out_channels = w.shape[3]
    out = _im2col(x, windows, xp) @ w.reshape(-1, out_channels)
    return from_nhwc(out.reshape(windows.out_shape[:3] + (out_channels,)), data_format)


@KERNELS.register("Conv2DBackpropInput", dtypes=_FLOATS)
def _conv2d_backprop_input(input_sizes, w, dy, *, strides, padding, data_format, dilations, xp,
                           explicit_paddings=()):
    in_shape = nhwc_shape(input_sizes, data_format)
    dy = to_nhwc(dy, data_format)
    windows = conv_windows(in_shape, w.shape, strides, dilations, padding, data_format, explicit_paddings)
    in_channels, out_channels = w.shape[2:]
    check_out_backprop(dy, windows, out_channels)
    # One GEMM per window offset gives a contiguous block to add (a single GEMM's column blocks are strided).
    dy_rows = dy.reshape(-1, out_channels)
    block_shape = windows.out_shape[:3] + (in_channels,)
    d_padded = xp.zeros(windows.padded_shape, dtype=dy.dtype)
    for i, j, rows, cols in windows.offsets():
        d_padded[:, rows, cols, :] += (dy_rows @ w[i, j].T).reshape(block_shape)
    return from_nhwc(windows.crop(d_padded), data_format)


@KERNELS.register("Conv2DBackpropFilter", dtypes=_FLOATS)
def _conv2d_backprop_filter(x, filter_sizes, dy, *, strides, padding, data_format, dilations, xp,
                            explicit_paddings=()):
    filter_shape = tuple(int(d) for d in filter_sizes)
    x, dy = to_nhwc(x, data_format), to_nhwc(dy, data_format)
    windows = conv_windows(x.shape, filter_shape, strides, dilations, padding, data_format,
                           explicit_paddings)
    check_out_backprop(dy, windows, filter_shape[3])
    d_filter = _im2col(x, windows, xp).T @ dy.reshape(-1, filter_shape[3])
    return d_filter.reshape(filter_shape)
