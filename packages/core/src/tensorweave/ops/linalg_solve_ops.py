"""Inverses, determinants and linear solves of (batches of) matrices: MatrixInverse, MatrixDeterminant,
LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve, MatrixSolveLs and Cholesky, with TF's gradients;
cholesky_solve, matrix_solve_ls's fast path (least squares) and logdet are built from them as TF builds them."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import comparison_ops, cond as cond_mod, reduction_ops, shape_ops, unary_math_ops
from tensorweave.ops.matmul_ops import matmul
from tensorweave.ops.matrix_diag_ops import eye, matrix_band_part, matrix_diag_part, matrix_set_diag
from tensorweave.ops.transpose_ops import matrix_transpose

DEFS = OpDefList()

__all__ = ["cholesky", "cholesky_solve", "matrix_determinant", "matrix_inverse", "matrix_solve", "matrix_solve_ls",
           "matrix_triangular_solve"]

_TYPES = "T: {float32, float64, complex64, complex128}"

CHOLESKY = DEFS.define("Cholesky", inputs=["input: T"], outputs=["output: T"], attrs=[_TYPES],
                       doc="The lower-triangular L with input = L @ L^H for each Hermitian positive-definite "
                           "inner matrix (only the lower triangle of the input is read).")
MATRIX_INVERSE = DEFS.define("MatrixInverse", inputs=["input: T"], outputs=["output: T"],
                             attrs=["adjoint: bool = False", _TYPES],
                             doc="The inverse of each inner square matrix (of its adjoint with adjoint=True).")
MATRIX_DETERMINANT = DEFS.define("MatrixDeterminant", inputs=["input: T"], outputs=["output: T"], attrs=[_TYPES],
                                 doc="The determinant of each inner square matrix: [..., M, M] → [...].")
LOG_MATRIX_DETERMINANT = DEFS.define(
    "LogMatrixDeterminant", inputs=["input: T"], outputs=["sign: T", "log_abs_determinant: T"], attrs=[_TYPES],
    doc="sign and log|det| of each inner square matrix, without overflow (det = sign * exp(log_abs_determinant)).")
MATRIX_SOLVE = DEFS.define("MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
                           attrs=["adjoint: bool = False", _TYPES],
                           doc="x with matrix @ x = rhs (adjoint(matrix) @ x = rhs with adjoint=True).")
MATRIX_TRIANGULAR_SOLVE = DEFS.define(
    "MatrixTriangularSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
    attrs=["lower: bool = True", "adjoint: bool = False", _TYPES],
    doc="x with matrix @ x = rhs, reading only the lower (or upper) triangle of matrix.")
MATRIX_SOLVE_LS = DEFS.define(
    "MatrixSolveLs", inputs=["matrix: T", "rhs: T", "l2_regularizer: float64"], outputs=["output: T"],
    attrs=[_TYPES, "fast: bool = True"],
    doc="The least-squares solution of matrix @ x = rhs; fast: by the normal equations (ridge with l2_regularizer "
        "> 0), else by a rank-revealing decomposition (the minimum-norm solution; l2_regularizer ignored).")


def matrices(t, op):
    """The static shape of ``t`` as a batch of matrices; a ValueError names the op when its rank is below 2."""
    if t.shape.ndims is not None and t.shape.ndims < 2:
        raise ValueError(f"{op.type} {op.name!r}: input {t.name} must be a (batch of) matrices, of rank >= 2; "
                         f"it has shape {t.shape}")
    return t.shape.with_rank_at_least(2)


def square_matrices(t, op):
    """As ``matrices``, and the inner matrices must be square."""
    shape = matrices(t, op)
    if shape.ndims is not None and not shape[-2].is_compatible_with(shape[-1]):
        raise ValueError(f"{op.type} {op.name!r}: input {t.name} must be a (batch of) square matrices; it has "
                         f"shape {shape}")
    return shape if shape.ndims is None else shape[:-2].concatenate([shape[-2].merge_with(shape[-1])] * 2)


@CHOLESKY.set_shape_fn
@MATRIX_INVERSE.set_shape_fn
def _square_shape(op):
    return square_matrices(op.inputs[0], op)


@MATRIX_DETERMINANT.set_shape_fn
@LOG_MATRIX_DETERMINANT.set_shape_fn
def _determinant_shape(op):
    shape = square_matrices(op.inputs[0], op)
    batch = tensor_shape.TensorShape(None) if shape.ndims is None else shape[:-2]
    return [batch] * len(op.outputs)


@MATRIX_SOLVE_LS.set_shape_fn
def _solve_ls_shape(op):
    matrix, rhs = matrices(op.inputs[0], op), matrices(op.inputs[1], op)
    op.inputs[2].shape.with_rank(0)
    if matrix.ndims is None or rhs.ndims is None:
        return tensor_shape.TensorShape(None)
    if matrix.ndims != rhs.ndims or not matrix[:-1].is_compatible_with(rhs[:-1]):
        raise ValueError(f"MatrixSolveLs {op.name!r}: rhs of shape {rhs} does not fit matrix of shape {matrix} "
                         f"(the same batch dimensions and as many rows as the matrix are needed)")
    return matrix[:-2].merge_with(rhs[:-2]).concatenate([matrix[-1], rhs[-1]])


@MATRIX_SOLVE.set_shape_fn
@MATRIX_TRIANGULAR_SOLVE.set_shape_fn
def _solve_shape(op):
    matrix, rhs = square_matrices(op.inputs[0], op), matrices(op.inputs[1], op)
    if matrix.ndims is None or rhs.ndims is None:
        return rhs if matrix.ndims is None else matrix[:-1].concatenate(rhs[-1:] if rhs.ndims else [None])
    if matrix.ndims != rhs.ndims or not matrix[:-1].is_compatible_with(rhs[:-1]):
        raise ValueError(f"{op.type} {op.name!r}: rhs of shape {rhs} does not fit matrix of shape {matrix} (the "
                         f"same batch dimensions and as many rows as the matrix are needed)")
    return matrix[:-1].merge_with(rhs[:-1]).concatenate(rhs[-1:])


def adjoint(matrix, name=None):
    """The conjugate transpose of each inner matrix."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)


