"""``tf.linalg``: linear algebra on (batches of) matrices under TF 1.15's ``tf.linalg`` names."""

from tensorweave.ops.einsum_ops import einsum, tensordot  # noqa: F401
from tensorweave.ops.expm_ops import expm  # noqa: F401
from tensorweave.ops.linalg_ops import qr, svd  # noqa: F401
from tensorweave.ops.linalg_ops import self_adjoint_eig as eigh, self_adjoint_eigvals as eigvalsh  # noqa: F401
from tensorweave.ops.linalg_solve_ops import (  # noqa: F401
    adjoint, cholesky, cholesky_solve, logdet, matrix_determinant as det, matrix_inverse as inv,
    log_matrix_determinant as slogdet, matrix_solve as solve, matrix_solve_ls as lstsq,
    matrix_triangular_solve as triangular_solve,
)
from tensorweave.ops.lu_ops import lu, lu_matrix_inverse, lu_reconstruct, lu_solve  # noqa: F401
from tensorweave.ops.matmul_ops import matmul  # noqa: F401
from tensorweave.ops.matrix_diag_ops import (  # noqa: F401
    diag as tensor_diag, diag_part as tensor_diag_part, eye, matrix_band_part as band_part, matrix_diag as diag,
    matrix_diag_part as diag_part, matrix_set_diag as set_diag, trace,
)
from tensorweave.ops.norm_ops import norm  # noqa: F401
from tensorweave.ops.normalization_ops import l2_normalize  # noqa: F401
from tensorweave.ops.transpose_ops import matrix_transpose, matrix_transpose as transpose  # noqa: F401
