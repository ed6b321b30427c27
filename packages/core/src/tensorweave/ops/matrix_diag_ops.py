"""Diagonals and bands of (batches of) matrices: MatrixDiag, MatrixDiagPart, MatrixSetDiag, MatrixBandPart, and
the tensor forms Diag/DiagPart; ``eye`` and ``trace`` are built from them, as in TF."""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import concat_split_ops, fill_ops, math_ops, matrix_band_ops, reduction_ops

DEFS = OpDefList()

__all__ = ["matrix_diag", "matrix_diag_part", "matrix_set_diag", "matrix_band_part", "diag", "diag_part", "eye",
           "trace"]

MATRIX_DIAG = DEFS.define("MatrixDiag", inputs=["diagonal: T"], outputs=["output: T"], attrs=["T: any"],
                          doc="A [..., K] batch of diagonals becomes [..., K, K] matrices with zeros elsewhere.")
MATRIX_DIAG_PART = DEFS.define("MatrixDiagPart", inputs=["input: T"], outputs=["diagonal: T"], attrs=["T: any"],
                               doc="The main diagonal of each [M, N] inner matrix: [..., min(M, N)].")
MATRIX_SET_DIAG = DEFS.define("MatrixSetDiag", inputs=["input: T", "diagonal: T"], outputs=["output: T"],
                              attrs=["T: any"], doc="input with the main diagonal of each inner matrix replaced.")
MATRIX_BAND_PART = DEFS.define(
    "MatrixBandPart", inputs=["input: T", "num_lower: Tindex", "num_upper: Tindex"], outputs=["band: T"],
    attrs=["T: any", "Tindex: {int32, int64} = int64"],
    doc="Keeps num_lower subdiagonals and num_upper superdiagonals of each inner matrix (negative: all).")
DIAG = DEFS.define("Diag", inputs=["diagonal: T"], outputs=["output: T"],
                   attrs=["T: {floating, int32, int64, complex64, complex128}"],
                   doc="A rank-k tensor becomes the rank-2k tensor with it on the diagonal: out[i..., i...] = d[i...].")
DIAG_PART = DEFS.define("DiagPart", inputs=["input: T"], outputs=["diagonal: T"],
                        attrs=["T: {floating, int32, int64, complex64, complex128}"],
                        doc="The inverse of Diag: d[i...] = input[i..., i...] of a [D1..Dk, D1..Dk] tensor.")


def _matrices(t, op):
    shape = t.shape.with_rank_at_least(2) if t.shape.ndims is None or t.shape.ndims >= 2 else None
    if shape is None:
        raise ValueError(f"{op.type} {op.name!r}: input {t.name} must be a (batch of) matrices, of rank >= 2; "
                         f"it has shape {t.shape}")
    return shape


def _min_dim(m, n):
    return None if m.value is None or n.value is None else min(m.value, n.value)


@MATRIX_DIAG.set_shape_fn
def _matrix_diag_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return tensor_shape.TensorShape(None)
    if shape.ndims < 1:
        raise ValueError(f"MatrixDiag {op.name!r}: the diagonal must have rank >= 1, it is a scalar")
    return shape.concatenate(shape[-1:])


@MATRIX_DIAG_PART.set_shape_fn
def _matrix_diag_part_shape(op):
    shape = _matrices(op.inputs[0], op)
    if shape.ndims is None:
        return shape
    return shape[:-2].concatenate([_min_dim(shape[-2], shape[-1])])


@MATRIX_SET_DIAG.set_shape_fn
def _matrix_set_diag_shape(op):
    shape = _matrices(op.inputs[0], op)
    diagonal = op.inputs[1].shape
    if shape.ndims is not None and diagonal.ndims is not None:
        expected = shape[:-2].concatenate([_min_dim(shape[-2], shape[-1])])
        if not expected.is_compatible_with(diagonal):
            raise ValueError(f"MatrixSetDiag {op.name!r}: a diagonal for input of shape {shape} has shape "
                             f"{expected}, got {diagonal}")
        shape = shape[:-2].merge_with(diagonal[:-1]).concatenate(shape[-2:])
    return shape


@MATRIX_BAND_PART.set_shape_fn
def _matrix_band_part_shape(op):
    for t in op.inputs[1:]:
        t.shape.with_rank(0)
    return _matrices(op.inputs[0], op)


@DIAG.set_shape_fn
def _diag_shape(op):
    shape = op.inputs[0].shape
    return tensor_shape.TensorShape(None) if shape.ndims is None else shape.concatenate(shape)


@DIAG_PART.set_shape_fn
def _diag_part_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return shape
    half = shape.ndims // 2
    if shape.ndims % 2 or not shape.ndims or not shape[:half].is_compatible_with(shape[half:]):
        raise ValueError(f"DiagPart {op.name!r}: input must have shape [D1..Dk, D1..Dk] (even rank >= 2); "
                         f"it has shape {shape}")
    return shape[:half].merge_with(shape[half:])


@MATRIX_DIAG.set_gradient
def _matrix_diag_grad(op, grad):
    return [matrix_diag_part(grad)]


