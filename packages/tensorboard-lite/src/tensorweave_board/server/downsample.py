"""Server-side reduction of long scalar series for a chart of a given width, without losing peaks.

``minmax_indices`` keeps, per pixel-wide bucket of the visible x range, the first, last, smallest and
largest point (the M4 rule), so the drawn line is the same as if every point were drawn; zooming asks
again for a narrower range and reaches full resolution. ``ema`` is TensorBoard's debiased exponential
moving average, computed on every point rather than on a sample.
"""

import math

import numpy as np


def ema(values, weight):
    """Debiased EMA of ``values`` (non-finite values pass through and do not count), vectorized over chunks."""
    y = np.asarray(values, dtype=np.float64)
    if weight <= 0 or y.size == 0:
        return y.copy()
    weight = min(weight, 0.999999)
    finite = np.isfinite(y)
    x = y[finite]
    if x.size == 0:
        return y.copy()
    # Within a chunk s_k = w^(k+1) s_-1 + (1-w) w^k cumsum(x_j w^-j); w^-k must stay far below overflow.
    chunk = max(1, min(1 << 16, int(300 / -math.log(weight)), x.size))
    rows = -(-x.size // chunk)
    grid = np.zeros(rows * chunk)
    grid[:x.size] = x
    grid = grid.reshape(rows, chunk)
    powers = weight ** np.arange(chunk, dtype=np.float64)
    local = np.cumsum(grid / powers, axis=1)
    local *= (1 - weight) * powers  # each chunk's EMA as if it started from 0
    carry, last, decay = np.empty(rows), 0.0, weight ** chunk
    for i, end in enumerate(local[:, -1].tolist()):  # the value each chunk starts from
        carry[i] = last
        last = decay * last + end
    local += carry[:, None] * (weight * powers)
    out = local.reshape(-1)[:x.size]
    head = min(x.size, int(40 / -math.log(weight)) + 1)  # beyond, 1 - w^n rounds to exactly 1
    out[:head] /= 1 - weight ** np.arange(1, head + 1, dtype=np.float64)
    result = y.copy()
    result[finite] = out
    return result


def _visible(x, lo, hi):
    """The slice of sorted ``x`` in [lo, hi] (None: unbounded)."""
    i0 = 0 if lo is None else int(np.searchsorted(x, lo, side="left"))
    i1 = len(x) if hi is None else int(np.searchsorted(x, hi, side="right"))
    return i0, i1


def _bucket_of(xs, buckets):
    """The bucket (0 to ``buckets`` - 1, equal widths over their range) of each of the sorted ``xs``."""
    xs = np.asarray(xs, dtype=np.float64)
    span = xs[-1] - xs[0]
    if not 0 < span < np.inf:  # (one x, or a range wider than a float: scaled to avoid the overflow)
        if span <= 0:
            return np.zeros(xs.size, dtype=np.int64)
        xs = xs / 4
        span = xs[-1] - xs[0]
    return np.minimum(((xs - xs[0]) * (buckets / span)).astype(np.int64), buckets - 1)


def minmax_indices(x, y, lo=None, hi=None, buckets=1000):
    """Indices of the points to draw for x in [lo, hi] (``x`` sorted, ``y`` finite): every point if there
    are at most 4 per bucket, else each bucket's first, last, minimum and maximum. One point beyond each
    end of the range is kept so the line runs to the chart's edges."""
    i0, i1 = _visible(x, lo, hi)
    i0, i1 = max(0, i0 - 1), min(len(x), i1 + 1)
    if i1 - i0 <= 4 * buckets:
        return np.arange(i0, i1)
    ys = y[i0:i1]
    bucket = _bucket_of(x[i0:i1], buckets)
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    lengths = np.diff(np.r_[starts, ys.size])
    segment = np.repeat(np.arange(starts.size), lengths)
    chosen = [starts, starts + lengths - 1]
    for reduce in (np.minimum, np.maximum):
        extreme = reduce.reduceat(ys, starts)
        hits = np.flatnonzero(ys == extreme[segment])
        first = np.r_[True, segment[hits][1:] != segment[hits][:-1]]
        chosen.append(hits[first])
    return np.unique(np.concatenate(chosen)) + i0


def marker_indices(x, y, lo=None, hi=None, buckets=1000):
    """Indices of the non-finite points (``y`` NaN, +Inf or -Inf; ``x`` sorted) to mark for x in [lo, hi]:
    every one if there are at most ``buckets``, else the first of each kind in each bucket."""
    i0, i1 = _visible(x, lo, hi)
    if i1 - i0 <= buckets:
        return np.arange(i0, i1)
    ys = y[i0:i1]
    kind = np.where(np.isnan(ys), 0, np.where(ys > 0, 1, 2))
    return np.sort(np.unique(_bucket_of(x[i0:i1], buckets) * 3 + kind, return_index=True)[1]) + i0
