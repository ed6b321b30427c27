"""HistogramProto from values, with TensorFlow's default buckets: edges growing by 10% from 1e-12 to
1e20 on each side of zero, and runs of empty buckets merged, so histograms from any step line up."""

import numpy as np

from tensorweave_board import protos

_DBL_MAX = np.finfo(np.float64).max


def _default_limits():
    positive = [1e-12]
    while positive[-1] * 1.1 < 1e20:
        positive.append(positive[-1] * 1.1)
    positive.append(_DBL_MAX)
    negative = [-v for v in reversed(positive)]
    return np.array(negative + [0.0] + positive)


BUCKET_LIMITS = _default_limits()


def histogram_proto(values):
    """The HistogramProto of ``values`` (flattened); bucket i counts limit[i-1] <= v < limit[i]."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    proto = protos.HistogramProto()
    if v.size == 0:
        proto.min, proto.max = _DBL_MAX, -_DBL_MAX
        proto.bucket_limit.append(_DBL_MAX)
        proto.bucket.append(0.0)
        return proto
    proto.min, proto.max = float(v.min()), float(v.max())
    proto.num = float(v.size)
    proto.sum = float(v.sum())
    proto.sum_squares = float(np.dot(v, v))
    counts = np.bincount(np.searchsorted(BUCKET_LIMITS, v, side="right"), minlength=len(BUCKET_LIMITS))
    counts = counts[:len(BUCKET_LIMITS)].astype(np.float64)
    nonzero = counts > 0
    # A bucket is written when it is non-empty, or it is the last of a run of empty ones (which it then spans).
    keep = nonzero | np.append(nonzero[1:], True)
    proto.bucket_limit.extend(BUCKET_LIMITS[keep].tolist())
    proto.bucket.extend(counts[keep].tolist())
    return proto