@MATRIX_DIAG_PART.set_gradient
def _matrix_diag_part_grad(op, grad):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape[-2:].is_fully_defined() and shape[-2].value == shape[-1].value:
        return [matrix_diag(grad)]
    return [matrix_set_diag(fill_ops.zeros_like(op.inputs[0]), grad)]


@MATRIX_SET_DIAG.set_gradient
def _matrix_set_diag_grad(op, grad):
    diagonal_grad = matrix_diag_part(grad)
    return [matrix_set_diag(grad, fill_ops.zeros_like(diagonal_grad)), diagonal_grad]


@MATRIX_BAND_PART.set_gradient
def _matrix_band_part_grad(op, grad):
    return [matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None]


@DIAG.set_gradient
def _diag_grad(op, grad):
    return [diag_part(grad)]


@DIAG_PART.set_gradient
def _diag_part_grad(op, grad):
    return [diag(grad)]


def _is_main_diagonal(k, num_rows=-1, num_cols=-1, padding_value=0):
    """Whether the call is the plain main-diagonal form, which TF1's original ops serve."""
    plain = (lambda v, default: not hasattr(v, "op") and np.ndim(v) == 0 and v == default)
    return plain(k, 0) and plain(num_rows, -1) and plain(num_cols, -1) and plain(padding_value, 0)


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """[..., K] diagonals → [..., K, K] matrices (tf.linalg.diag); with ``k`` (an int, or a band ``(lo, hi)`` of
    diagonals given as [..., hi - lo + 1, max_len], ``hi`` first), ``num_rows``, ``num_cols``, ``padding_value``
    and ``align`` as TF's MatrixDiagV3."""
    if _is_main_diagonal(k, num_rows, num_cols, padding_value):
        return apply_op("MatrixDiag", [diagonal], name=name)
    return matrix_band_ops.band_diag(diagonal, k, num_rows, num_cols, padding_value, align, name)


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """The main diagonal of each inner matrix, [..., min(M, N)] (tf.linalg.diag_part); with ``k`` a diagonal or
    a band of them, padded with ``padding_value`` on the side ``align`` says (MatrixDiagPartV3)."""
    if _is_main_diagonal(k, padding_value=padding_value):
        return apply_op("MatrixDiagPart", [input], name=name)
    return matrix_band_ops.band_diag_part(input, k, padding_value, align, name)


def matrix_set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """input with its inner matrices' main diagonal (or diagonal or band ``k``) replaced by ``diagonal``
    (tf.linalg.set_diag)."""
    if _is_main_diagonal(k):
        return apply_op("MatrixSetDiag", [input, diagonal], name=name)
    return matrix_band_ops.band_set_diag(input, diagonal, k, align, name)


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Zeros outside the band: num_lower subdiagonals, num_upper superdiagonals (negative keeps that triangle)."""
    return apply_op("MatrixBandPart", [input, num_lower, num_upper], name=name or "MatrixBandPart")


def diag(diagonal, name=None):
    """A tensor of shape [D1..Dk, D1..Dk] with ``diagonal`` on its diagonal (tf.linalg.tensor_diag)."""
    return apply_op("Diag", [diagonal], name=name or "Diag")


def diag_part(input, name=None):  # noqa: A002
    """The diagonal of a [D1..Dk, D1..Dk] tensor (tf.linalg.tensor_diag_part)."""
    return apply_op("DiagPart", [input], name=name or "DiagPart")


def trace(x, name=None):
    """The sum of each inner matrix's main diagonal: [..., M, N] → [...]."""
    with graph_mod.name_scope(name, "Trace", [x]) as scope:
        return reduction_ops.reduce_sum(matrix_diag_part(convert_to_tensor(x, name="x")), -1, name=scope)


def _dims(value):
    """A shape-like argument as a list of dims (ints where known) or a 1-D int32 tensor."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
        return list(value)
    known = constant_value(convert_to_tensor(value, dtype=dtypes.int32))
    if known is not None:
        return [int(v) for v in known.reshape(-1)]
    return convert_to_tensor(value, dtype=dtypes.int32)


def _concat_dims(*parts):
    if all(isinstance(p, list) for p in parts):
        return [d for p in parts for d in p]
    return concat_split_ops.concat([convert_to_tensor(p, dtype=dtypes.int32) for p in parts], 0)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """An identity matrix [num_rows, num_columns] (or a batch of them, ``batch_shape + [rows, columns]``)."""
    with graph_mod.name_scope(name, "eye", [num_rows, num_columns, batch_shape]) as scope:
        rows = _dims([num_rows])
        columns = rows if num_columns is None else _dims([num_columns])
        batch = _dims(batch_shape)
        square = num_columns is None or (isinstance(rows, list) and rows == columns)
        if square:
            return matrix_diag(fill_ops.ones(_concat_dims(batch, rows), dtype=dtype), name=scope)
        if isinstance(rows, list) and isinstance(columns, list):
            smaller = [min(rows[0], columns[0])]
        else:
            smaller = math_ops.minimum(convert_to_tensor(rows, dtype=dtypes.int32),
                                       convert_to_tensor(columns, dtype=dtypes.int32))
        zeros = fill_ops.zeros(_concat_dims(batch, rows, columns), dtype=dtype)
        return matrix_set_diag(zeros, fill_ops.ones(_concat_dims(batch, smaller), dtype=dtype), name=scope)
