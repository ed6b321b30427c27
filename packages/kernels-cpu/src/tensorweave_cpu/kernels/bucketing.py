"""CPU kernels for counting into buckets: Bincount, HistogramFixedWidth (TF's bin arithmetic in float64), and
LowerBound/UpperBound (numpy's searchsorted, row by row)."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset()
"""None: the per-row searches and minlength bincounts are numpy's."""


@KERNELS.register("Bincount")
def _bincount(arr, size, weights):
    size = int(size)
    if size < 0:
        raise ValueError(f"Bincount: size must be non-negative, got {size}")
    if (arr < 0).any():
        raise ValueError(f"Bincount: arr must be non-negative, got {int(arr.min())}")
    keep = arr < size
    flat = arr[keep]
    if weights.size:
        if weights.shape != arr.shape:
            raise ValueError(f"Bincount: weights of shape {list(weights.shape)} must be empty or have arr's shape "
                             f"{list(arr.shape)}")
        return np.bincount(flat, weights[keep], minlength=size)[:size].astype(weights.dtype)
    return np.bincount(flat, minlength=size)[:size].astype(weights.dtype)


@KERNELS.register("HistogramFixedWidth")
def _histogram_fixed_width(values, value_range, nbins, *, dtype):
    nbins = int(nbins)
    if nbins <= 0:
        raise ValueError(f"HistogramFixedWidth: nbins must be positive, got {nbins}")
    low, high = (float(v) for v in value_range)
    if not low < high:
        raise ValueError(f"HistogramFixedWidth: value_range must be increasing, got {value_range.tolist()}")
    step = (high - low) / nbins
    index = np.minimum((np.maximum(values.astype(np.float64), low) - low) / step, nbins - 1).astype(np.int32)
    return np.bincount(index.reshape(-1), minlength=nbins).astype(dtype.as_numpy_dtype)


def _bound(op_type, side):
    @KERNELS.register(op_type)
    def compute(sorted_inputs, values, *, out_type):
        if sorted_inputs.ndim != 2 or values.ndim != 2 or sorted_inputs.shape[0] != values.shape[0]:
            raise ValueError(f"{op_type}: sorted_inputs {list(sorted_inputs.shape)} and values "
                             f"{list(values.shape)} must be matrices with the same number of rows")
        out = np.empty(values.shape, out_type.as_numpy_dtype)
        for row in range(values.shape[0]):
            out[row] = np.searchsorted(sorted_inputs[row], values[row], side=side)
        return out


_bound("LowerBound", "left")
_bound("UpperBound", "right")
