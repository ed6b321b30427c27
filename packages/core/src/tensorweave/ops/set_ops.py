"""Set operations: ``tf.sets`` over the last dimension of dense tensors
(DenseToDenseSetOperation: intersection, union, difference, each giving a SparseTensor of sorted values, as TF),
and ``tf.sets.size`` (SetSize) of a SparseTensor. None is differentiable. ``tf.setdiff1d`` of vectors is in
mask_ops."""

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

DEFS = OpDefList()

__all__ = []  # the tf.sets names are tf.sets' only
SETS = ["set_intersection", "set_union", "set_difference", "set_size", "intersection", "union", "difference",
        "size"]

_SET_TYPES = "T: {int8, int16, int32, int64, uint8, uint16, string}"

DENSE_SET = DEFS.define(
    "DenseToDenseSetOperation", inputs=["set1: T", "set2: T"],
    outputs=["result_indices: int64", "result_values: T", "result_shape: int64"],
    attrs=["set_operation: string", "validate_indices: bool = True", _SET_TYPES], grad=NOT_DIFFERENTIABLE,
    doc="For each group (all but the last dimension), the sorted intersection, union, a-b or b-a of the two "
        "groups' values, as a SparseTensor.")


@DENSE_SET.set_shape_fn
def _dense_set_shape(op):
    a, b = (t.shape for t in op.inputs)
    rank = a.ndims if a.ndims is not None else b.ndims
    if a.ndims is not None and b.ndims is not None and a.ndims != b.ndims:
        raise ValueError(f"tf.sets: a and b must have one rank, got shapes {a} and {b}")
    if rank is not None and rank < 2:
        raise ValueError(f"tf.sets: inputs must have rank 2 or more (sets along the last dimension), got {a}")
    return [tensor_shape.TensorShape([None, rank]), tensor_shape.TensorShape([None]),
            tensor_shape.TensorShape([rank])]


SET_SIZE = DEFS.define("SetSize", inputs=["set_indices: int64", "set_values: T", "set_shape: int64"],
                       outputs=["size: int32"], attrs=["validate_indices: bool = True", _SET_TYPES],
                       grad=NOT_DIFFERENTIABLE,
                       doc="The number of distinct values in each group (all but the last dimension).")
SET_SIZE.set_shape_fn(lambda op: tensor_shape.TensorShape(None))


def _dense_set(a, b, operation, validate_indices):
    if isinstance(a, SparseTensor) or isinstance(b, SparseTensor):
        raise TypeError("tf.sets: only dense tensors are supported here for a and b; convert a SparseTensor with "
                        "tf.sparse.to_dense first")
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, dtype=a.dtype, name="b")
    indices, values, shape = apply_op("DenseToDenseSetOperation", [a, b],
                                      {"set_operation": operation, "validate_indices": bool(validate_indices)},
                                      name="DenseToDenseSetOperation")
    return SparseTensor(indices, values, shape)


def set_intersection(a, b, validate_indices=True):
    """The values in both a's and b's group, per group of the last dimension, sorted, as a SparseTensor."""
    return _dense_set(a, b, "intersection", validate_indices)


def set_union(a, b, validate_indices=True):
    """The values in a's or b's group, per group of the last dimension, sorted, as a SparseTensor."""
    return _dense_set(a, b, "union", validate_indices)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """The values of a's group not in b's (b's not in a's when not ``aminusb``), sorted, as a SparseTensor."""
    return _dense_set(a, b, "a-b" if aminusb else "b-a", validate_indices)


def set_size(a, validate_indices=True):
    """The number of distinct values in each group of the SparseTensor ``a`` (int32, shape a.dense_shape[:-1])."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"tf.sets.size expects a SparseTensor, got {a!r}")
    return apply_op("SetSize", [a.indices, a.values, a.dense_shape], {"validate_indices": bool(validate_indices)},
                    name="SetSize")


intersection, union, difference, size = set_intersection, set_union, set_difference, set_size
