"""The sliding-window arithmetic shared by convolution and pooling: TF's output sizes and its SAME, VALID and
explicit paddings.

Shape functions and kernels both use it, so a graph's static shapes always match what kernels compute.
"""

DATA_FORMATS = ("NHWC", "NCHW")


def window_geometry(in_size, window, stride, dilation=1, padding="VALID"):
    """(output size, padding before, padding after) along one spatial axis, as TF computes them.

    ``padding`` is "VALID", "SAME" (output = ceil(in / stride), the odd element of padding after: bottom/right)
    or an explicit (before, after) pair.
    """
    if window < 1 or stride < 1 or dilation < 1:
        raise ValueError(f"window size, stride and dilation must be positive, got window={window}, "
                         f"stride={stride}, dilation={dilation}")
    effective = (window - 1) * dilation + 1
    if padding == "SAME":
        out = (in_size + stride - 1) // stride
        total = max((out - 1) * stride + effective - in_size, 0)
        return out, total // 2, total - total // 2
    if padding == "VALID":
        before, after = 0, 0
    elif isinstance(padding, (tuple, list)) and len(padding) == 2:
        before, after = (int(p) for p in padding)
    else:
        raise ValueError(f"padding must be 'SAME', 'VALID' or a (before, after) pair, got {padding!r}")
    span = in_size + before + after - effective + stride
    out = span // stride if span >= 0 else -(-span // stride)  # C's truncating division, as TF
    if out < 0 or (padding != "VALID" and span < stride):  # TF lets VALID, not explicit padding, give 0 windows
        padded = "under VALID padding" if padding == "VALID" else f"with padding {before} + {after}"
        remedy = "use SAME padding" if padding == "VALID" else "pad more"
        raise ValueError(f"computed output size would be negative: input size {in_size} {padded} is smaller than "
                         f"the window ({effective} with dilation {dilation}); {remedy} or use a smaller window")
    return out, before, after


def spatial_paddings(padding, explicit_paddings, data_format):
    """The (height, width) paddings of a window op for ``window_geometry``: ``padding`` itself for SAME and
    VALID; for EXPLICIT, the (before, after) pairs of the spatial axes of the 8 ``explicit_paddings``.

    TF's rules: explicit paddings are non-negative and zero on the batch and channel axes, and are given only
    with EXPLICIT padding. A ValueError says which one failed.
    """
    explicit_paddings = [int(p) for p in explicit_paddings or ()]
    if padding != "EXPLICIT":
        if explicit_paddings:
            raise ValueError(f"explicit_paddings {explicit_paddings} are given only with padding 'EXPLICIT' "
                             f"(padding is {padding!r})")
        return padding, padding
    if len(explicit_paddings) != 8:
        raise ValueError(f"explicit_paddings must hold 8 values ((before, after) for each of the 4 dimensions in "
                         f"{data_format} order), got {explicit_paddings}")
    if any(p < 0 for p in explicit_paddings):
        raise ValueError(f"All elements of explicit_paddings must be nonnegative, got {explicit_paddings}")
    pairs = [tuple(explicit_paddings[i:i + 2]) for i in range(0, 8, 2)]
    if pairs[0] != (0, 0) or pairs[channel_axis(data_format)] != (0, 0):
        raise ValueError(f"Nonzero explicit padding in the batch or depth dimensions is not supported: padding "
                         f"{[list(p) for p in pairs]} in {data_format} order pads only the spatial dimensions")
    height, width = spatial_axes(data_format)
    return pairs[height], pairs[width]


def pool_paddings(padding, explicit_paddings, data_format, window):
    """spatial_paddings for a max pooling of (height, width) ``window``: TF also requires each explicit padding
    to be smaller than the window, so every window holds at least one element of the input."""
    paddings = spatial_paddings(padding, explicit_paddings, data_format)
    if padding == "EXPLICIT":
        for (before, after), size, axis in zip(paddings, window, ("height", "width")):
            if max(before, after) >= size:
                raise ValueError(f"explicit padding ({before}, {after}) along the {axis} needs to be smaller than "
                                 f"the window size {size} (a window must not hold padding only)")
    return paddings


def padding_attrs(padding):
    """(padding, explicit_paddings) attrs from a wrapper's ``padding``: "SAME"/"VALID", or TF's explicit form,
    a list of 4 [before, after] pairs in the data format's order (which becomes "EXPLICIT")."""
    if isinstance(padding, str):
        if padding == "EXPLICIT":
            raise ValueError("'EXPLICIT' is not a valid value for padding: to pad explicitly, pass padding as a "
                             "list of 4 [before, after] pairs, e.g. [[0, 0], [1, 0], [0, 1], [0, 0]] for NHWC")
        return padding, []
    if not isinstance(padding, (list, tuple)):
        raise TypeError(f"padding must be 'SAME', 'VALID' or a list of 4 [before, after] pairs, got {padding!r}")
    flat = []
    for i, pair in enumerate(padding):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(f"When padding is a list, each element must be a [before, after] pair; element {i} "
                             f"of {padding} is {pair!r}")
        flat.extend(int(p) for p in pair)
    if len(padding) != 4:
        raise ValueError(f"When padding is a list, it must hold 4 [before, after] pairs (one per dimension, in "
                         f"the data format's order), got {len(padding)}: {padding}")
    return "EXPLICIT", flat


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
