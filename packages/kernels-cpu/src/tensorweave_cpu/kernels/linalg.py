"""CPU kernels for linear-algebra ops on (batches of) matrices, on numpy.linalg and scipy.linalg (LAPACK):
decompositions, inverses, determinants and solves. A singular or non-positive-definite input raises as TF's
kernels do."""

import numpy as np
from scipy.linalg import lu_factor

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Qr"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _adjoint(a):
    return np.conj(np.swapaxes(a, -1, -2)) if a.dtype.kind == "c" else np.swapaxes(a, -1, -2)


def _square(a, op_type):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{op_type}: input must be a (batch of) square matrices; it has shape {a.shape}")


def _rhs_fits(a, b, op_type):
    _square(a, op_type)
    if b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1]:
        raise ValueError(f"{op_type}: rhs of shape {b.shape} does not fit matrix of shape {a.shape} (the same batch "
                         f"dimensions and as many rows as the matrix are needed)")


@KERNELS.register("Qr")
def _qr(a, *, full_matrices, xp):
    return xp.linalg.qr(a, mode="complete" if full_matrices else "reduced")


@KERNELS.register("Cholesky")
def _cholesky(a):
    _square(a, "Cholesky")
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise ValueError("Cholesky decomposition was not successful: the input is not (Hermitian) positive "
                         "definite") from None


@KERNELS.register("MatrixInverse")
def _matrix_inverse(a, *, adjoint):
    _square(a, "MatrixInverse")
    try:
        return np.linalg.inv(_adjoint(a) if adjoint else a)
    except np.linalg.LinAlgError:
        raise ValueError("Input is not invertible: a matrix of the batch is singular") from None


@KERNELS.register("MatrixDeterminant")
def _matrix_determinant(a):
    _square(a, "MatrixDeterminant")
    return np.linalg.det(a).astype(a.dtype, copy=False)


@KERNELS.register("LogMatrixDeterminant")
def _log_matrix_determinant(a):
    _square(a, "LogMatrixDeterminant")
    sign, log_abs = np.linalg.slogdet(a)
    return sign.astype(a.dtype, copy=False), log_abs.astype(a.dtype, copy=False)


@KERNELS.register("MatrixSolve")
def _matrix_solve(a, b, *, adjoint):
    _rhs_fits(a, b, "MatrixSolve")
    try:
        return np.linalg.solve(_adjoint(a) if adjoint else a, b)
    except np.linalg.LinAlgError:
        raise ValueError("Input matrix is not invertible: a matrix of the batch is singular") from None


@KERNELS.register("MatrixTriangularSolve")
def _matrix_triangular_solve(a, b, *, lower, adjoint):
    """Only the named triangle is read; a zero on the diagonal gives inf/nan, as TF's kernel does."""
    _rhs_fits(a, b, "MatrixTriangularSolve")
    triangle = np.tril(a) if lower else np.triu(a)
    if adjoint:
        triangle = _adjoint(triangle)
    with np.errstate(all="ignore"):
        try:
            return np.linalg.solve(triangle, b)
        except np.linalg.LinAlgError:
            return _substitute(triangle, b, lower != adjoint)


def _substitute(t, b, lower):
    """Forward/back substitution, for a triangular matrix with a zero on its diagonal (LAPACK's solve refuses)."""
    x = np.zeros(np.broadcast_shapes(t.shape[:-1], b.shape[:-1]) + b.shape[-1:], np.result_type(t, b))
    n = t.shape[-1]
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        known = np.einsum("...j,...jk->...k", t[..., i, :], x)
        x[..., i, :] = (b[..., i, :] - known) / t[..., i, i, None]
    return x


@KERNELS.register("Svd")
def _svd(a, *, compute_uv, full_matrices):
    if a.ndim < 2:
        raise ValueError(f"Svd: input must be a (batch of) matrices, of rank >= 2; it has shape {a.shape}")
    if not compute_uv:
        empty = np.zeros((0,), a.dtype)
        return np.linalg.svd(a, compute_uv=False).astype(a.dtype, copy=False), empty, empty
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return s.astype(a.dtype, copy=False), u, _adjoint(vh)


@KERNELS.register("SelfAdjointEigV2")
def _self_adjoint_eig(a, *, compute_v):
    _square(a, "SelfAdjointEigV2")
    if not compute_v:
        return np.linalg.eigvalsh(a, UPLO="L").astype(a.dtype, copy=False), np.zeros((0,), a.dtype)
    e, v = np.linalg.eigh(a, UPLO="L")
    return e.astype(a.dtype, copy=False), v


@KERNELS.register("MatrixSolveLs")
def _matrix_solve_ls(a, b, l2_regularizer, *, fast):
    """fast: the regularized normal equations; else numpy's lstsq (SVD: the minimum-norm solution) per matrix, with
    l2_regularizer ignored, as TF's kernel ignores it there."""
    if a.ndim < 2 or b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1]:
        raise ValueError(f"MatrixSolveLs: rhs of shape {b.shape} does not fit matrix of shape {a.shape}")
    l2 = float(l2_regularizer)
    rows, columns = a.shape[-2:]
    if fast:
        try:
            if rows >= columns:
                gram = _adjoint(a) @ a + l2 * np.eye(columns)
                return np.linalg.solve(gram, _adjoint(a) @ b)
            return _adjoint(a) @ np.linalg.solve(a @ _adjoint(a) + l2 * np.eye(rows), b)
        except np.linalg.LinAlgError:
            raise ValueError("MatrixSolveLs: the matrix does not have full rank; pass l2_regularizer > 0 or "
                             "fast=False") from None
    out = np.empty(a.shape[:-2] + (columns, b.shape[-1]), np.result_type(a, b))
    for index in np.ndindex(a.shape[:-2]):
        out[index] = np.linalg.lstsq(a[index], b[index], rcond=None)[0]
    return out


@KERNELS.register_build("Lu")
def _lu(node):
    """scipy's getrf per matrix; its row swaps become the permutation p with input[p] = L @ U."""
    index_type = node.output_dtypes[1].as_numpy_dtype

    def compute(a):
        _square(a, "Lu")
        packed = np.empty_like(a)
        perm = np.empty(a.shape[:-1], index_type)
        for index in np.ndindex(a.shape[:-2]):
            packed[index], pivots = lu_factor(a[index], check_finite=False)
            order = np.arange(a.shape[-1])
            for i, p in enumerate(pivots):
                order[i], order[p] = order[p], order[i]
            perm[index] = order
        return packed, perm
    return compute
