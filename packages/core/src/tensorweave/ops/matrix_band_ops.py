"""Bands of diagonals of (batches of) matrices: TF's MatrixDiagV3, MatrixDiagPartV3 and MatrixSetDiagV3, behind
``tf.linalg.diag``/``diag_part``/``set_diag`` when ``k`` (one diagonal, or a band ``(lo, hi)``), ``num_rows``,
``num_cols`` or ``padding_value`` is given.

A band is stored as ``[..., hi - lo + 1, max_diag_len]``, diagonal ``hi`` first (one diagonal drops that axis).
Diagonals shorter than ``max_diag_len`` are padded; ``align`` says on which side each sits: the first word for
superdiagonals, the second for subdiagonals ("RIGHT_LEFT", TF's default, right-aligns superdiagonals).
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import fill_ops

DEFS = OpDefList()

__all__ = ["band_diag", "band_diag_part", "band_set_diag"]

ALIGNS = ("LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT")
_ALIGN = "align: {'LEFT_RIGHT', 'RIGHT_LEFT', 'LEFT_LEFT', 'RIGHT_RIGHT'} = 'RIGHT_LEFT'"

MATRIX_DIAG_V3 = DEFS.define(
    "MatrixDiagV3", inputs=["diagonal: T", "k: int32", "num_rows: int32", "num_cols: int32", "padding_value: T"],
    outputs=["output: T"], attrs=["T: any", _ALIGN],
    doc="[..., num_rows, num_cols] matrices with the band k of diagonals set, padding_value elsewhere.")
MATRIX_DIAG_PART_V3 = DEFS.define(
    "MatrixDiagPartV3", inputs=["input: T", "k: int32", "padding_value: T"], outputs=["diagonal: T"],
    attrs=["T: any", _ALIGN], doc="The band k of diagonals of each inner matrix, padded with padding_value.")
MATRIX_SET_DIAG_V3 = DEFS.define(
    "MatrixSetDiagV3", inputs=["input: T", "diagonal: T", "k: int32"], outputs=["output: T"],
    attrs=["T: any", _ALIGN], doc="input with the band k of diagonals of each inner matrix replaced.")


def band_range(k, where):
    """(lo, hi) from a k value: one int or two."""
    k = np.asarray(k).reshape(-1)
    if k.size not in (1, 2):
        raise ValueError(f"{where}: k must be an int or a pair (lo, hi), got {k.tolist()}")
    lo, hi = int(k[0]), int(k[-1])
    if lo > hi:
        raise ValueError(f"{where}: the lower diagonal index k[0] = {lo} must not be greater than the upper "
                         f"k[1] = {hi}")
    return lo, hi


def _static_k(op, index):
    k = constant_value(op.inputs[index])
    return None if k is None else band_range(k, f"{op.type} {op.name!r}")


def _static_int(op, index):
    value = constant_value(op.inputs[index])
    return None if value is None else int(np.asarray(value).reshape(()))


@MATRIX_DIAG_V3.set_shape_fn
def _diag_shape(op):
    diagonal = op.inputs[0].shape
    k = _static_k(op, 1)
    if diagonal.ndims is None or k is None:
        return tensor_shape.TensorShape(None)
    lo, hi = k
    band_axes = 1 if lo == hi else 2
    diagonal = diagonal.with_rank_at_least(band_axes)
    if band_axes == 2 and diagonal[-2].value not in (None, hi - lo + 1):
        raise ValueError(f"MatrixDiagV3 {op.name!r}: the diagonal has {diagonal[-2].value} diagonals in its "
                         f"second-to-last dimension, but k = ({lo}, {hi}) asks for {hi - lo + 1}")
    batch = diagonal[:-band_axes]
    max_len, rows, cols = diagonal[-1].value, _static_int(op, 2), _static_int(op, 3)
    if max_len is None or rows is None or cols is None:
        return batch.concatenate([None, None])
    rows, cols = common_shapes.band_matrix_size(max_len, lo, hi, rows, cols, f"MatrixDiagV3 {op.name!r}")
    return batch.concatenate([rows, cols])


@MATRIX_DIAG_PART_V3.set_shape_fn
def _diag_part_shape(op):
    x = op.inputs[0].shape
    k = _static_k(op, 1)
    if x.ndims is None or k is None:
        return tensor_shape.TensorShape(None)
    x = x.with_rank_at_least(2)
    lo, hi = k
    rows, cols = x[-2].value, x[-1].value
    band = [] if lo == hi else [hi - lo + 1]
    if rows is None or cols is None:
        return x[:-2].concatenate(band + [None])
    return x[:-2].concatenate(band + [common_shapes.band_length(rows, cols, lo, hi, f"MatrixDiagPartV3 {op.name!r}")])


@MATRIX_SET_DIAG_V3.set_shape_fn
def _set_diag_shape(op):
    x, diagonal = op.inputs[0].shape, op.inputs[1].shape
    k = _static_k(op, 2)
    if x.ndims is None or diagonal.ndims is None or k is None:
        return x
    lo, hi = k
    x = x.with_rank_at_least(2)
    rows, cols = x[-2].value, x[-1].value
    band = [] if lo == hi else [hi - lo + 1]
    length = None
    if rows is not None and cols is not None:
        length = common_shapes.band_length(rows, cols, lo, hi, f"MatrixSetDiagV3 {op.name!r}")
    expected = x[:-2].concatenate(band + [length])
    if not expected.is_compatible_with(diagonal):
        raise ValueError(f"MatrixSetDiagV3 {op.name!r}: a band k = ({lo}, {hi}) of input of shape {x} has shape "
                         f"{expected}, got a diagonal of shape {diagonal}")
    return x[:-2].merge_with(diagonal[:diagonal.ndims - 1 - len(band)]).concatenate(x[-2:])


def _align(op):
    return {"align": op.get_attr("align")}


@MATRIX_DIAG_V3.set_gradient
def _diag_grad(op, grad):
    zero = fill_ops.zeros([], dtype=grad.dtype)
    return [apply_op("MatrixDiagPartV3", [grad, op.inputs[1], zero], _align(op), name="MatrixDiagPartV3"),
            None, None, None, None]


@MATRIX_DIAG_PART_V3.set_gradient
def _diag_part_grad(op, grad):
    x, k = op.inputs[0], op.inputs[1]
    matrix = x.shape[-2:] if x.shape.ndims is not None else tensor_shape.TensorShape(None)
    if matrix.is_fully_defined():
        sizes = [convert_to_tensor(d.value, dtype=dtypes.int32) for d in matrix]
        zero = fill_ops.zeros([], dtype=grad.dtype)
        return [apply_op("MatrixDiagV3", [grad, k, *sizes, zero], _align(op), name="MatrixDiagV3"), None, None]
    return [apply_op("MatrixSetDiagV3", [fill_ops.zeros_like(x), grad, k], _align(op), name="MatrixSetDiagV3"),
            None, None]


@MATRIX_SET_DIAG_V3.set_gradient
def _set_diag_grad(op, grad):
    diagonal, k = op.inputs[1], op.inputs[2]
    zero = fill_ops.zeros([], dtype=grad.dtype)
    return [apply_op("MatrixSetDiagV3", [grad, fill_ops.zeros_like(diagonal), k], _align(op), name="MatrixSetDiagV3"),
            apply_op("MatrixDiagPartV3", [grad, k, zero], _align(op), name="MatrixDiagPartV3"), None]


def _k(k):
    return k if hasattr(k, "op") else convert_to_tensor(k, dtype=dtypes.int32, name="k")


def _check_align(align, who):
    if align not in ALIGNS:
        raise ValueError(f"tf.linalg.{who}: align must be one of {ALIGNS}, got {align!r}")
    return {"align": align}


def _padding(value, like):
    """padding_value in the diagonal's dtype (a bool diagonal takes a bool padding, as TF)."""
    dtype = like.dtype.base_dtype
    return convert_to_tensor(bool(value) if dtype == dtypes.bool and not hasattr(value, "op") else value,
                             dtype=dtype, name="padding_value")


def band_diag(diagonal, k, num_rows, num_cols, padding_value, align, name):
    diagonal = convert_to_tensor(diagonal, name="diagonal")
    sizes = [convert_to_tensor(v, dtype=dtypes.int32, name=n) for v, n in ((num_rows, "num_rows"),
                                                                         (num_cols, "num_cols"))]
    return apply_op("MatrixDiagV3", [diagonal, _k(k), *sizes, _padding(padding_value, diagonal)],
                    _check_align(align, "diag"), name=name)


def band_diag_part(input, k, padding_value, align, name):  # noqa: A002
    input = convert_to_tensor(input, name="input")  # noqa: A001
    return apply_op("MatrixDiagPartV3", [input, _k(k), _padding(padding_value, input)],
                    _check_align(align, "diag_part"), name=name)


def band_set_diag(input, diagonal, k, align, name):  # noqa: A002
    return apply_op("MatrixSetDiagV3", [input, diagonal, _k(k)], _check_align(align, "set_diag"), name=name)
