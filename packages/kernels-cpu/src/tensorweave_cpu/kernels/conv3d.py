"""CPU kernels for 3-D convolution and pooling (Conv3D and its backward ops, MaxPool3D, AvgPool3D and their
gradients), one vectorized step per window offset over NDHWC arrays (NCDHW moves there as a view).

Convolutions multiply each offset's [N, od, oh, ow, C] slice by the filter's [C, out] tap (a GEMM); pooling
pads with the lowest value (max) or divides by the count of valid cells (average), as TF.
"""

import itertools

import numpy as np

from tensorweave.extension import KernelSet, window_geometry

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2", "MaxPool3D",
                                     "AvgPool3D", "MaxPool3DGrad", "MaxPool3DGradGrad", "AvgPool3DGrad"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""

_FLOATS = ["float16", "float32", "float64"]


def _to_last(x, data_format):
    return x.transpose(0, 2, 3, 4, 1) if data_format == "NCDHW" else x


def _from_last(x, data_format):
    return x.transpose(0, 4, 1, 2, 3) if data_format == "NCDHW" else x


def _spatial(values, data_format, what):
    values = [int(v) for v in values]
    axes = (1, 2, 3) if data_format == "NDHWC" else (2, 3, 4)
    channel = 4 if data_format == "NDHWC" else 1
    if len(values) != 5 or values[0] != 1 or values[channel] != 1:
        raise ValueError(f"{what}={values}: must be 5 ints in {data_format} order with 1 for batch and channels")
    return tuple(values[a] for a in axes)


def _last_shape(shape, data_format):
    shape = tuple(int(d) for d in (shape.tolist() if hasattr(shape, "tolist") else shape))
    if len(shape) != 5:
        raise ValueError(f"expected a 5-D shape, got {list(shape)}")
    return (shape[0], shape[2], shape[3], shape[4], shape[1]) if data_format == "NCDHW" else shape


class Volumes:
    """The windows of one 3-D call over an NDHWC ``in_shape``: output size, padding, and each offset's slices."""

    def __init__(self, in_shape, window, strides, dilations, padding):
        self.in_shape, self.window, self.strides, self.dilations = tuple(in_shape), window, strides, dilations
        geometry = [window_geometry(size, k, s, d, padding)
                    for size, k, s, d in zip(in_shape[1:4], window, strides, dilations)]
        self.out = tuple(g[0] for g in geometry)
        self.pads = tuple((g[1], g[2]) for g in geometry)

    @property
    def out_shape(self):
        return (self.in_shape[0], *self.out, self.in_shape[4])

    @property
    def padded_shape(self):
        return (self.in_shape[0], *(n + a + b for n, (a, b) in zip(self.in_shape[1:4], self.pads)),
                self.in_shape[4])

    def _inner(self):
        return tuple(slice(a, a + n) for n, (a, _) in zip(self.in_shape[1:4], self.pads))

    def pad(self, x, xp, value=0):
        if not any(a or b for a, b in self.pads):
            return x
        out = xp.full(self.padded_shape, value, dtype=x.dtype)
        out[(slice(None), *self._inner())] = x
        return out

    def crop(self, padded):
        return padded[(slice(None), *self._inner())]

    def offsets(self):
        """(offset, index): ``padded[index]`` is the [N, od, oh, ow, C] slice that window offset ``offset`` sees."""
        for offset in itertools.product(*(range(k) for k in self.window)):
            index = tuple(slice(i * d, i * d + (n - 1) * s + 1 if n else i * d, s)
                          for i, d, n, s in zip(offset, self.dilations, self.out, self.strides))
            yield offset, (slice(None), *index)

    def valid_counts(self, xp, dtype):
        counts = None
        for axis, (size, out, k, s, (pad, _)) in enumerate(zip(self.in_shape[1:4], self.out, self.window,
                                                                 self.strides, self.pads)):
            starts = xp.arange(out) * s - pad
            along = xp.minimum(starts + k, size) - xp.maximum(starts, 0)
            shape = [1, 1, 1, 1, 1]
            shape[axis + 1] = out
            along = along.reshape(shape)
            counts = along if counts is None else counts * along
        return counts.astype(dtype)


def _conv_volumes(in_shape, filter_shape, strides, dilations, padding, data_format):
    if len(filter_shape) != 5 or in_shape[4] != filter_shape[3]:
        raise ValueError(f"conv3d: input depth {in_shape[4]} (NDHWC shape {list(in_shape)}) does not match the "
                         f"filter's in_channels (filter shape {list(filter_shape)}, [d, h, w, in, out])")
    return Volumes(in_shape, tuple(filter_shape[:3]), _spatial(strides, data_format, "strides"),
                   _spatial(dilations, data_format, "dilations"), padding)


def _check(dy, want, what):
    if tuple(dy.shape) != tuple(want):
        raise ValueError(f"{what} has shape {list(dy.shape)} (NDHWC order), but the forward op gives {list(want)}")


@KERNELS.register("Conv3D", dtypes=_FLOATS)
def _conv3d(x, w, *, strides, padding, data_format, dilations, xp):
    x = _to_last(x, data_format)
    volumes = _conv_volumes(x.shape, w.shape, strides, dilations, padding, data_format)
    padded = volumes.pad(x, xp)
    out = xp.zeros(volumes.out_shape[:4] + (w.shape[4],), dtype=x.dtype)
    for (i, j, k), index in volumes.offsets():
        out += padded[index] @ w[i, j, k]
    return _from_last(out, data_format)


