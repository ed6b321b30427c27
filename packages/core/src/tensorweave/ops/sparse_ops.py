"""Sparse tensors' structure: placeholders, densifying (SparseToDense), concat, reshape, reorder (and so
transpose), retain and fill_empty_rows, as TF1. The arithmetic on them is in ``sparse_math_ops``.

Ops take a SparseTensor as its three dense parts (indices, values, dense_shape) and most expect its entries in
row-major order, as TF's kernels do (``sparse_reorder`` puts them there).
"""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops import (
    array_ops, comparison_ops, concat_split_ops, fill_ops, gather_ops, range_ops, reduction_ops, segment_ops,
    shape_ops, transpose_ops, unary_math_ops,
)

DEFS = OpDefList()

__all__ = ["sparse_placeholder", "sparse_tensor_to_dense", "sparse_to_dense", "sparse_concat", "sparse_reshape",
           "sparse_reorder", "sparse_retain", "sparse_transpose", "sparse_fill_empty_rows", "sparse_merge",
           "sparse_to_indicator"]

SPARSE_TO_DENSE = DEFS.define(
    "SparseToDense", inputs=["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T",
                             "default_value: T"], outputs=["dense: T"],
    attrs=["validate_indices: bool = True", "T: any", "Tindices: {int32, int64}"],
    doc="dense[sparse_indices[i]] = sparse_values[i] (or the scalar sparse_values), default_value elsewhere.")
SPARSE_CONCAT = DEFS.define(
    "SparseConcat", inputs=["indices: N * int64", "values: N * T", "shapes: N * int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["concat_dim: int", "N: int >= 2", "T: any"], grad=NOT_DIFFERENTIABLE,
    doc="Concatenates sparse tensors along concat_dim; the result's entries in row-major order.")
SPARSE_RESHAPE = DEFS.define(
    "SparseReshape", inputs=["input_indices: int64", "input_shape: int64", "new_shape: int64"],
    outputs=["output_indices: int64", "output_shape: int64"], grad=NOT_DIFFERENTIABLE,
    doc="The indices of the same entries in a tensor of new_shape (one -1 allowed), row-major order kept.")
SPARSE_REORDER = DEFS.define(
    "SparseReorder", inputs=["input_indices: int64", "input_values: T", "input_shape: int64"],
    outputs=["output_indices: int64", "output_values: T"], attrs=["T: any"],
    doc="The same entries in row-major order.")
SPARSE_FILL_EMPTY_ROWS = DEFS.define(
    "SparseFillEmptyRows", inputs=["indices: int64", "values: T", "dense_shape: int64", "default_value: T"],
    outputs=["output_indices: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"], attrs=["T: any"],
    doc="Adds default_value at [row, 0, ...] of each row without entries; where each input entry went.")
SPARSE_FILL_EMPTY_ROWS_GRAD = DEFS.define(
    "SparseFillEmptyRowsGrad", inputs=["reverse_index_map: int64", "grad_values: T"],
    outputs=["d_values: T", "d_default_value: T"], attrs=["T: any"], grad=NOT_DIFFERENTIABLE,
    doc="Splits the output values' gradient between the input values and the default value.")


def _entries(t):
    return tensor_shape.TensorShape([t.shape.with_rank_at_least(1)[0]])


def _rank_of(shape_tensor):
    return shape_tensor.shape.with_rank(1)[0]


@SPARSE_TO_DENSE.set_shape_fn
def _sparse_to_dense_shape(op):
    op.inputs[3].shape.with_rank(0)
    return constant_value_as_shape(op.inputs[1])


@SPARSE_TO_DENSE.set_gradient
def _sparse_to_dense_grad(op, grad):
    indices, _, values, _ = op.inputs
    positions = shape_ops.reshape(indices, concat_split_ops.stack([-1, shape_ops.rank(grad)]))
    values_grad = gather_ops.gather_nd(grad, positions)
    if values.shape.ndims == 0:
        values_grad = reduction_ops.reduce_sum(values_grad)
    default_grad = reduction_ops.reduce_sum(grad) - reduction_ops.reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]


