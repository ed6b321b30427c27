"""``expm``: the matrix exponential by scaling and squaring with a Padé approximant (Higham 2005), built from
matmul, matrix_solve and a while_loop, as TF builds ``tf.linalg.expm``, so it differentiates through them.

Each matrix of a batch is scaled by 2^-s, where s makes its 1-norm at most the approximant's bound; the [13/13]
approximant r(A) = (V - U)^-1 (V + U) is squared back s times (matrices needing fewer squarings stop early).
TF picks a lower degree for small norms; degree 13 is as accurate there, so values agree to rounding."""

import math

from tensorweave.framework import graph as graph_mod
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import comparison_ops, math_ops, reduction_ops, shape_ops, unary_math_ops
from tensorweave.ops.linalg_solve_ops import matrix_solve
from tensorweave.ops.matmul_ops import matmul
from tensorweave.ops.matrix_diag_ops import eye
from tensorweave.ops.while_loop import while_loop

__all__ = []

_PADE_13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
            10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0,
            1.0)
_THETA_13 = 5.371920351148152  # the largest 1-norm the [13/13] approximant serves to double precision


def _pade_13(a, identity):
    b = _PADE_13
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    u_inner = matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * identity
    u = matmul(a, u_inner)
    v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * identity
    return u, v


def expm(input, name=None):  # noqa: A002 - TF's argument name
    """exp(A) = I + A + A^2/2! + ... of each inner square matrix (tf.linalg.expm)."""
    with graph_mod.name_scope(name, "matrix_exponential", [input]):
        matrix = convert_to_tensor(input, name="input")
        shape = matrix.shape
        if shape.ndims is not None and (shape.ndims < 2 or not shape[-2].is_compatible_with(shape[-1])):
            raise ValueError(f"expm: {matrix.name} must be a (batch of) square matrices; it has shape {shape}")
        dims = shape_ops.shape(matrix)
        identity = eye(dims[-1], batch_shape=dims[:-2], dtype=matrix.dtype)
        norm = reduction_ops.reduce_max(reduction_ops.reduce_sum(unary_math_ops.abs(matrix), -2), -1)
        # s = the number of halvings that bring the 1-norm below the bound (0 for a zero matrix: log gives -inf)
        squarings = math_ops.maximum(unary_math_ops.floor(unary_math_ops.log(norm / _THETA_13) / math.log(2.0)) + 1.0,
                                     0.0)
        per_matrix = shape_ops.expand_dims(shape_ops.expand_dims(squarings, -1), -1)
        two = convert_to_tensor(2.0, dtype=matrix.dtype)
        u, v = _pade_13(matrix * math_ops.pow(two, -per_matrix), identity)
        result = matrix_solve(v - u, v + u)
        most = reduction_ops.reduce_max(squarings)

        def body(i, r):
            return i + 1.0, comparison_ops.where_v2(comparison_ops.less(i, per_matrix), matmul(r, r), r)

        zero = convert_to_tensor(0.0, dtype=matrix.dtype)
        return while_loop(lambda i, _: comparison_ops.less(i, most), body, [zero, result])[1]
