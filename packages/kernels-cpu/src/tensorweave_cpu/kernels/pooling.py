"""CPU kernels for max and average pooling and their gradients, one vectorized step per window offset.

Max pooling pads with the dtype's lowest value and average pooling divides by the number of valid
(non-padding) elements, as TF does; gradients of max pooling go to the first maximum of each window.
"""

import numpy as np

from tensorweave.extension import KernelSet, pool_paddings, spatial_params

from tensorweave_cpu.kernels.sliding_windows import Windows, from_nhwc, nhwc_shape, to_nhwc

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"AvgPool", "AvgPoolGrad", "MaxPool", "MaxPoolGrad", "MaxPoolGradGrad"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""

_FLOATS = ["float16", "float32", "float64"]
_REAL = _FLOATS + ["int8", "int16", "int32", "int64", "uint8"]


def pool_windows(in_shape, ksize, strides, padding, data_format, explicit_paddings=()):
    """The pooling windows over an NHWC ``in_shape``, with the attr checks every device's kernels make."""
    window = spatial_params(ksize, data_format, "ksize")
    return Windows(in_shape, window, spatial_params(strides, data_format, "strides"), (1, 1),
                   pool_paddings(padding, explicit_paddings, data_format, window))


def _lowest(dtype):
    return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


def check_grad(grad, windows):
    """Refuses an NHWC ``grad`` (an array or view on any device) that is not the pooling's output shape."""
    if grad.shape != windows.out_shape:
        raise ValueError(f"grad has shape {list(grad.shape)} (NHWC order), but pooling gives {list(windows.out_shape)}")


@KERNELS.register("MaxPool", dtypes=_REAL)
def _max_pool(x, *, ksize, strides, padding, data_format, xp, explicit_paddings=()):
    x = to_nhwc(x, data_format)
    windows = pool_windows(x.shape, ksize, strides, padding, data_format, explicit_paddings)
    padded = windows.pad(x, xp, _lowest(x.dtype))
    out = None
    for _, _, rows, cols in windows.offsets():
        if out is None:
            out = padded[:, rows, cols, :].copy()
        else:
            xp.maximum(out, padded[:, rows, cols, :], out=out)
    return from_nhwc(out, data_format)


@KERNELS.register("AvgPool", dtypes=_FLOATS)
def _avg_pool(x, *, ksize, strides, padding, data_format, xp):
    x = to_nhwc(x, data_format)
    windows = pool_windows(x.shape, ksize, strides, padding, data_format)
    padded = windows.pad(x, xp)
    total = xp.zeros(windows.out_shape, dtype=x.dtype)
    for _, _, rows, cols in windows.offsets():
        total += padded[:, rows, cols, :]
    total /= windows.valid_counts(xp, x.dtype)
    return from_nhwc(total, data_format)


def _first_max_masks(x, out, windows, xp):
    """Yields (rows, cols, mask): mask marks the windows whose first maximum sits at this offset."""
    padded = windows.pad(x, xp, _lowest(x.dtype))
    offsets = list(windows.offsets())
    taken = None
    for k, (_, _, rows, cols) in enumerate(offsets):
        hit = padded[:, rows, cols, :] == out
        if taken is None:
            taken = hit.copy()
        else:
            xp.greater(hit, taken, out=hit)  # hit and not taken
            if k < len(offsets) - 1:
                taken |= hit
        yield rows, cols, hit


@KERNELS.register("MaxPoolGrad", dtypes=_REAL)
def _max_pool_grad(x, out, grad, *, ksize, strides, padding, data_format, xp, explicit_paddings=()):
    x, out, grad = (to_nhwc(t, data_format) for t in (x, out, grad))
    windows = pool_windows(x.shape, ksize, strides, padding, data_format, explicit_paddings)
    check_grad(grad, windows)
    d_padded = xp.zeros(windows.padded_shape, dtype=grad.dtype)
    disjoint = all(s >= k for s, k in zip(windows.strides, windows.window))
    for rows, cols, hit in _first_max_masks(x, out, windows, xp):
        if disjoint:  # each input cell is in one window at most: write instead of accumulate
            xp.multiply(grad, hit, out=d_padded[:, rows, cols, :])
        else:
            d_padded[:, rows, cols, :] += grad * hit
    return from_nhwc(windows.crop(d_padded), data_format)


@KERNELS.register("MaxPoolGradGrad", dtypes=_REAL)
def _max_pool_grad_grad(x, out, grad, *, ksize, strides, padding, data_format, xp, explicit_paddings=()):
    x, out, grad = (to_nhwc(t, data_format) for t in (x, out, grad))
    windows = pool_windows(x.shape, ksize, strides, padding, data_format, explicit_paddings)
    grad_padded = windows.pad(grad, xp)
    result = xp.zeros(windows.out_shape, dtype=grad.dtype)
    for rows, cols, hit in _first_max_masks(x, out, windows, xp):
        xp.copyto(result, grad_padded[:, rows, cols, :], where=hit)
    return from_nhwc(result, data_format)


@KERNELS.register("AvgPoolGrad", dtypes=_FLOATS)
def _avg_pool_grad(orig_input_shape, grad, *, ksize, strides, padding, data_format, xp):
    in_shape = nhwc_shape(orig_input_shape, data_format)
    grad = to_nhwc(grad, data_format)
    windows = pool_windows(in_shape, ksize, strides, padding, data_format)
    check_grad(grad, windows)
    share = grad / windows.valid_counts(xp, grad.dtype)
    d_padded = xp.zeros(windows.padded_shape, dtype=grad.dtype)
    for _, _, rows, cols in windows.offsets():
        d_padded[:, rows, cols, :] += share
    return from_nhwc(windows.crop(d_padded), data_format)
