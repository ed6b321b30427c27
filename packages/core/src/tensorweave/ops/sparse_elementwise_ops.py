"""Elementwise ops on sparse tensors as TF1: a SparseTensor times or over a dense tensor broadcast to its shape
(the ``*`` and ``/`` operators of SparseTensor, and ``dense * sparse``), with TF's gradients, and
``sparse_maximum``/``sparse_minimum`` of two SparseTensors over the union of their entries."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import concat_split_ops, fill_ops, gather_ops, math_ops, shape_ops, slicing_ops, unary_math_ops
from tensorweave.ops.math_ops import _TRUEDIV_TYPES
from tensorweave.ops.sparse_math_ops import sparse_add
from tensorweave.ops.sparse_ops import _sparse

DEFS = OpDefList()

__all__ = ["sparse_maximum", "sparse_minimum"]

_CWISE = dict(inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64", "dense: T"], outputs=["output: T"],
              attrs=["T: numeric"])
CWISE_MUL = DEFS.define("SparseDenseCwiseMul", doc="The entries of sp times the dense tensor broadcast to sp's shape.",
                        **_CWISE)
CWISE_DIV = DEFS.define("SparseDenseCwiseDiv", doc="The entries of sp over the dense tensor broadcast to sp's shape.",
                        **_CWISE)
_PAIR = dict(inputs=["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64", "b_values: T",
                     "b_shape: int64"], outputs=["output_indices: int64", "output_values: T"], attrs=["T: real"])
MAXIMUM = DEFS.define("SparseSparseMaximum", doc="max(a, b) at each index either has (a missing entry is 0).", **_PAIR)
MINIMUM = DEFS.define("SparseSparseMinimum", doc="min(a, b) at each index either has (a missing entry is 0).", **_PAIR)


@CWISE_MUL.set_shape_fn
@CWISE_DIV.set_shape_fn
def _cwise_shape(op):
    return tensor_shape.TensorShape([op.inputs[1].shape.with_rank(1)[0]])


def _cwise_grad(op, grad, is_mul):
    """TF's: the dense operand's value at each entry, and the dense gradient summed back over the broadcast
    (several entries can read one dense element)."""
    indices, values, sp_shape, y = op.inputs
    y_shape = unary_math_ops.cast(shape_ops.shape(y), dtypes.int64)
    added = shape_ops.expand_dims(shape_ops.size(sp_shape) - shape_ops.size(y_shape), 0)
    augmented = concat_split_ops.concat([fill_ops.ones(added, dtype=dtypes.int64), y_shape], 0)
    scaled = slicing_ops.slice(indices // (sp_shape // augmented), concat_split_ops.concat([[0], added], 0), [-1, -1])
    dense_values = gather_ops.gather_nd(y, scaled)
    if is_mul:
        dx, dy_values = grad * dense_values, grad * values
    else:
        dx, dy_values = grad / dense_values, grad * (-values / unary_math_ops.square(dense_values))
    dy = sparse_add(fill_ops.zeros_like(y), SparseTensor(scaled, dy_values, y_shape))
    return [None, dx, None, dy]


CWISE_MUL.set_gradient(lambda op, grad: _cwise_grad(op, grad, True))
CWISE_DIV.set_gradient(lambda op, grad: _cwise_grad(op, grad, False))


@MAXIMUM.set_shape_fn
@MINIMUM.set_shape_fn
def _pair_shape(op):
    rank = op.inputs[2].shape.with_rank(1)[0].merge_with(op.inputs[5].shape.with_rank(1)[0])
    return [tensor_shape.TensorShape([None, rank]), tensor_shape.TensorShape([None])]


def _no_pair_gradient(op, *grads):
    raise NotImplementedError(f"Gradient for {op.type} is not implemented.")


MAXIMUM.set_gradient(_no_pair_gradient)
MINIMUM.set_gradient(_no_pair_gradient)


# ---- Python API ----------------------------------------------------------------------------------------------
def _pairwise(op_type, doc):
    def fn(sp_a, sp_b, name=None):
        sp_a, sp_b = _sparse(sp_a), _sparse(sp_b)
        with name_scope(name or op_type) as scope:
            indices, values = apply_op(op_type, [sp_a.indices, sp_a.values, sp_a.dense_shape, sp_b.indices,
                                                 sp_b.values, sp_b.dense_shape], name=scope)
        return SparseTensor(indices, values, sp_a.dense_shape, static_shape=sp_a.get_shape())

    fn.__doc__ = doc
    return fn


sparse_maximum = _pairwise("SparseSparseMaximum", "The element-wise maximum of two SparseTensors of one shape (both "
                           "in row-major order); an index only one of them has meets an implicit 0.")
sparse_minimum = _pairwise("SparseSparseMinimum", "The element-wise minimum of two SparseTensors of one shape (both "
                           "in row-major order); an index only one of them has meets an implicit 0.")
sparse_maximum.__name__, sparse_minimum.__name__ = "sparse_maximum", "sparse_minimum"


def _cwise(sp, dense, op_type, name):
    return SparseTensor(sp.indices, apply_op(op_type, [sp.indices, sp.values, sp.dense_shape, dense],
                                             name=name), sp.dense_shape, static_shape=sp.get_shape())


def _sparse_mul(sp, y):
    """``sp * y``: the entries times the dense ``y`` broadcast to sp's shape; a SparseTensor of sp's indices."""
    with name_scope("mul") as scope:
        return _cwise(sp, convert_to_tensor(y, dtype=sp.dtype.base_dtype, name="y"), "SparseDenseCwiseMul", scope)


def _sparse_div(sp, y):
    """TF's ``__div__`` of a SparseTensor: the entries over the dense ``y``, in sp's dtype."""
    with name_scope("div") as scope:
        return _cwise(sp, convert_to_tensor(y, dtype=sp.dtype.base_dtype, name="y"), "SparseDenseCwiseDiv", scope)


def _sparse_truediv(sp, y):
    """``sp / y``: as ``__div__``, integers first cast to float as ``/`` on dense tensors does."""
    with name_scope("truediv") as scope:
        y = convert_to_tensor(y, dtype=sp.dtype.base_dtype, name="y")
        as_float = _TRUEDIV_TYPES.get(sp.dtype)
        if as_float is not None:
            sp = SparseTensor(sp.indices, unary_math_ops.cast(sp.values, as_float), sp.dense_shape,
                              static_shape=sp.get_shape())
            y = unary_math_ops.cast(y, as_float)
        return _cwise(sp, y, "SparseDenseCwiseDiv", scope)


def multiply(x, y, name=None):
    """A Tensor's ``*``: ``tf.multiply``, except that ``dense * sparse`` is a SparseTensor, as TF1's."""
    if not isinstance(y, SparseTensor):
        return math_ops.multiply(x, y, name=name)
    with name_scope(name, "mul") as scope:
        return _cwise(y, convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x"), "SparseDenseCwiseMul", scope)


SparseTensor.__mul__ = _sparse_mul
SparseTensor.__div__ = _sparse_div
SparseTensor.__truediv__ = _sparse_truediv
