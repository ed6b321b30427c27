"""Shape functions shared by many ops (as TF's common_shape_fns)."""

from tensorweave.framework import tensor_shape
from tensorweave.framework.tensor_shape import TensorShape


def unchanged_shape(op):
    """Output 0 has the shape of input 0."""
    return op.inputs[0].shape


def scalar_shape(op):
    return TensorShape([])


def unknown_shape(op):
    return [TensorShape(None) for _ in op.outputs]


def broadcast_shapes(a, b):
    """NumPy broadcasting of two static shapes; a ValueError names both when they cannot broadcast."""
    a, b = tensor_shape.as_shape(a), tensor_shape.as_shape(b)
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"shapes {a} and {b} are incompatible for broadcasting (dimension {x} vs {y})")
    return TensorShape(out)


def broadcast_binary_shape(op):
    return broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)


def reduced_shape(input_shape, axes, keep_dims):
    """The shape after reducing ``axes`` (None means all); unknown if axes are unknown."""
    input_shape = tensor_shape.as_shape(input_shape)
    if input_shape.ndims is None:
        return TensorShape(None)
    rank = input_shape.ndims
    if axes is None:
        return TensorShape([1] * rank if keep_dims else [])
    axes = {int(a) % rank if rank else 0 for a in axes}
    for a in axes:
        if not 0 <= a < max(rank, 1):
            raise ValueError(f"reduction axis {a} is out of range for shape {input_shape}")
    dims = input_shape.as_list()
    if keep_dims:
        return TensorShape([1 if i in axes else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in axes])


def band_matrix_size(max_len, lo, hi, rows, cols, where):
    """TF's rule for the output size of MatrixDiagV3 from the diagonal length and the requested -1-or-size."""
    min_rows, min_cols = max_len - min(hi, 0), max_len + max(lo, 0)
    if rows != -1 and rows < min_rows:
        raise ValueError(f"{where}: num_rows {rows} is too small: the band needs at least {min_rows}")
    if cols != -1 and cols < min_cols:
        raise ValueError(f"{where}: num_cols {cols} is too small: the band needs at least {min_cols}")
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows != min_rows and cols != min_cols:
        raise ValueError(f"{where}: num_rows {rows} and num_cols {cols} are not consistent with k = ({lo}, {hi}) "
                         f"and diagonals of length {max_len} (one of them must be {min_rows} rows or "
                         f"{min_cols} columns)")
    return rows, cols


def band_length(rows, cols, lo, hi, where):
    """The longest diagonal of the band (lo, hi) of a rows x cols matrix (TF's max_diag_len); both ends must lie
    inside the matrix (or be the main diagonal)."""
    for d in (lo, hi):
        if not (-rows < d < cols or d == 0):
            raise ValueError(f"{where}: diagonal index {d} is outside a {rows}x{cols} matrix (it must be in "
                             f"({-rows}, {cols}))")
    return min(rows + min(hi, 0), cols - max(lo, 0))
