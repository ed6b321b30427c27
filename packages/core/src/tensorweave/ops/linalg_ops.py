"""Orthogonal and spectral decompositions over the last two dimensions: Qr, Svd and SelfAdjointEigV2, with TF's
gradients (Cholesky, which solves, is in linalg_solve_ops).

Every op takes a batch of matrices ``[..., M, N]``; the gradients are the matrix-calculus formulas TF uses
(SVD and eigh: Giles' and Seeger's; QR: the square-or-deep formula, extended to wide inputs by splitting off the
extra columns)."""

from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.ops import concat_split_ops, fill_ops, math_ops, shape_ops, unary_math_ops
from tensorweave.ops.matmul_ops import matmul
from tensorweave.ops.linalg_solve_ops import adjoint, matrices, matrix_triangular_solve, square_matrices
from tensorweave.ops.matrix_diag_ops import matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag

DEFS = OpDefList()

__all__ = ["qr", "svd", "self_adjoint_eig", "self_adjoint_eigvals"]

_TYPES = "T: {float32, float64, complex64, complex128}"

QR = DEFS.define("Qr", inputs=["input: T"], outputs=["q: T", "r: T"], attrs=["full_matrices: bool = False", _TYPES],
                 doc="input = q @ r for each inner matrix: q with orthonormal columns, r upper triangular.")
SVD = DEFS.define("Svd", inputs=["input: T"], outputs=["s: T", "u: T", "v: T"],
                  attrs=["compute_uv: bool = True", "full_matrices: bool = False", _TYPES],
                  doc="input = u @ diag(s) @ v^H, singular values descending; u and v are [0] when not computed.")
SELF_ADJOINT_EIG = DEFS.define(
    "SelfAdjointEigV2", inputs=["input: T"], outputs=["e: T", "v: T"], attrs=["compute_v: bool = True", _TYPES],
    doc="Eigenvalues (ascending) and eigenvectors (columns) of each Hermitian inner matrix, from its lower "
        "triangle; v is [0] when not computed.")


def _smaller(m, n):
    return None if m.value is None or n.value is None else min(m.value, n.value)


@QR.set_shape_fn
def _qr_shape(op):
    shape = matrices(op.inputs[0], op)
    if shape.ndims is None:
        return [tensor_shape.TensorShape(None)] * 2
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    k = m if op.get_attr("full_matrices") else _smaller(m, n)
    return [batch.concatenate([m, k]), batch.concatenate([k, n])]


@SVD.set_shape_fn
def _svd_shape(op):
    shape = matrices(op.inputs[0], op)
    if shape.ndims is None:
        return [tensor_shape.TensorShape(None)] * 3
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    k = _smaller(m, n)
    s = batch.concatenate([k])
    if not op.get_attr("compute_uv"):
        return [s, tensor_shape.TensorShape([0]), tensor_shape.TensorShape([0])]
    if op.get_attr("full_matrices"):
        return [s, batch.concatenate([m, m]), batch.concatenate([n, n])]
    return [s, batch.concatenate([m, k]), batch.concatenate([n, k])]


@SELF_ADJOINT_EIG.set_shape_fn
def _self_adjoint_eig_shape(op):
    shape = square_matrices(op.inputs[0], op)
    if shape.ndims is None:
        return [tensor_shape.TensorShape(None)] * 2
    v = shape if op.get_attr("compute_v") else tensor_shape.TensorShape([0])
    return [shape[:-1], v]


def _times_inverse_adjoint(x, r):
    """x @ inv(r)^H for upper-triangular r."""
    return adjoint(matrix_triangular_solve(r, adjoint(x), lower=False, adjoint=False))


def _qr_grad_deep(q, r, dq, dr):
    """The gradient of A = QR for M >= N (reduced Q): Q (dR + copyltu(M) R^-H) + (dQ - Q Q^H dQ) R^-H."""
    qdq = matmul(q, dq, adjoint_a=True)
    rdr = matmul(r, dr, adjoint_b=True)
    lower = matrix_band_part(qdq - adjoint(qdq) + rdr - adjoint(rdr), -1, 0)
    grad_a = matmul(q, dr + _times_inverse_adjoint(lower, r))
    return grad_a + _times_inverse_adjoint(dq - matmul(q, qdq), r)


@QR.set_gradient
def _qr_grad(op, dq, dr):
    a, (q, r) = op.inputs[0], op.outputs
    m, n = a.shape.with_rank_at_least(2)[-2:] if a.shape.ndims is not None else (None, None)
    m, n = getattr(m, "value", None), getattr(n, "value", None)
    if m is None or n is None:
        raise NotImplementedError(f"the gradient of Qr {op.name!r} needs the inner matrix shape, but {a.name} "
                                  f"has shape {a.shape}; set it (tensor.set_shape) before tf.gradients")
    if op.get_attr("full_matrices") and m > n:
        raise NotImplementedError(f"the gradient of Qr {op.name!r} with full_matrices=True is defined only for "
                                  f"matrices with no more rows than columns; {a.name} is {m}x{n} (use "
                                  f"full_matrices=False)")
    if m >= n:
        return [_qr_grad_deep(q, r, dq, dr)]
    extra = a[..., :, m:]
    dv = dr[..., :, m:]
    dx = _qr_grad_deep(q, r[..., :, :m], dq + matmul(extra, dv, adjoint_b=True), dr[..., :, :m])
    return [concat_split_ops.concat([dx, matmul(q, dv)], -1)]