@SPARSE_CONCAT.set_shape_fn
def _sparse_concat_shape(op):
    n = op.get_attr("N")
    rank = tensor_shape.Dimension(None)
    for t in op.inputs[2 * n:]:
        rank = rank.merge_with(_rank_of(t))
    return [tensor_shape.TensorShape([None, rank]), tensor_shape.TensorShape([None]), tensor_shape.TensorShape([rank])]


@SPARSE_RESHAPE.set_shape_fn
def _sparse_reshape_shape(op):
    new_rank = _rank_of(op.inputs[2])
    return [tensor_shape.TensorShape([op.inputs[0].shape.with_rank(2)[0], new_rank]),
            tensor_shape.TensorShape([new_rank])]


@SPARSE_REORDER.set_shape_fn
def _sparse_reorder_shape(op):
    return [op.inputs[0].shape.with_rank(2), _entries(op.inputs[1])]


@SPARSE_REORDER.set_gradient
def _sparse_reorder_grad(op, _, values_grad):
    """Each input entry takes the gradient of the position the reorder moved it to."""
    indices, _, dense_shape = op.inputs
    count = shape_ops.shape(indices, out_type=dtypes.int64)[0]
    order = apply_op("SparseReorder", [indices, range_ops.range(count), dense_shape])[1]
    return [None, gather_ops.gather(values_grad, _invert(order, count)), None]


def _invert(permutation, count):
    """The inverse of a permutation of 0..count-1 (as a scatter of positions)."""
    return segment_ops.unsorted_segment_sum(range_ops.range(count), permutation, count)


@SPARSE_FILL_EMPTY_ROWS.set_shape_fn
def _fill_empty_rows_shape(op):
    rank = _rank_of(op.inputs[2])
    return [tensor_shape.TensorShape([None, rank]), tensor_shape.TensorShape([None]), tensor_shape.TensorShape([None]),
            _entries(op.inputs[1])]


@SPARSE_FILL_EMPTY_ROWS.set_gradient
def _fill_empty_rows_grad(op, _, values_grad, unused_empty, unused_map):
    d_values, d_default = apply_op("SparseFillEmptyRowsGrad", [op.outputs[3], values_grad])
    return [None, d_values, None, d_default]


@SPARSE_FILL_EMPTY_ROWS_GRAD.set_shape_fn
def _fill_empty_rows_grad_shape(op):
    return [_entries(op.inputs[0]), tensor_shape.TensorShape([])]


# ---- Python API ----------------------------------------------------------------------------------------------
def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor of three placeholders, fed with a SparseTensorValue or an (indices, values, shape) tuple.
    A fully known ``shape`` becomes a constant dense_shape (feeding it still works); a partly known one leaves
    the placeholder's shape unknown but keeps the static shape."""
    rank = None
    if shape is not None:
        shape = tensor_shape.TensorShape(shape)
        rank = shape.ndims
    suffix = (lambda part: f"{name}/{part}") if name is not None else (lambda part: None)
    if shape is not None and shape.is_fully_defined():
        dense_shape = convert_to_tensor(shape.as_list(), dtype=dtypes.int64)
    else:
        dense_shape = array_ops.placeholder(dtypes.int64, [rank], name=suffix("shape"))
    values = array_ops.placeholder(dtype, [None], name=suffix("values"))
    indices = array_ops.placeholder(dtypes.int64, [None, rank], name=suffix("indices"))
    return SparseTensor(indices, values, dense_shape, static_shape=shape)


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0, validate_indices=True,
                    name=None):
    """A dense tensor of ``output_shape`` holding ``sparse_values`` at ``sparse_indices`` (in row-major order,
    no repeats, when ``validate_indices``) and ``default_value`` elsewhere."""
    values = convert_to_tensor(sparse_values, name="sparse_values")
    indices = convert_to_tensor(sparse_indices, name="sparse_indices")
    if indices.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"sparse_to_dense: sparse_indices must be int32 or int64, got {indices.dtype.name}")
    output_shape = convert_to_tensor(output_shape, dtype=indices.dtype, name="output_shape") \
        if not hasattr(output_shape, "dtype") else output_shape
    default = convert_to_tensor(default_value, dtype=values.dtype, name="default_value")
    return apply_op("SparseToDense", [indices, output_shape, values, default],
                    {"validate_indices": bool(validate_indices)}, name=name or "SparseToDense")