def _per_matrix(t):
    """t[..., None, None]: one value per inner matrix, broadcast over its entries."""
    return shape_ops.expand_dims(shape_ops.expand_dims(t, -1), -1)


@CHOLESKY.set_gradient
def _cholesky_grad(op, grad):
    """Murray's formula: Phi(L^H dL) with half its diagonal, pulled back through L^-H and L^-1, symmetrised."""
    chol = op.outputs[0]
    dims = shape_ops.shape(chol)
    identity = eye(dims[-1], batch_shape=dims[:-2], dtype=chol.dtype)
    chol_inverse = matrix_triangular_solve(chol, identity, lower=True)
    middle = matmul(chol, grad, adjoint_a=True)
    middle = matrix_band_part(matrix_set_diag(middle, 0.5 * matrix_diag_part(middle)), -1, 0)
    grad_a = matmul(matmul(chol_inverse, middle, adjoint_a=True), chol_inverse)
    return [0.5 * (grad_a + adjoint(grad_a))]


@MATRIX_INVERSE.set_gradient
def _matrix_inverse_grad(op, grad):
    inverse, adjoint_attr = op.outputs[0], op.get_attr("adjoint")
    inner = matmul(grad, inverse, adjoint_a=adjoint_attr, adjoint_b=not adjoint_attr)
    return [-matmul(inverse, inner, adjoint_a=not adjoint_attr)]


@MATRIX_DETERMINANT.set_gradient
def _matrix_determinant_grad(op, grad):
    det = op.outputs[0]
    det = unary_math_ops.conj(det) if det.dtype.is_complex else det
    return [_per_matrix(grad * det) * matrix_inverse(op.inputs[0], adjoint=True)]


@LOG_MATRIX_DETERMINANT.set_gradient
def _log_matrix_determinant_grad(op, grad_sign, grad_log_abs):
    return [_per_matrix(grad_log_abs) * matrix_inverse(op.inputs[0], adjoint=True)]


def _solve_grad_a(op, grad_rhs):
    """The matrix's gradient of x = solve(matrix, rhs): -grad_rhs @ x^H (x @ grad_rhs^H when adjoint)."""
    x = op.outputs[0]
    if op.get_attr("adjoint"):
        return -matmul(x, grad_rhs, adjoint_b=True)
    return -matmul(grad_rhs, x, adjoint_b=True)


@MATRIX_SOLVE.set_gradient
def _matrix_solve_grad(op, grad):
    grad_rhs = matrix_solve(op.inputs[0], grad, adjoint=not op.get_attr("adjoint"))
    return [_solve_grad_a(op, grad_rhs), grad_rhs]


@MATRIX_TRIANGULAR_SOLVE.set_gradient
def _matrix_triangular_solve_grad(op, grad):
    lower = op.get_attr("lower")
    grad_rhs = matrix_triangular_solve(op.inputs[0], grad, lower=lower, adjoint=not op.get_attr("adjoint"))
    grad_a = _solve_grad_a(op, grad_rhs)
    return [matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1), grad_rhs]


@MATRIX_SOLVE_LS.set_gradient
def _matrix_solve_ls_grad(op, grad):
    """TF's: through the regularized normal equations; the rank-revealing path (fast=False) has none."""
    if not op.get_attr("fast"):
        raise ValueError(f"the gradient of MatrixSolveLs {op.name!r} is not defined for fast=False (as in TF); "
                         f"use tf.linalg.lstsq(..., fast=True)")
    a, b = op.inputs[:2]
    l2 = unary_math_ops.cast(op.inputs[2], a.dtype)
    rows, columns = a.shape[-2].value, a.shape[-1].value
    if rows is None or columns is None:
        raise NotImplementedError(f"the gradient of MatrixSolveLs {op.name!r} needs the inner matrix shape, but "
                                  f"{a.name} has shape {a.shape}")
    if rows >= columns:
        x = op.outputs[0]
        z = cholesky_solve(cholesky(_regularized_gram(a, l2, True)), grad)
        xz = matmul(x, z, adjoint_b=True)
        return [-matmul(a, xz + adjoint(xz)) + matmul(b, z, adjoint_b=True), matmul(a, z), None]
    chol = cholesky(_regularized_gram(a, l2, False))
    grad_b = cholesky_solve(chol, matmul(a, grad))
    partial = cholesky_solve(chol, b)
    grad_a = -matmul(grad_b, matmul(partial, a, adjoint_a=True)) + matmul(
        partial, grad - matmul(a, grad_b, adjoint_a=True), adjoint_b=True)
    return [grad_a, grad_b, None]