def _safe_reciprocal(x, epsilon=1e-20):
    return x * unary_math_ops.reciprocal(x * x + epsilon)


@SELF_ADJOINT_EIG.set_gradient
def _self_adjoint_eig_grad(op, grad_e, grad_v):
    e, v = op.outputs
    if op.get_attr("compute_v"):
        gap = shape_ops.expand_dims(e, -2) - shape_ops.expand_dims(e, -1)
        f = matrix_set_diag(unary_math_ops.reciprocal(gap), fill_ops.zeros_like(e))
        inner = matrix_diag(grad_e) + f * matmul(v, grad_v, adjoint_a=True)
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        inner = matrix_diag(grad_e)
    grad_a = matmul(v, matmul(inner, v, adjoint_b=True))
    grad_a = matrix_band_part(grad_a + adjoint(grad_a), -1, 0)
    return [matrix_set_diag(grad_a, 0.5 * matrix_diag_part(grad_a))]


@SVD.set_gradient
def _svd_grad(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    grad_s_mat = matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True)
        return [matmul(u, matmul(grad_s_mat, v, adjoint_b=True))]
    shape = a.shape.with_rank_at_least(2) if a.shape.ndims is not None else None
    m, n = (shape[-2].value, shape[-1].value) if shape is not None else (None, None)
    if m is None or n is None:
        raise NotImplementedError(f"the gradient of Svd {op.name!r} needs the inner matrix shape, but {a.name} "
                                  f"has shape {a.shape}; set it (tensor.set_shape) before tf.gradients")
    full_matrices = op.get_attr("full_matrices")
    if full_matrices and abs(m - n) > 1:
        raise NotImplementedError(f"the gradient of Svd {op.name!r} with full_matrices=True is defined only when "
                                  f"the numbers of rows and columns differ by at most 1; {a.name} is {m}x{n}")
    s, u, v = op.outputs
    transposed = m > n
    if transposed:
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    s_mat = matrix_diag(s)
    s_squared = unary_math_ops.square(s)
    f = matrix_set_diag(_safe_reciprocal(shape_ops.expand_dims(s_squared, -2) - shape_ops.expand_dims(s_squared, -1)),
                        fill_ops.zeros_like(s))
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f_u = f * matmul(u, grad_u, adjoint_a=True)
    f_v = f * matmul(v1, grad_v1, adjoint_a=True)
    inner = grad_s_mat + matmul(f_u + adjoint(f_u), s_mat) + matmul(s_mat, f_v + adjoint(f_v))
    grad_a = matmul(u, matmul(inner, v1, adjoint_b=True))
    if m != n:
        gv1t = adjoint(grad_v1)
        term = gv1t - matmul(matmul(gv1t, v1), v1, adjoint_b=True)
        if full_matrices:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            term = term - matmul(matmul(v1, grad_v2, adjoint_a=True), v2, adjoint_b=True)
        grad_a = grad_a + matmul(matmul(u, matrix_diag(_safe_reciprocal(s))), term)
    if transposed:
        grad_a = adjoint(grad_a)
    grad_a.set_shape(a.shape)
    return [grad_a]


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TF's argument name
    """(q, r) with input = q @ r over the last two dimensions (reduced unless ``full_matrices``)."""
    return apply_op("Qr", [input], {"full_matrices": full_matrices}, name=name or "Qr")


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """(s, u, v) with tensor = u @ diag(s) @ adjoint(v); only s when ``compute_uv`` is False."""
    s, u, v = apply_op("Svd", [tensor], {"compute_uv": compute_uv, "full_matrices": full_matrices},
                       name=name or "Svd")
    return (s, u, v) if compute_uv else s


def self_adjoint_eig(tensor, name=None):
    """(e, v): eigenvalues ascending and eigenvectors as columns, of each Hermitian inner matrix."""
    e, v = apply_op("SelfAdjointEigV2", [tensor], {"compute_v": True}, name=name or "SelfAdjointEigV2")
    return e, v


def self_adjoint_eigvals(tensor, name=None):
    """The eigenvalues (ascending) of each Hermitian inner matrix."""
    with graph_mod.name_scope(name, "self_adjoint_eigvals", [tensor]):
        return apply_op("SelfAdjointEigV2", [tensor], {"compute_v": False}, name="SelfAdjointEigV2")[0]