def sparse_tensor_to_dense(sp_input, default_value=0, validate_indices=True, name=None):
    """The dense tensor ``sp_input`` stands for, ``default_value`` where it has no entry."""
    sp_input = _sparse(sp_input)
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values, default_value,
                           validate_indices, name=name or "SparseToDense")


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    """Concatenates SparseTensors along ``axis``; with ``expand_nonconcat_dim`` the other dimensions grow to the
    largest input's instead of having to agree."""
    axis = concat_dim if axis is None else axis
    expand = expand_nonconcat_dim or bool(expand_nonconcat_dims)
    sp_inputs = [_sparse(s) for s in sp_inputs]
    if len(sp_inputs) == 1:
        return sp_inputs[0]
    rank = sp_inputs[0].dense_shape.shape[0].value
    if axis < 0:
        if rank is None:
            raise ValueError("sparse_concat: a negative axis needs inputs of known rank")
        axis += rank
    shapes = [s.dense_shape for s in sp_inputs]
    if expand:
        largest = reduction_ops.reduce_max(concat_split_ops.stack(shapes), axis=0)
        shapes = [concat_split_ops.concat([largest[:axis], s[axis:axis + 1], largest[axis + 1:]], 0) for s in shapes]
    indices, values, shape = apply_op("SparseConcat", [[s.indices for s in sp_inputs], [s.values for s in sp_inputs],
                                                       shapes], {"concat_dim": int(axis)}, name=name or "SparseConcat")
    return SparseTensor(indices, values, shape)


def sparse_reshape(sp_input, shape, name=None):
    """The same entries in a SparseTensor of ``shape`` (one dimension may be -1)."""
    sp_input = _sparse(sp_input)
    new_shape = convert_to_tensor(shape, dtype=dtypes.int64, name="shape")
    indices, dense_shape = apply_op("SparseReshape", [sp_input.indices, sp_input.dense_shape, new_shape],
                                    name=name or "SparseReshape")
    known = constant_value(new_shape)
    static = tensor_shape.TensorShape(None)
    if known is not None and -1 not in known.tolist():
        static = tensor_shape.TensorShape(known.tolist())
    return SparseTensor(indices, sp_input.values, dense_shape, static_shape=static)


def sparse_reorder(sp_input, name=None):
    """The same SparseTensor with its entries in row-major order."""
    sp_input = _sparse(sp_input)
    indices, values = apply_op("SparseReorder", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                               name=name or "SparseReorder")
    return SparseTensor(indices, values, sp_input.dense_shape, static_shape=sp_input.get_shape())


def sparse_retain(sp_input, to_retain):
    """The entries of ``sp_input`` whose entry of the bool vector ``to_retain`` is True."""
    sp_input = _sparse(sp_input)
    to_retain = convert_to_tensor(to_retain, dtype=dtypes.bool, name="to_retain")
    to_retain.shape.with_rank(1)
    kept = shape_ops.reshape(comparison_ops.where(to_retain), [-1])
    return SparseTensor(gather_ops.gather(sp_input.indices, kept), gather_ops.gather(sp_input.values, kept),
                        sp_input.dense_shape, static_shape=sp_input.get_shape())


