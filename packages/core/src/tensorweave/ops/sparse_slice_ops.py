"""Cutting and framing sparse tensors as TF1: ``sparse_slice`` (with its gradient), ``sparse_split``,
``sparse.expand_dims``, ``sparse.eye`` and ``sparse_reset_shape``. Slices and pieces keep their entries' order
and count their indices from their own corner."""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_ops, check_ops, comparison_ops, concat_split_ops, control_flow_ops, fill_ops, math_ops, range_ops,
    reduction_ops, shape_ops, slicing_ops, unary_math_ops,
)
from tensorweave.ops.sparse_ops import _sparse

DEFS = OpDefList()

__all__ = ["sparse_slice", "sparse_split", "sparse_reset_shape"]

SPARSE_SLICE = DEFS.define(
    "SparseSlice", inputs=["indices: int64", "values: T", "shape: int64", "start: int64", "size: int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"], attrs=["T: any"],
    doc="The entries in [start, start + size), indexed from start; the shape is clipped at the input's edge.")
SPARSE_SLICE_GRAD = DEFS.define(
    "SparseSliceGrad", inputs=["backprop_val_grad: T", "input_indices: int64", "input_start: int64",
                               "output_indices: int64"], outputs=["val_grad: T"], attrs=["T: numeric"],
    grad=NOT_DIFFERENTIABLE, doc="The slice's value gradients at the input's entries (0 outside the slice).")
SPARSE_SPLIT = DEFS.define(
    "SparseSplit", inputs=["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
    outputs=["output_indices: num_split * int64", "output_values: num_split * T",
             "output_shape: num_split * int64"], attrs=["num_split: int >= 1", "T: any"],
    doc="num_split pieces along split_dim; the first (size % num_split) pieces are one longer.")


def _rank(op):
    return op.inputs[2].shape.with_rank(1)[0] if op.type == "SparseSlice" else op.inputs[3].shape.with_rank(1)[0]


def _pieces(rank, count=1):
    return ([tensor_shape.TensorShape([None, rank])] * count + [tensor_shape.TensorShape([None])] * count
            + [tensor_shape.TensorShape([rank])] * count)


@SPARSE_SLICE.set_shape_fn
def _slice_shape(op):
    return _pieces(_rank(op))


@SPARSE_SLICE.set_gradient
def _slice_grad(op, _, values_grad, unused_shape_grad):
    grad = apply_op("SparseSliceGrad", [values_grad, op.inputs[0], op.inputs[3], op.outputs[0]])
    grad.set_shape(op.inputs[1].shape)
    return [None, grad, None, None, None]


@SPARSE_SLICE_GRAD.set_shape_fn
def _slice_grad_shape(op):
    return tensor_shape.TensorShape([op.inputs[1].shape.with_rank(2)[0]])


@SPARSE_SPLIT.set_shape_fn
def _split_shape(op):
    op.inputs[0].shape.with_rank(0)
    return _pieces(_rank(op), op.get_attr("num_split"))


# ---- Python API ----------------------------------------------------------------------------------------------
def sparse_slice(sp_input, start, size, name=None):
    """The part of ``sp_input`` in the box [start, start + size) as a SparseTensor indexed from ``start``; a box
    reaching past the edge is cut there. The gradient reaches the entries inside the box."""
    sp_input = _sparse(sp_input)
    start = convert_to_tensor(start, dtype=dtypes.int64, name="start")
    size = convert_to_tensor(size, dtype=dtypes.int64, name="size")
    with name_scope(name or "SparseSlice") as scope:
        outputs = apply_op("SparseSlice", [sp_input.indices, sp_input.values, sp_input.dense_shape, start, size],
                           name=scope)
    return SparseTensor(*outputs)


class KeywordRequired:
    """The default of ``sparse_split``'s first parameter: its arguments must be passed by keyword."""

    def __repr__(self):
        return "?"


def sparse_split(keyword_required=KeywordRequired(), sp_input=None, num_split=None, axis=None, name=None,
                 split_dim=None):
    """``num_split`` SparseTensors cut from ``sp_input`` along ``axis``; when the dimension does not divide
    evenly the first pieces are one longer. ``split_dim`` is the old name of ``axis`` (TF's first API)."""
    if not isinstance(keyword_required, KeywordRequired):
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    if axis is not None and split_dim is not None and axis is not split_dim:
        raise ValueError("Cannot specify both 'axis' and 'split_dim'")
    axis = split_dim if axis is None else axis
    if axis is None:
        raise ValueError("axis is required")
    sp_input = _sparse(sp_input)
    outputs = apply_op("SparseSplit", [convert_to_tensor(axis, dtype=dtypes.int64, name="split_dim"),
                                       sp_input.indices, sp_input.values, sp_input.dense_shape],
                       {"num_split": int(num_split)}, name=name or "SparseSplit")
    n = int(num_split)
    return [SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i]) for i in range(n)]