def cholesky(input, name=None):  # noqa: A002 - TF's argument name
    """The lower-triangular Cholesky factor of each Hermitian positive-definite inner matrix."""
    return apply_op("Cholesky", [input], name=name or "Cholesky")


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each inner square matrix (tf.linalg.inv); a singular one is an InvalidArgumentError."""
    return apply_op("MatrixInverse", [input], {"adjoint": adjoint}, name=name or "MatrixInverse")


def matrix_determinant(input, name=None):  # noqa: A002
    """The determinant of each inner square matrix (tf.linalg.det)."""
    return apply_op("MatrixDeterminant", [input], name=name or "MatrixDeterminant")


def log_matrix_determinant(input, name=None):  # noqa: A002
    """(sign, log|det|) of each inner square matrix (tf.linalg.slogdet)."""
    sign, log_abs = apply_op("LogMatrixDeterminant", [input], name=name or "LogMatrixDeterminant")
    return sign, log_abs


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """x with matrix @ x = rhs for each inner matrix (tf.linalg.solve)."""
    return apply_op("MatrixSolve", [matrix, rhs], {"adjoint": adjoint}, name=name or "MatrixSolve")


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """x with matrix @ x = rhs, matrix read as lower (or upper) triangular (tf.linalg.triangular_solve)."""
    return apply_op("MatrixTriangularSolve", [matrix, rhs], {"lower": lower, "adjoint": adjoint},
                    name=name or "MatrixTriangularSolve")


def cholesky_solve(chol, rhs, name=None):
    """x with A @ x = rhs, given chol = cholesky(A): two triangular solves."""
    with graph_mod.name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


def logdet(matrix, name=None):
    """log(det(matrix)) of each Hermitian positive-definite inner matrix, from its Cholesky factor."""
    with graph_mod.name_scope(name, "logdet", [matrix]):
        diagonal = matrix_diag_part(cholesky(matrix))
        return 2.0 * reduction_ops.reduce_sum(unary_math_ops.log(diagonal), -1)


def _regularized_gram(a, l2_regularizer, adjoint_first):
    """a^H a + l2 I (or a a^H + l2 I)."""
    gram = matmul(a, a, adjoint_a=adjoint_first, adjoint_b=not adjoint_first)
    if isinstance(l2_regularizer, (int, float)) and l2_regularizer == 0:
        return gram
    return gram + l2_regularizer * eye(shape_ops.shape(gram)[-1], batch_shape=shape_ops.shape(gram)[:-2],
                                       dtype=a.dtype)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares (minimum-norm, with ``l2_regularizer``: ridge) solution of matrix @ x = rhs (tf.linalg.lstsq).

    ``fast`` (TF's default): the normal equations solved by Cholesky, over (A^H A) when A has at least as many
    rows as columns and over (A A^H) otherwise, built from ops so it differentiates; A must have full rank (or
    l2_regularizer > 0). ``fast=False``: the MatrixSolveLs op, by a rank-revealing decomposition (rank-deficient
    systems get their minimum-norm solution; l2_regularizer is ignored), without a gradient, as in TF."""
    if not fast:
        return apply_op("MatrixSolveLs", [matrix, rhs, convert_to_tensor(l2_regularizer, dtype=dtypes.float64)],
                        {"fast": False}, name=name or "MatrixSolveLs")
    with graph_mod.name_scope(name, "matrix_solve_ls", [matrix, rhs]):
        matrix = convert_to_tensor(matrix, name="matrix")
        rhs = convert_to_tensor(rhs, dtype=matrix.dtype, name="rhs")
        l2 = l2_regularizer if isinstance(l2_regularizer, (int, float)) else \
            convert_to_tensor(l2_regularizer, dtype=matrix.dtype, name="l2_regularizer")

        def overdetermined():
            chol = cholesky(_regularized_gram(matrix, l2, True))
            return cholesky_solve(chol, matmul(matrix, rhs, adjoint_a=True))

        def underdetermined():
            chol = cholesky(_regularized_gram(matrix, l2, False))
            return matmul(matrix, cholesky_solve(chol, rhs), adjoint_a=True)

        shape = matrix.shape
        if shape.ndims is not None and shape[-2].value is not None and shape[-1].value is not None:
            return overdetermined() if shape[-2].value >= shape[-1].value else underdetermined()
        dims = shape_ops.shape(matrix)
        return cond_mod.cond(comparison_ops.greater_equal(dims[-2], dims[-1]), overdetermined, underdetermined)
