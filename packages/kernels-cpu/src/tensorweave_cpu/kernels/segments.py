"""CPU kernels for segment reductions: sum, mean, max, min and prod of the rows of data grouped by segment ids,
sorted (Segment*: ids a non-decreasing vector, output rows up to the last id) or not (UnsortedSegment*: ids of
any shape prefixing data's, ``num_segments`` rows, negative ids dropped).

Empty segments get what TF gives them: 0 in sorted sums, means, maxima and minima, 1 in products; in unsorted
ones 0 for sums, 1 for products and the lowest (max) or highest (min) finite value of the type.
"""

import numpy as np

from tensorweave.extension import KernelSet

from tensorweave_cpu.kernels.reductions import _accumulator

KERNELS = KernelSet("CPU")


def _extreme(dtype, high):
    """The highest or lowest finite value of the type (TF's Eigen::NumTraits lowest/highest, not infinities)."""
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.max if high else info.min


def _reduce(data, ids, count, how):
    """Rows of ``data`` (flattened over ids' shape) combined into ``count`` rows by id, negative ids dropped.
    Returns (result, rows per segment)."""
    flat_ids = ids.reshape(-1)
    inner = data.shape[ids.ndim:]
    rows = data.reshape((flat_ids.size,) + inner)
    too_big = flat_ids >= count
    if too_big.any():
        at = int(np.argmax(too_big))
        raise ValueError(f"segment_ids[{at}] = {int(flat_ids[at])} is out of range [0, {count})")
    kept = flat_ids >= 0
    if not kept.all():
        flat_ids, rows = flat_ids[kept], rows[kept]
    dtype = np.dtype(data.dtype)
    accumulate = _accumulator(dtype)
    ufunc, initial = {"sum": (np.add, 0), "mean": (np.add, 0), "prod": (np.multiply, 1),
                      "max": (np.maximum, _extreme(dtype, False)), "min": (np.minimum, _extreme(dtype, True))}[how]
    out = np.full((count,) + inner, initial, dtype=accumulate)
    ufunc.at(out, flat_ids, rows.astype(accumulate, copy=False))
    sizes = np.bincount(flat_ids, minlength=count)
    if how == "mean":
        divisor = np.maximum(sizes, 1).reshape((count,) + (1,) * len(inner))
        out = out / divisor  # integer means truncate toward zero in the cast below, as TF's
    return out.astype(dtype, copy=False), sizes


def _unsorted(how):
    def compute(data, segment_ids, num_segments):
        if data.shape[:segment_ids.ndim] != segment_ids.shape:
            raise ValueError(f"segment_ids of shape {segment_ids.shape} must be a prefix of data's shape "
                             f"{data.shape}")
        count = int(num_segments)
        if count < 0:
            raise ValueError(f"num_segments must be non-negative, got {count}")
        return _reduce(data, segment_ids, count, how)[0]
    return compute


def _sorted(how):
    def compute(data, segment_ids):
        if segment_ids.ndim != 1 or data.ndim < 1 or segment_ids.shape[0] != data.shape[0]:
            raise ValueError(f"segment_ids must be a vector with one entry per row of data: shapes "
                             f"{segment_ids.shape} and {data.shape}")
        if segment_ids.size and (segment_ids[0] < 0 or (np.diff(segment_ids) < 0).any()):
            raise ValueError(f"segment ids must be non-negative and sorted (non-decreasing); use "
                             f"tf.unsorted_segment_{how} for unsorted ids")
        count = int(segment_ids[-1]) + 1 if segment_ids.size else 0
        out, sizes = _reduce(data, segment_ids, count, how)
        if how in ("max", "min"):
            out[sizes == 0] = 0
        return out
    return compute


for _how in ("sum", "mean", "max", "min", "prod"):
    KERNELS.add(f"Segment{_how.capitalize()}", _sorted(_how))
for _how in ("max", "min", "prod"):
    KERNELS.add(f"UnsortedSegment{_how.capitalize()}", _unsorted(_how))
_unsorted_segment_sum = KERNELS.register("UnsortedSegmentSum")(_unsorted("sum"))
"""The CPU's UnsortedSegmentSum, which the GPU package's tests replay (same layout, same errors)."""


def _sparse_segment(how):
    """SparseSegment{Sum,Mean,SqrtN}: rows data[indices] grouped by sorted segment_ids (and a kernel for the
    WithNumSegments form)."""
    def compute(data, indices, segment_ids, num_segments=None):
        indices, segment_ids = indices.reshape(-1), segment_ids.reshape(-1)
        if indices.shape != segment_ids.shape:
            raise ValueError(f"indices ({indices.size}) and segment_ids ({segment_ids.size}) must have one entry "
                             f"each for the same rows")
        bad = (indices < 0) | (indices >= data.shape[0])
        if bad.any():
            at = int(np.argmax(bad))
            raise ValueError(f"indices[{at}] = {int(indices[at])} is out of range [0, {data.shape[0]})")
        if segment_ids.size and (segment_ids[0] < 0 or (np.diff(segment_ids) < 0).any()):
            raise ValueError("segment ids are not increasing: sparse segment reductions need sorted, non-negative "
                             "segment_ids")
        count = int(num_segments) if num_segments is not None else (
            int(segment_ids[-1]) + 1 if segment_ids.size else 0)
        out, sizes = _reduce(data[indices], segment_ids, count, "sum")
        if how != "sum":
            scale = np.maximum(sizes, 1).astype(out.dtype)
            out = out / (scale if how == "mean" else np.sqrt(scale)).reshape((count,) + (1,) * (out.ndim - 1))
        return out.astype(data.dtype, copy=False)

    def without_count(data, indices, segment_ids):
        return compute(data, indices, segment_ids)

    def with_count(data, indices, segment_ids, num_segments):
        return compute(data, indices, segment_ids, num_segments)
    return without_count, with_count


for _how, _name in (("sum", "Sum"), ("mean", "Mean"), ("sqrt_n", "SqrtN")):
    _kernels = _sparse_segment(_how)
    KERNELS.add(f"SparseSegment{_name}", _kernels[0])
    KERNELS.add(f"SparseSegment{_name}WithNumSegments", _kernels[1])
