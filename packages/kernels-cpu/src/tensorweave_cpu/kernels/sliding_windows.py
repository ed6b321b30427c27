"""Sliding windows over NHWC arrays, shared by the convolution and pooling kernels.

Kernels move NCHW data to NHWC as views (no copy), work in NHWC, and move results back. Loops run over
window offsets (a few dozen at most), never over the batch or channels.
"""

from tensorweave.extension import spatial_paddings, spatial_params, window_geometry


def to_nhwc(x, data_format):
    return x.transpose(0, 2, 3, 1) if data_format == "NCHW" else x


def from_nhwc(x, data_format):
    return x.transpose(0, 3, 1, 2) if data_format == "NCHW" else x


def nhwc_shape(shape, data_format):
    """A 4-D shape given in ``data_format`` (any sequence of ints, a numpy or device array too) in NHWC order."""
    shape = tuple(int(d) for d in (shape.tolist() if hasattr(shape, "tolist") else shape))
    if len(shape) != 4:
        raise ValueError(f"expected a 4-D shape, got {list(shape)}")
    return (shape[0], shape[2], shape[3], shape[1]) if data_format == "NCHW" else shape


class Windows:
    """The windows of one call: output size, padding and where each window offset reads in the padded input."""

    __slots__ = ("in_shape", "window", "strides", "dilations", "out_h", "out_w", "pad_top", "pad_bottom",
                 "pad_left", "pad_right")

    def __init__(self, in_shape, window, strides, dilations, paddings):
        """``paddings``: "SAME" or "VALID" for both axes, or the (height, width) paddings, each one of those or
        a (before, after) pair."""
        if isinstance(paddings, str):
            paddings = (paddings, paddings)
        self.in_shape = tuple(in_shape)
        self.window, self.strides, self.dilations = tuple(window), tuple(strides), tuple(dilations)
        _, h, w, _ = self.in_shape
        self.out_h, self.pad_top, self.pad_bottom = window_geometry(h, window[0], strides[0], dilations[0],
                                                                    paddings[0])
        self.out_w, self.pad_left, self.pad_right = window_geometry(w, window[1], strides[1], dilations[1],
                                                                    paddings[1])

    @classmethod
    def from_attrs(cls, in_shape, window, strides, dilations, padding, data_format, explicit_paddings=()):
        """From a node's 4-element ``strides``/``dilations`` attrs and its ``padding`` (with
        ``explicit_paddings`` for EXPLICIT); ``window`` is the (height, width) pair."""
        strides = spatial_params(strides, data_format, "strides")
        dilations = spatial_params(dilations, data_format, "dilations") if dilations is not None else (1, 1)
        return cls(in_shape, window, strides, dilations, spatial_paddings(padding, explicit_paddings, data_format))

    @property
    def out_shape(self):
        return (self.in_shape[0], self.out_h, self.out_w, self.in_shape[3])

    @property
    def padded_shape(self):
        n, h, w, c = self.in_shape
        return (n, h + self.pad_top + self.pad_bottom, w + self.pad_left + self.pad_right, c)

    @property
    def is_padded(self):
        return (self.pad_top, self.pad_bottom, self.pad_left, self.pad_right) != (0, 0, 0, 0)

    def pad(self, x, xp, value=0):
        if not self.is_padded:
            return x
        out = xp.full(self.padded_shape, value, dtype=x.dtype)
        self.crop(out)[...] = x
        return out

    def crop(self, padded):
        _, h, w, _ = self.in_shape
        return padded[:, self.pad_top:self.pad_top + h, self.pad_left:self.pad_left + w, :]

    def patches(self, padded, xp):
        """A [N, out_h, out_w, kh, kw, C] view of every window (no copy)."""
        n, _, _, c = padded.shape
        s0, s1, s2, s3 = padded.strides
        (sh, sw), (dh, dw) = self.strides, self.dilations
        return xp.lib.stride_tricks.as_strided(
            padded, shape=(n, self.out_h, self.out_w, self.window[0], self.window[1], c),
            strides=(s0, s1 * sh, s2 * sw, s1 * dh, s2 * dw, s3), writeable=False)

    def offsets(self):
        """(i, j, rows, cols) for each window offset: ``padded[:, rows, cols]`` is what offset (i, j) sees."""
        (sh, sw), (dh, dw) = self.strides, self.dilations
        for i in range(self.window[0]):
            rows = _strided(i * dh, self.out_h, sh)
            for j in range(self.window[1]):
                yield i, j, rows, _strided(j * dw, self.out_w, sw)

    def valid_counts(self, xp, dtype):
        """How many non-padding elements each window covers, shaped [1, out_h, out_w, 1]."""
        _, h, w, _ = self.in_shape

        def along(size, out, window, stride, pad):
            starts = xp.arange(out) * stride - pad
            return xp.minimum(starts + window, size) - xp.maximum(starts, 0)

        rows = along(h, self.out_h, self.window[0], self.strides[0], self.pad_top)
        cols = along(w, self.out_w, self.window[1], self.strides[1], self.pad_left)
        return (rows[:, None] * cols[None, :]).astype(dtype)[None, :, :, None]


def _strided(start, count, stride):
    return slice(start, start + (count - 1) * stride + 1 if count else start, stride)