def sparse_expand_dims(sp_input, axis=None, name=None):
    """``sp_input`` with a new dimension of size 1 at ``axis`` (the last by default; negative counts from the
    end, -1 meaning after the last)."""
    sp_input = _sparse(sp_input)
    rank = sp_input.dense_shape.shape.with_rank(1)[0].value
    rank_t = rank if rank is not None else shape_ops.shape(sp_input.dense_shape)[0]
    axis = -1 if axis is None else axis
    with name_scope(name or "expand_dims"):
        if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
            static_axis = int(axis) if axis >= 0 or rank is None else int(axis) + rank + 1
            axis = convert_to_tensor(int(axis), dtype=dtypes.int32, name="axis")
        elif isinstance(axis, Tensor):
            static_axis = None
        else:
            raise TypeError("axis must be an integer value in range [-rank(sp_input) - 1, rank(sp_input)]")
        axis = comparison_ops.where_v2(axis >= 0, axis, axis + rank_t + 1)
        count = shape_ops.shape(sp_input.indices)[0]
        stack, cut, at = concat_split_ops.stack, slicing_ops.slice, shape_ops.reshape(axis, [1])
        new_index = fill_ops.zeros(stack([count, 1]), dtype=dtypes.int64)
        indices = concat_split_ops.concat([cut(sp_input.indices, [0, 0], stack([-1, axis])), new_index,
                                           cut(sp_input.indices, stack([0, axis]), [-1, -1])], axis=1)
        one = convert_to_tensor([1], dtype=dtypes.int64, name="new_shape")
        dense_shape = concat_split_ops.concat([cut(sp_input.dense_shape, [0], at), one,
                                               cut(sp_input.dense_shape, at, [-1])], axis=0)
        static = sp_input.get_shape()
        if static_axis is not None and static.ndims is not None and static_axis >= 0:
            static = tensor_shape.TensorShape(static.dims[:static_axis] + [1] + static.dims[static_axis:])
        else:
            static = tensor_shape.TensorShape(None)
        return SparseTensor(indices, sp_input.values, dense_shape, static_shape=static)


def sparse_eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """A [num_rows, num_columns] SparseTensor with ones on the diagonal."""
    with name_scope(name or "eye"):
        num_rows = unary_math_ops.cast(convert_to_tensor(num_rows, name="num_rows"), dtypes.int64)
        num_columns = num_rows if num_columns is None else unary_math_ops.cast(
            convert_to_tensor(num_columns, name="num_columns"), dtypes.int64)
        diag_size = math_ops.minimum(num_rows, num_columns)
        diag = range_ops.range(diag_size, dtype=dtypes.int64)
        return SparseTensor(concat_split_ops.stack([diag, diag], axis=1), fill_ops.ones(
            shape_ops.reshape(diag_size, [1]), dtype=dtype), concat_split_ops.stack([num_rows, num_columns]))


def sparse_reset_shape(sp_input, new_shape=None):
    """``sp_input`` with dense shape ``new_shape`` (no dimension smaller than before), or, by default, the
    tightest shape that holds its entries (one past the largest index of each dimension)."""
    sp_input = _sparse(sp_input)
    indices = array_ops.identity(sp_input.indices)
    values = array_ops.identity(sp_input.values)
    in_shape = array_ops.identity(sp_input.dense_shape)
    if new_shape is None:
        return SparseTensor(indices, values, reduction_ops.reduce_max(indices, axis=0) + fill_ops.ones_like(in_shape))
    shape = unary_math_ops.cast(convert_to_tensor(new_shape, name="new_shape"), dtypes.int64)
    if not shape.shape.with_rank(1)[0].is_compatible_with(in_shape.shape[0]):
        raise ValueError(f"sparse_reset_shape: new_shape has {shape.shape[0]} dimensions but sp_input has "
                         f"{in_shape.shape[0]}")
    known = constant_value(shape)
    if known is not None and sp_input.get_shape().is_fully_defined():
        before = np.array(sp_input.get_shape().as_list())
        if not np.all(before <= known):
            raise ValueError(f"Requested new_shape should have dimension sizes >= sp_input.shape.  Found new_shape "
                             f"({known}), sp_input.shape ({before}).")
        return SparseTensor(indices, values, known)
    shape = control_flow_ops.with_dependencies([check_ops.assert_equal(
        shape_ops.shape(in_shape), shape_ops.shape(shape))], shape)
    shape = control_flow_ops.with_dependencies([check_ops.assert_less_equal(in_shape, shape)], shape)
    return SparseTensor(indices, values, shape)