@KERNELS.register("Conv3DBackpropInputV2", dtypes=_FLOATS)
def _conv3d_backprop_input(input_sizes, w, dy, *, strides, padding, data_format, dilations, xp):
    volumes = _conv_volumes(_last_shape(input_sizes, data_format), w.shape, strides, dilations, padding, data_format)
    dy = _to_last(dy, data_format)
    _check(dy, volumes.out_shape[:4] + (w.shape[4],), "out_backprop")
    d_padded = xp.zeros(volumes.padded_shape, dtype=dy.dtype)
    for (i, j, k), index in volumes.offsets():
        d_padded[index] += dy @ w[i, j, k].T
    return _from_last(volumes.crop(d_padded), data_format)


@KERNELS.register("Conv3DBackpropFilterV2", dtypes=_FLOATS)
def _conv3d_backprop_filter(x, filter_sizes, dy, *, strides, padding, data_format, dilations, xp):
    filter_shape = tuple(int(d) for d in filter_sizes)
    x = _to_last(x, data_format)
    volumes = _conv_volumes(x.shape, filter_shape, strides, dilations, padding, data_format)
    dy = _to_last(dy, data_format)
    _check(dy, volumes.out_shape[:4] + (filter_shape[4],), "out_backprop")
    padded = volumes.pad(x, xp)
    dy_rows = dy.reshape(-1, filter_shape[4])
    d_filter = xp.zeros(filter_shape, dtype=dy.dtype)
    for (i, j, k), index in volumes.offsets():
        d_filter[i, j, k] = padded[index].reshape(-1, filter_shape[3]).T @ dy_rows
    return d_filter


def _pool_volumes(in_shape, ksize, strides, padding, data_format):
    return Volumes(in_shape, _spatial(ksize, data_format, "ksize"), _spatial(strides, data_format, "strides"),
                   (1, 1, 1), padding)


def _lowest(dtype):
    return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


@KERNELS.register("MaxPool3D", dtypes=_FLOATS)
def _max_pool3d(x, *, ksize, strides, padding, data_format, xp):
    x = _to_last(x, data_format)
    volumes = _pool_volumes(x.shape, ksize, strides, padding, data_format)
    padded = volumes.pad(x, xp, _lowest(x.dtype))
    out = None
    for _, index in volumes.offsets():
        out = padded[index].copy() if out is None else xp.maximum(out, padded[index], out=out)
    return _from_last(out, data_format)


@KERNELS.register("AvgPool3D", dtypes=_FLOATS)
def _avg_pool3d(x, *, ksize, strides, padding, data_format, xp):
    x = _to_last(x, data_format)
    volumes = _pool_volumes(x.shape, ksize, strides, padding, data_format)
    padded = volumes.pad(x, xp)
    total = xp.zeros(volumes.out_shape, dtype=x.dtype)
    for _, index in volumes.offsets():
        total += padded[index]
    return _from_last(total / volumes.valid_counts(xp, x.dtype), data_format)


def _first_max_hits(x, out, volumes, xp):
    """(index, hit) per window offset: hit marks the windows whose first maximum sits at that offset."""
    padded = volumes.pad(x, xp, _lowest(x.dtype))
    taken = xp.zeros(volumes.out_shape, dtype=bool)
    for _, index in volumes.offsets():
        hit = (padded[index] == out) & ~taken
        taken |= hit
        yield index, hit


@KERNELS.register("MaxPool3DGrad", dtypes=_FLOATS)
def _max_pool3d_grad(x, out, grad, *, ksize, strides, padding, data_format, xp):
    x, out, grad = (_to_last(t, data_format) for t in (x, out, grad))
    volumes = _pool_volumes(x.shape, ksize, strides, padding, data_format)
    _check(grad, volumes.out_shape, "grad")
    d_padded = xp.zeros(volumes.padded_shape, dtype=grad.dtype)
    for index, hit in _first_max_hits(x, out, volumes, xp):  # each window's gradient goes to its first maximum
        d_padded[index] += grad * hit
    return _from_last(volumes.crop(d_padded), data_format)


@KERNELS.register("MaxPool3DGradGrad", dtypes=_FLOATS)
def _max_pool3d_grad_grad(x, out, grad, *, ksize, strides, padding, data_format, xp):
    x, out, grad = (_to_last(t, data_format) for t in (x, out, grad))
    volumes = _pool_volumes(x.shape, ksize, strides, padding, data_format)
    _check(grad, x.shape, "grad")
    grad_padded = volumes.pad(grad, xp)
    result = xp.zeros(volumes.out_shape, dtype=grad.dtype)
    for index, hit in _first_max_hits(x, out, volumes, xp):
        xp.copyto(result, grad_padded[index], where=hit)
    return _from_last(result, data_format)


@KERNELS.register("AvgPool3DGrad", dtypes=_FLOATS)
def _avg_pool3d_grad(orig_input_shape, grad, *, ksize, strides, padding, data_format, xp):
    volumes = _pool_volumes(_last_shape(orig_input_shape, data_format), ksize, strides, padding, data_format)
    grad = _to_last(grad, data_format)
    _check(grad, volumes.out_shape, "grad")
    share = grad / volumes.valid_counts(xp, grad.dtype)
    d_padded = xp.zeros(volumes.padded_shape, dtype=grad.dtype)
    for _, index in volumes.offsets():
        d_padded[index] += share
    return _from_last(volumes.crop(d_padded), data_format)
