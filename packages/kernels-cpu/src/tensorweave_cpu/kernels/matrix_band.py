"""CPU kernels for bands of diagonals: MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3. One index layout (which
matrix element sits where in the packed band, by ``align``) serves all three; they use only the device's array
module, so a GPU package registers them too."""

import numpy as np

from tensorweave.extension import KernelSet, common_shapes

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"MatrixDiagV3", "MatrixDiagPartV3", "MatrixSetDiagV3"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _band(k, op_type):
    k = np.asarray(k).reshape(-1)
    if k.size not in (1, 2) or int(k[0]) > int(k[-1]):
        raise ValueError(f"{op_type}: k must be an int or a pair (lo, hi) with lo <= hi, got {k.tolist()}")
    return int(k[0]), int(k[-1])


def _layout(rows, cols, lo, hi, align, xp):
    """Index arrays (i, j, slot, position): element (i, j) of diagonal d = j - i is stored at [..., slot, position]
    of the band (slot hi - d; position shifted right by the padding when ``align`` right-aligns that diagonal)."""
    max_len = min(rows + min(hi, 0), cols - max(lo, 0))
    left_super, left_sub = align in ("LEFT_LEFT", "LEFT_RIGHT"), align in ("LEFT_LEFT", "RIGHT_LEFT")
    parts = []
    for d in range(hi, lo - 1, -1):
        length = min(rows + min(d, 0), cols - max(d, 0))
        if length <= 0:
            continue
        p = np.arange(length)
        offset = 0 if (d >= 0 and left_super) or (d <= 0 and left_sub) else max_len - length
        parts.append((p - min(d, 0), p + max(d, 0), np.full(length, hi - d), p + offset))
    columns = [np.concatenate(c) for c in zip(*parts)] if parts else [np.zeros(0, np.int64)] * 4
    return [xp.asarray(c) for c in columns]


def _packed(band, lo, hi):
    """The band with its slot axis (absent for one diagonal) made explicit."""
    return band[..., None, :] if lo == hi else band


@KERNELS.register("MatrixDiagV3")
def _matrix_diag_v3(diagonal, k, num_rows, num_cols, padding_value, *, align, xp):
    lo, hi = _band(k, "MatrixDiagV3")
    band = _packed(diagonal, lo, hi)
    if band.ndim < 2 or band.shape[-2] != hi - lo + 1:
        raise ValueError(f"MatrixDiagV3: k = ({lo}, {hi}) needs diagonals of shape [..., {hi - lo + 1}, "
                         f"max_diag_len], got {list(diagonal.shape)}")
    rows, cols = common_shapes.band_matrix_size(band.shape[-1], lo, hi, int(num_rows), int(num_cols), "MatrixDiagV3")
    i, j, slot, pos = _layout(rows, cols, lo, hi, align, xp)
    out = xp.full(band.shape[:-2] + (rows, cols), padding_value, dtype=diagonal.dtype)
    out[..., i, j] = band[..., slot, pos]
    return out


@KERNELS.register("MatrixDiagPartV3")
def _matrix_diag_part_v3(x, k, padding_value, *, align, xp):
    lo, hi = _band(k, "MatrixDiagPartV3")
    if x.ndim < 2:
        raise ValueError(f"MatrixDiagPartV3: input must be a (batch of) matrices, got shape {list(x.shape)}")
    rows, cols = x.shape[-2:]
    length = common_shapes.band_length(rows, cols, lo, hi, "MatrixDiagPartV3")
    i, j, slot, pos = _layout(rows, cols, lo, hi, align, xp)
    out = xp.full(x.shape[:-2] + (hi - lo + 1, length), padding_value, dtype=x.dtype)
    out[..., slot, pos] = x[..., i, j]
    return out[..., 0, :] if lo == hi else out


@KERNELS.register("MatrixSetDiagV3")
def _matrix_set_diag_v3(x, diagonal, k, *, align, xp):
    lo, hi = _band(k, "MatrixSetDiagV3")
    if x.ndim < 2:
        raise ValueError(f"MatrixSetDiagV3: input must be a (batch of) matrices, got shape {list(x.shape)}")
    rows, cols = x.shape[-2:]
    length = common_shapes.band_length(rows, cols, lo, hi, "MatrixSetDiagV3")
    want = x.shape[:-2] + (() if lo == hi else (hi - lo + 1,)) + (length,)
    if diagonal.shape != want:
        raise ValueError(f"MatrixSetDiagV3: a band k = ({lo}, {hi}) of input of shape {list(x.shape)} has shape "
                         f"{list(want)}, got a diagonal of shape {list(diagonal.shape)}")
    i, j, slot, pos = _layout(rows, cols, lo, hi, align, xp)
    out = x.copy()
    out[..., i, j] = _packed(diagonal, lo, hi)[..., slot, pos]
    return out
