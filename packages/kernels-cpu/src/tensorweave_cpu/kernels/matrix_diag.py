"""CPU kernels for diagonals and bands of matrices: MatrixDiag, MatrixDiagPart, MatrixSetDiag, MatrixBandPart, Diag,
DiagPart. Each uses only the device's array module, so a GPU package registers them too (band_part builds the
causal masks of attention models, which should not leave the GPU)."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Diag", "DiagPart", "MatrixBandPart", "MatrixDiag", "MatrixDiagPart",
                                     "MatrixSetDiag"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _need_matrices(x, op_type):
    if x.ndim < 2:
        raise ValueError(f"{op_type}: input must be a (batch of) matrices, of rank >= 2; it has shape {x.shape}")


@KERNELS.register("MatrixDiag")
def _matrix_diag(diagonal, *, xp):
    if diagonal.ndim < 1:
        raise ValueError("MatrixDiag: the diagonal must have rank >= 1, it is a scalar")
    k = diagonal.shape[-1]
    out = xp.zeros(diagonal.shape + (k,), diagonal.dtype)
    index = xp.arange(k)
    out[..., index, index] = diagonal
    return out


@KERNELS.register("MatrixDiagPart")
def _matrix_diag_part(x, *, xp):
    _need_matrices(x, "MatrixDiagPart")
    return xp.diagonal(x, axis1=-2, axis2=-1).copy()


@KERNELS.register("MatrixSetDiag")
def _matrix_set_diag(x, diagonal, *, xp):
    _need_matrices(x, "MatrixSetDiag")
    k = min(x.shape[-2:])
    if diagonal.shape != x.shape[:-2] + (k,):
        raise ValueError(f"MatrixSetDiag: a diagonal for input of shape {x.shape} has shape "
                         f"{x.shape[:-2] + (k,)}, got {diagonal.shape}")
    out = x.copy()
    index = xp.arange(k)
    out[..., index, index] = diagonal
    return out


@KERNELS.register("MatrixBandPart")
def _matrix_band_part(x, num_lower, num_upper, *, xp):
    _need_matrices(x, "MatrixBandPart")
    m, n = x.shape[-2:]
    lower, upper = int(num_lower), int(num_upper)
    if lower > m or upper > n:
        raise ValueError(f"MatrixBandPart: num_lower ({lower}) must be at most the number of rows ({m}) and "
                         f"num_upper ({upper}) at most the number of columns ({n})")
    offset = xp.arange(m)[:, None] - xp.arange(n)[None, :]
    keep = ((lower < 0) | (offset <= lower)) & ((upper < 0) | (-offset <= upper))
    return xp.where(keep, x, xp.zeros((), x.dtype))


@KERNELS.register("Diag")
def _diag(diagonal, *, xp):
    if diagonal.ndim < 1:
        raise ValueError("Diag: the diagonal must have rank >= 1, it is a scalar")
    return xp.diag(diagonal.reshape(-1)).reshape(diagonal.shape * 2)


@KERNELS.register("DiagPart")
def _diag_part(x, *, xp):
    half = x.ndim // 2
    if x.ndim % 2 or not x.ndim or x.shape[:half] != x.shape[half:]:
        raise ValueError(f"DiagPart: input must have shape [D1..Dk, D1..Dk] (even rank >= 2); it has shape "
                         f"{x.shape}")
    size = int(np.prod(x.shape[:half]))
    return xp.diagonal(x.reshape(size, size)).reshape(x.shape[:half]).copy()
