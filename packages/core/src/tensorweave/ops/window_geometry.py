"""The sliding-window arithmetic shared by convolution and pooling: TF's output sizes and SAME padding.

Shape functions and kernels both use it, so a graph's static shapes always match what kernels compute.
"""

DATA_FORMATS = ("NHWC", "NCHW")


def window_geometry(in_size, window, stride, dilation=1, padding="VALID"):
    """(output size, padding before, padding after) along one spatial axis, as TF computes them.

    SAME pads so that output = ceil(in / stride), putting the odd element of padding after (bottom/right).
    """
    if window < 1 or stride < 1 or dilation < 1:
        raise ValueError(f"window size, stride and dilation must be positive, got window={window}, "
                         f"stride={stride}, dilation={dilation}")
    effective = (window - 1) * dilation + 1
    if padding == "VALID":
        span = in_size - effective + stride
        out = span // stride if span >= 0 else -(-span // stride)  # C's truncating division, as TF
        if out < 0:
            raise ValueError(f"computed output size would be negative: input size {in_size} is smaller than the "
                             f"window ({effective} with dilation {dilation}) under VALID padding; use SAME "
                             f"padding or a smaller window")
        return out, 0, 0
    if padding != "SAME":
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + effective - in_size, 0)
    return out, total // 2, total - total // 2


def spatial_axes(data_format):
    """The (height, width) axes of a 4-D tensor in ``data_format``."""
    if data_format == "NHWC":
        return 1, 2
    if data_format == "NCHW":
        return 2, 3
    raise ValueError(f"data_format must be one of {DATA_FORMATS}, got {data_format!r}")


def channel_axis(data_format):
    return 3 if data_format == "NHWC" else 1


def spatial_params(values, data_format, what):
    """The (height, width) entries of a 4-element ``strides``/``ksize``/``dilations`` list.

    TF requires the batch and channel entries to be 1; a ValueError says so.
    """
    values = [int(v) for v in values]
    if len(values) != 4:
        raise ValueError(f"{what} must have 4 elements ({data_format} order), got {values}")
    h, w = spatial_axes(data_format)
    if values[0] != 1 or values[channel_axis(data_format)] != 1:
        raise ValueError(f"{what}={values}: {what} in the batch and channel dimensions must be 1 "
                         f"(data_format {data_format})")
    return values[h], values[w]


def expand_spatial(value, data_format, what):
    """TF1 accepts ``strides``/``ksize`` as an int, 2 ints (height, width) or 4 ints; returns 4 ints."""
    if isinstance(value, int):
        value = [value, value]
    value = [int(v) for v in value]
    if len(value) == 1:
        value = value * 2
    if len(value) == 2:
        spatial_axes(data_format)
        return [1, value[0], value[1], 1] if data_format == "NHWC" else [1, 1, value[0], value[1]]
    if len(value) == 4:
        return value
    raise ValueError(f"{what} must be an int or a list of 1, 2 or 4 ints, got {value}")