def sparse_transpose(sp_input, perm=None, name=None):
    """Permutes the dimensions (reversed by default); the result's entries in row-major order."""
    sp_input = _sparse(sp_input)
    with name_scope(name or "SparseTranspose"):
        if perm is None:
            rank = shape_ops.size(sp_input.dense_shape)
            perm = range_ops.range(rank - 1, -1, -1)
        perm = convert_to_tensor(perm, dtype=dtypes.int32, name="perm")
        indices = transpose_ops.transpose(gather_ops.gather(transpose_ops.transpose(sp_input.indices), perm))
        dense_shape = gather_ops.gather(sp_input.dense_shape, perm)
        static = sp_input.get_shape()
        known = constant_value(perm)
        static = tensor_shape.TensorShape([static[int(i)] for i in known]) if known is not None and \
            static.ndims is not None else tensor_shape.TensorShape(None)
        return sparse_reorder(SparseTensor(indices, sp_input.values, dense_shape, static_shape=static))


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """``(filled, empty_row_indicator)``: ``default_value`` added at [row, 0, ...] for each row with no entry."""
    sp_input = _sparse(sp_input)
    default = convert_to_tensor(default_value, dtype=sp_input.dtype, name="default_value")
    indices, values, empty, _ = apply_op("SparseFillEmptyRows", [sp_input.indices, sp_input.values,
                                                                 sp_input.dense_shape, default],
                                         name=name or "SparseFillEmptyRows")
    return SparseTensor(indices, values, sp_input.dense_shape, static_shape=sp_input.get_shape()), empty


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """Moves ``sp_values``' entries to the column their id in ``sp_ids`` names: the last dimension becomes
    ``vocab_size`` (with lists of ids and sizes, one new dimension each). The classic sparse feature layout
    (ids and weights of one example's features) turned into a [batch, vocab_size] SparseTensor."""
    several = isinstance(sp_ids, (list, tuple))
    sp_ids = [_sparse(s) for s in (sp_ids if several else [sp_ids])]
    sizes = vocab_size if isinstance(vocab_size, (list, tuple)) else [vocab_size]
    if len(sizes) != len(sp_ids):
        raise ValueError(f"sparse_merge: {len(sp_ids)} sp_ids need as many vocab sizes, got {len(sizes)}")
    sp_values = _sparse(sp_values)
    with name_scope(name or "SparseMerge"):
        ids = [shape_ops.expand_dims(unary_math_ops.cast(s.values, dtypes.int64), 1) for s in sp_ids]
        indices = concat_split_ops.concat([sp_values.indices[:, :-1]] + ids, 1)
        sizes = [shape_ops.reshape(convert_to_tensor(v, dtype=dtypes.int64), [1]) for v in sizes]
        dense_shape = concat_split_ops.concat([sp_values.dense_shape[:-1]] + sizes, 0)
        merged = SparseTensor(indices, sp_values.values, dense_shape)
        return merged if already_sorted else sparse_reorder(merged)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool [..., vocab_size] tensor: True at each row's ids (the values of the int SparseTensor
    ``sp_input``), repeated ids allowed."""
    sp_input = _sparse(sp_input)
    with name_scope(name or "SparseToIndicator"):
        flags = fill_ops.fill(shape_ops.expand_dims(shape_ops.shape(sp_input.indices)[0], 0), True)
        merged = sparse_merge(sp_input, SparseTensor(sp_input.indices, flags, sp_input.dense_shape), vocab_size)
        return sparse_tensor_to_dense(merged, default_value=False, validate_indices=False)


def from_dense(tensor, name=None):
    """The entries of ``tensor`` that are not zero (or not the empty string), as a SparseTensor."""
    with name_scope(name or "dense_to_sparse"):
        tensor = convert_to_tensor(tensor, name="tensor")
        zero = convert_to_tensor(b"" if tensor.dtype is dtypes.string else 0, dtype=tensor.dtype)
        indices = comparison_ops.where(comparison_ops.not_equal(tensor, zero))
        return SparseTensor(indices, gather_ops.gather_nd(tensor, indices),
                            shape_ops.shape(tensor, out_type=dtypes.int64), static_shape=tensor.shape)


def _sparse(value):
    if isinstance(value, SparseTensor):
        return value
    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        return SparseTensor.from_value(value)
    raise TypeError(f"expected a SparseTensor or SparseTensorValue, got {value!r}")
