"""Row scatters with repeated rows, as numpy's unbuffered ``ufunc.at``, on any array module.

CuPy implements ``ufunc.at`` with CUDA atomics, which exist only for some dtypes (adds of int32, uint32, uint64
and float32; minima and maxima of the same); other dtypes and ufuncs (multiply, divide, int64 adds ...) apply in
rounds instead: each round updates the first remaining occurrence of every row, so a row named k times is
updated k times, in order. numpy always takes ``ufunc.at``.
"""

import numpy as np

ATOMIC = {name: frozenset({"int32", "uint32", "uint64", "float32"}) for name in ("add", "maximum", "minimum")}


def scatter_rows(xp, ufunc_name, target, rows, updates):
    """``getattr(xp, ufunc_name).at(target, rows, updates)`` for a 1-D ``rows`` (updates broadcast to
    ``rows.shape + target.shape[1:]``), in place."""
    ufunc = getattr(xp, ufunc_name)
    if xp is np:
        ufunc.at(target, rows, updates)
        return
    dtype = target.dtype.name
    if ufunc_name == "subtract" and dtype in ATOMIC["add"] and target.dtype.kind in "fi":
        ufunc_name, updates = "add", -updates
    if dtype in ATOMIC.get(ufunc_name, ()):
        getattr(xp, ufunc_name).at(target, rows, updates)
        return
    updates = xp.broadcast_to(updates, rows.shape + target.shape[1:])
    while rows.size:
        unique, first = xp.unique(rows, return_index=True)
        target[unique] = ufunc(target[unique], updates[first])
        rest = xp.ones(rows.shape, dtype=bool)
        rest[first] = False
        rows, updates = rows[rest], updates[rest]
