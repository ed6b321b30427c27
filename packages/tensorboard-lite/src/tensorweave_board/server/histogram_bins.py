"""Histograms for display: each step's buckets spread over one set of bins shared by every step, each
bucket's mass uniform over its range (clipped to the data's min and max), as TensorBoard draws them.

Whatever a foreign writer put in a HistogramProto is served: a NaN or infinite min or max is replaced by
the edges of the outermost nonempty buckets, limits out of order are sorted, NaN or negative counts count
as empty, and a histogram with nothing finite to place is sent with zero counts. The work is linear in
buckets plus bins per step (the mass is read off the buckets' cumulative sum), however many of each."""

import math

import numpy as np


def data_range(hmin, hmax, num, limits, counts):
    """(lo, hi), the finite range a histogram's data spans, or None (empty, or nothing finite to go by)."""
    if not num > 0:
        return None
    lo, hi = hmin, hmax
    if not (math.isfinite(lo) and math.isfinite(hi)):
        k = min(len(limits), len(counts))
        limits, counts = np.asarray(limits[:k], np.float64), np.asarray(counts[:k], np.float64)
        full = np.flatnonzero(np.isfinite(counts) & (counts > 0) & ~np.isnan(limits))
        if not full.size:
            return None
        first, last = int(full[0]), int(full[-1])
        if not math.isfinite(lo):
            left = limits[first - 1] if first > 0 else -math.inf
            lo = left if math.isfinite(left) else limits[first]
        if not math.isfinite(hi):
            hi = limits[last] if math.isfinite(limits[last]) else limits[last - 1] if last > 0 else math.nan
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        return None
    return float(lo), float(hi)


def rebin(lo, hi, limits, counts, edges):
    """The counts of a histogram (data in [lo, hi]; bucket i ends at ``limits[i]``) over ``edges``."""
    out = np.zeros(len(edges) - 1)
    k = min(len(limits), len(counts))
    if k == 0:
        return out
    limits, counts = np.asarray(limits[:k], np.float64), np.asarray(counts[:k], np.float64)
    placed = ~np.isnan(limits)
    if not placed.all():
        limits, counts = limits[placed], counts[placed]
    if limits.size > 1 and (limits[1:] < limits[:-1]).any():
        order = np.argsort(limits, kind="stable")
        limits, counts = limits[order], counts[order]
    counts = np.where(np.isfinite(counts) & (counts > 0), counts, 0.0)
    rights = np.clip(limits, lo, hi)
    lefts = np.concatenate([[lo], rights[:-1]])
    wide = rights > lefts
    if not wide.all():  # a bucket with no width (outside [lo, hi], or one value): its bin takes it all
        at = np.clip(np.searchsorted(edges, lefts[~wide], side="right") - 1, 0, out.size - 1)
        out += np.bincount(at, weights=counts[~wide], minlength=out.size)
    if wide.any():  # the others are end to end: the mass below x is linear between their ends
        knots = np.concatenate([lefts[wide][:1], rights[wide]])
        below = np.concatenate([[0.0], np.cumsum(counts[wide])])
        out += np.diff(np.interp(edges, knots, below))
    return np.nan_to_num(out, copy=False, nan=0.0, posinf=0.0, neginf=0.0)  # (spans beyond float range)


def histogram_view(items, bins, steps):
    """At most ``steps`` of a tag's histograms (spread evenly over them) with their counts over ``bins``
    bins spanning them all: {'edges', 'histograms': [{'step', 'wall', 'min', 'max', 'num', 'counts'}]}."""
    if len(items) > steps:
        items = [items[int(round(i))] for i in np.linspace(0, len(items) - 1, steps)]
    ranges = [data_range(hmin, hmax, num, limits, counts) for _, _, hmin, hmax, num, _, _, limits, counts in items]
    lo = min((r[0] for r in ranges if r), default=0.0)
    hi = max((r[1] for r in ranges if r), default=1.0)
    hi = hi if hi > lo else lo + max(1.0, abs(lo) * 1e-6)
    t = np.linspace(0.0, 1.0, bins + 1)
    edges = np.linspace(lo, hi, bins + 1) if math.isfinite(hi - lo) else lo * (1 - t) + hi * t
    out = []
    for (step, wall, hmin, hmax, num, _, _, limits, counts), span in zip(items, ranges):
        binned = rebin(*span, limits, counts, edges) if span else np.zeros(bins)
        out.append({"step": step, "wall": wall, "min": hmin if num else None, "max": hmax if num else None,
                    "num": num, "counts": binned.tolist()})
    return {"edges": edges.tolist(), "histograms": out}
