"""Arithmetic on sparse tensors: a sparse matrix times a dense one, sums (sparse + sparse, sparse + dense),
reductions (sum, max) and softmax over the entries, with TF1's gradients (to the values and to the dense operand)."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops import (
    comparison_ops, concat_split_ops, fill_ops, gather_ops, range_ops, reduction_ops, shape_ops, transpose_ops,
    unary_math_ops,
)
from tensorweave.ops.sparse_ops import _sparse

DEFS = OpDefList()

__all__ = ["sparse_tensor_dense_matmul", "sparse_add", "sparse_reduce_sum", "sparse_reduce_sum_sparse",
           "sparse_reduce_max", "sparse_reduce_max_sparse", "sparse_softmax"]

_SPARSE_IN = ["a_indices: int64", "a_values: T", "a_shape: int64"]
MATMUL = DEFS.define(
    "SparseTensorDenseMatMul", inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
    outputs=["product: T"], attrs=["T: numeric", "Tindices: {int32, int64} = int64", "adjoint_a: bool = False",
                                   "adjoint_b: bool = False"],
    doc="A (a rank-2 SparseTensor, adjoint if adjoint_a) times the dense matrix b (adjoint if adjoint_b).")
DENSE_ADD = DEFS.define(
    "SparseTensorDenseAdd", inputs=["a_indices: Tindices", "a_values: T", "a_shape: Tindices", "b: T"],
    outputs=["output: T"], attrs=["T: numeric", "Tindices: {int32, int64}"],
    doc="The dense b plus the SparseTensor a (of b's shape).")
ADD = DEFS.define(
    "SparseAdd", inputs=_SPARSE_IN + ["b_indices: int64", "b_values: T", "b_shape: int64", "thresh: Treal"],
    outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"], attrs=["T: numeric", "Treal: real"],
    doc="a + b (SparseTensors of one shape); an entry both have is dropped when |sum| < thresh.")
ADD_GRAD = DEFS.define(
    "SparseAddGrad", inputs=["backprop_val_grad: T", "a_indices: int64", "b_indices: int64", "sum_indices: int64"],
    outputs=["a_val_grad: T", "b_val_grad: T"], attrs=["T: numeric"], grad=NOT_DIFFERENTIABLE,
    doc="The sum's value gradients at the entries of a and of b (zero where an entry was dropped).")
REDUCE_SUM = DEFS.define(
    "SparseReduceSum", inputs=["input_indices: int64", "input_values: T", "input_shape: int64",
                               "reduction_axes: int32"], outputs=["output: T"],
    attrs=["keep_dims: bool = False", "T: numeric"], doc="Sums the entries over reduction_axes; a dense result.")
REDUCE_SUM_SPARSE = DEFS.define(
    "SparseReduceSumSparse", inputs=["input_indices: int64", "input_values: T", "input_shape: int64",
                                     "reduction_axes: int32"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["keep_dims: bool = False", "T: numeric"], grad=NOT_DIFFERENTIABLE,
    doc="Sums the entries over reduction_axes; a SparseTensor of the sums of the groups that have entries.")
REDUCE_MAX = DEFS.define(
    "SparseReduceMax", inputs=["input_indices: int64", "input_values: T", "input_shape: int64",
                               "reduction_axes: int32"], outputs=["output: T"],
    attrs=["keep_dims: bool = False", "T: real"],
    doc="The largest entry over reduction_axes (absent entries take no part; 0 where none is); a dense result.")
REDUCE_MAX_SPARSE = DEFS.define(
    "SparseReduceMaxSparse", inputs=["input_indices: int64", "input_values: T", "input_shape: int64",
                                     "reduction_axes: int32"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["keep_dims: bool = False", "T: real"],
    doc="The largest entry over reduction_axes; a SparseTensor of the groups that have entries.")
SOFTMAX = DEFS.define(
    "SparseSoftmax", inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"], outputs=["output: T"],
    attrs=["T: {float16, float32, float64}"],
    doc="Softmax over the entries of each innermost row (absent entries take no part).")


@MATMUL.set_shape_fn
def _matmul_shape(op):
    a_shape = constant_value_as_shape(op.inputs[2]).merge_with(tensor_shape.TensorShape([None, None]))
    b_shape = op.inputs[3].shape.with_rank(2)
    if op.get_attr("adjoint_a"):
        a_shape = tensor_shape.TensorShape([a_shape[1], a_shape[0]])
    if op.get_attr("adjoint_b"):
        b_shape = tensor_shape.TensorShape([b_shape[1], b_shape[0]])
    if not a_shape[1].is_compatible_with(b_shape[0]):
        raise ValueError(f"SparseTensorDenseMatMul {op.name!r}: the inner dimensions differ: A is {a_shape} and "
                         f"B is {b_shape} (after adjoint_a/adjoint_b)")
    return tensor_shape.TensorShape([a_shape[0], b_shape[1]])


@MATMUL.set_gradient
def _matmul_grad(op, grad):
    indices, values, a_shape, b = op.inputs
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    b_grad = apply_op("SparseTensorDenseMatMul", [indices, values, a_shape, grad], {"adjoint_a": not adj_a})
    if adj_b:
        b_grad = transpose_ops.transpose(b_grad)
    rows, cols = indices[:, 0], indices[:, 1]
    parts_a = gather_ops.gather(grad, cols if adj_a else rows)
    parts_b = gather_ops.gather(transpose_ops.transpose(b) if adj_b else b, rows if adj_a else cols)
    return [None, reduction_ops.reduce_sum(parts_a * parts_b, axis=1), None, b_grad]


@DENSE_ADD.set_shape_fn
def _dense_add_shape(op):
    return op.inputs[3].shape.merge_with(constant_value_as_shape(op.inputs[2]))


@DENSE_ADD.set_gradient
def _dense_add_grad(op, grad):
    return [None, gather_ops.gather_nd(grad, op.inputs[0]), None, grad]


@ADD.set_shape_fn
def _add_shape(op):
    rank = op.inputs[2].shape.with_rank(1)[0].merge_with(op.inputs[5].shape.with_rank(1)[0])
    return [tensor_shape.TensorShape([None, rank]), tensor_shape.TensorShape([None]), tensor_shape.TensorShape([rank])]


@ADD.set_gradient
def _add_grad(op, *grads):
    a_grad, b_grad = apply_op("SparseAddGrad", [grads[1], op.inputs[0], op.inputs[3], op.outputs[0]])
    return [None, a_grad, None, None, b_grad, None, None]


@ADD_GRAD.set_shape_fn
def _add_grad_shape(op):
    return [tensor_shape.TensorShape([op.inputs[i].shape.with_rank(2)[0]]) for i in (1, 2)]


def _reduced(op):
    shape = constant_value_as_shape(op.inputs[2])
    axes = constant_value(op.inputs[3])
    if shape.ndims is None or axes is None:
        return None, None
    rank = shape.ndims
    axes = {int(a) % rank for a in axes.reshape(-1)} if rank else set()
    kept = [1 if i in axes else shape[i].value for i in range(rank)]
    left = [shape[i].value for i in range(rank) if i not in axes]
    return kept, left


@REDUCE_SUM.set_shape_fn
@REDUCE_MAX.set_shape_fn
def _reduce_sum_shape(op):
    kept, left = _reduced(op)
    if kept is None:
        return tensor_shape.TensorShape(None)
    return tensor_shape.TensorShape(kept if op.get_attr("keep_dims") else left)


@REDUCE_SUM.set_gradient
def _reduce_sum_grad(op, grad):
    """Each entry takes the gradient of the sum it went into (its index with the reduced axes set to 0)."""
    indices, _, dense_shape, axes = op.inputs
    rank = shape_ops.size(dense_shape)
    reduced = reduction_ops.reduce_any(comparison_ops.equal(
        shape_ops.expand_dims(range_ops.range(rank), 1), shape_ops.expand_dims((axes + rank) % rank, 0)), axis=1)
    kept_shape = comparison_ops.where_v2(reduced, fill_ops.ones_like(dense_shape), dense_shape)
    at = indices * unary_math_ops.cast(comparison_ops.logical_not(reduced), dtypes.int64)
    return [None, gather_ops.gather_nd(shape_ops.reshape(grad, kept_shape), at), None, None]


@REDUCE_SUM_SPARSE.set_shape_fn
@REDUCE_MAX_SPARSE.set_shape_fn
def _reduce_sum_sparse_shape(op):
    kept, left = _reduced(op)
    rank = None if kept is None else len(kept if op.get_attr("keep_dims") else left)
    return [tensor_shape.TensorShape([None, rank]), tensor_shape.TensorShape([None]), tensor_shape.TensorShape([rank])]


@SOFTMAX.set_shape_fn
def _softmax_shape(op):
    return tensor_shape.TensorShape([op.inputs[1].shape.with_rank(1)[0]])


@SOFTMAX.set_gradient
def _softmax_grad(op, grad):
    """(grad - sum over the row of grad * softmax) * softmax, entry by entry."""
    indices, _, dense_shape = op.inputs
    out = op.outputs[0]
    row_sums = apply_op("SparseReduceSum", [indices, out * grad, dense_shape, [-1]], {"keep_dims": True})
    row_of = concat_split_ops.concat([indices[:, :-1], fill_ops.zeros_like(indices[:, -1:])], 1)
    return [None, (grad - gather_ops.gather_nd(row_sums, row_of)) * out, None]


# ---- Python API ----------------------------------------------------------------------------------------------
def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """The rank-2 SparseTensor ``sp_a`` times the dense matrix ``b`` (each optionally adjoint): a dense matrix."""
    sp_a = _sparse(sp_a)
    b = convert_to_tensor(b, dtype=sp_a.dtype, name="b")
    return apply_op("SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, sp_a.dense_shape, b],
                    {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)},
                    name=name or "SparseTensorDenseMatMul")


def sparse_add(a, b, threshold=None, thresh=None):
    """a + b where at least one is a SparseTensor: a SparseTensor if both are, else a dense tensor. An entry both
    have is dropped when the magnitude of its sum is below ``threshold``."""
    threshold = thresh if threshold is None else threshold
    a_sparse, b_sparse = _is_sparse(a), _is_sparse(b)
    if not (a_sparse or b_sparse):
        raise TypeError("sparse_add: at least one of a and b must be a SparseTensor")
    if a_sparse and b_sparse:
        a, b = _sparse(a), _sparse(b)
        thresh = convert_to_tensor(0 if threshold is None else threshold, dtype=a.dtype.real_dtype, name="threshold")
        indices, values, shape = apply_op("SparseAdd", [a.indices, a.values, a.dense_shape, b.indices, b.values,
                                                        b.dense_shape, thresh], name="SparseAdd")
        return SparseTensor(indices, values, shape, static_shape=a.get_shape().merge_with(b.get_shape()))
    sp, dense = (_sparse(a), b) if a_sparse else (_sparse(b), a)
    dense = convert_to_tensor(dense, dtype=sp.dtype, name="b")
    return apply_op("SparseTensorDenseAdd", [sp.indices, sp.values, sp.dense_shape, dense],
                    name="SparseTensorDenseAdd")


def _is_sparse(value):
    return not isinstance(value, Tensor) and hasattr(value, "indices") and hasattr(value, "dense_shape")


def _axes(sp_input, axis, reduction_axes):
    axis = reduction_axes if axis is None else axis
    if axis is None:
        return range_ops.range(shape_ops.size(sp_input.dense_shape))
    return convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_axes")


def _keep(keepdims, keep_dims):
    return bool(keep_dims if keepdims is None else keepdims)


def _reduce(op_type, doc):
    def reduce(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
        sp_input = _sparse(sp_input)
        outputs = apply_op(op_type, [sp_input.indices, sp_input.values, sp_input.dense_shape,
                                     _axes(sp_input, axis, reduction_axes)],
                           {"keep_dims": _keep(keepdims, keep_dims)}, name=op_type)
        return SparseTensor(*outputs) if op_type.endswith("Sparse") else outputs

    reduce.__doc__ = doc
    return reduce


sparse_reduce_sum = _reduce("SparseReduceSum", "The sum of the entries over ``axis`` (all by default), as a dense "
                                               "tensor.")
sparse_reduce_sum_sparse = _reduce("SparseReduceSumSparse", "The sum of the entries over ``axis``, as a "
                                   "SparseTensor holding the sums of the groups with entries.")
sparse_reduce_max = _reduce("SparseReduceMax", "The largest entry over ``axis`` (all by default) as a dense tensor; "
                            "only the entries take part (not the implicit zeros), and a group with none gives 0.")
sparse_reduce_max_sparse = _reduce("SparseReduceMaxSparse", "The largest entry over ``axis``, as a SparseTensor "
                                   "holding the maxima of the groups with entries.")
for _fn, _name in ((sparse_reduce_sum, "sparse_reduce_sum"), (sparse_reduce_sum_sparse, "sparse_reduce_sum_sparse"),
                   (sparse_reduce_max, "sparse_reduce_max"), (sparse_reduce_max_sparse, "sparse_reduce_max_sparse")):
    _fn.__name__ = _fn.__qualname__ = _name


def sparse_softmax(sp_input, name=None):
    """Softmax over each innermost row's entries (entries in row-major order); the result has sp_input's
    indices."""
    sp_input = _sparse(sp_input)
    values = apply_op("SparseSoftmax", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                      name=name or "SparseSoftmax")
    return SparseTensor(sp_input.indices, values, sp_input.dense_shape, static_shape=sp_input.get_shape())
