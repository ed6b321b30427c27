"""LU decomposition with partial pivoting (``tf.linalg.lu``, the Lu op, which has no gradient, as in TF) and what
TF builds from it: ``lu_reconstruct``, ``lu_solve`` and ``lu_matrix_inverse``, which differentiate through their
ops (with respect to the right-hand side and the packed factors)."""

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import fill_ops, gather_ops, shape_ops
from tensorweave.ops.linalg_solve_ops import matrix_triangular_solve, square_matrices
from tensorweave.ops.matmul_ops import matmul
from tensorweave.ops.matrix_diag_ops import eye, matrix_band_part, matrix_diag_part, matrix_set_diag
from tensorweave.ops.sort_ops import argsort

DEFS = OpDefList()

__all__ = []

LU = DEFS.define("Lu", inputs=["input: T"], outputs=["lu: T", "p: output_idx_type"],
                 attrs=["T: {float32, float64, complex64, complex128}", "output_idx_type: {int32, int64} = int32"],
                 doc="Packed L (unit lower, below the diagonal) and U (upper) with input[..., p, :] = L @ U.")


@LU.set_shape_fn
def _lu_shape(op):
    shape = square_matrices(op.inputs[0], op)
    if shape.ndims is None:
        return [shape, tensor_shape.TensorShape(None)]
    return [shape, shape[:-1]]


def _batch_dims(t):
    if t.shape.ndims is None:
        raise ValueError(f"the permutation {t.name} needs a known rank")
    return t.shape.ndims - 1


def _unit_lower(lower_upper):
    return matrix_set_diag(matrix_band_part(lower_upper, -1, 0), fill_ops.ones_like(matrix_diag_part(lower_upper)))


def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002 - TF's argument name
    """(lu, p): the packed factors of each inner square matrix and the row permutation, input[p] = L @ U."""
    out = apply_op("Lu", [input], {"output_idx_type": dtypes.as_dtype(output_idx_type)}, name=name or "Lu")
    return out[0], out[1]


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """The matrix whose factors ``lu`` returned: L @ U with the rows put back in their places."""
    with graph_mod.name_scope(name, "lu_reconstruct", [lower_upper, perm]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        product = matmul(_unit_lower(lower_upper), matrix_band_part(lower_upper, 0, -1))
        batch = _batch_dims(perm)
        inverse = argsort(perm, axis=-1)  # where each row went: the inverse permutation, batched
        return gather_ops.gather(product, inverse, axis=batch, batch_dims=batch)


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """x with A @ x = rhs, given (lower_upper, perm) = lu(A): the rows of rhs permuted, then two triangular solves."""
    with graph_mod.name_scope(name, "lu_solve", [lower_upper, perm, rhs]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        rhs = convert_to_tensor(rhs, dtype=lower_upper.dtype, name="rhs")
        batch = _batch_dims(perm)
        permuted = gather_ops.gather(rhs, perm, axis=batch, batch_dims=batch)
        y = matrix_triangular_solve(_unit_lower(lower_upper), permuted, lower=True)
        return matrix_triangular_solve(lower_upper, y, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """The inverse of the matrix ``lu`` factored: lu_solve with the identity."""
    with graph_mod.name_scope(name, "lu_matrix_inverse", [lower_upper, perm]):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        dims = shape_ops.shape(lower_upper)
        return lu_solve(lower_upper, perm, eye(dims[-1], batch_shape=dims[:-2], dtype=lower_upper.dtype))
