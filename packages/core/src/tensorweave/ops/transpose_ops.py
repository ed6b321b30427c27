"""Reordering: transpose, reverse, reverse_sequence, invert_permutation, roll.

Permutations and axes are tensor inputs, as in TF, and are validated while building whenever they are
constant. Transpose's gradient transposes back by the inverse permutation; the reverses are their own
gradients.
"""

import numpy as np

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import concat_split_ops, range_ops, shape_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["transpose", "matrix_transpose", "invert_permutation", "reverse", "reverse_v2", "reverse_sequence", "roll"]


def _check_vector(t, what):
    if t.shape.ndims not in (None, 1):
        raise ValueError(f"{what} must be a vector, got shape {t.shape}")


def check_permutation(perm, n=None):
    """A ValueError unless ``perm`` (Python ints) is a permutation of range(n or len(perm))."""
    n = len(perm) if n is None else n
    if len(perm) != n or sorted(perm) != list(range(n)):
        raise ValueError(f"perm {perm} is not a permutation of [0, ..., {n - 1}] (the input has rank {n})")


# ---- Transpose ------------------------------------------------------------------------------------------------------
TRANSPOSE = DEFS.define("Transpose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
                        attrs=["T: any", "Tperm: {int32, int64} = int32"],
                        doc="Permutes the dimensions: output dimension i is input dimension perm[i].")


@TRANSPOSE.set_shape_fn
def _transpose_shape(op):
    x, perm = op.inputs
    _check_vector(perm, "perm")
    rank, n = x.shape.ndims, perm.shape[0].value if perm.shape.ndims == 1 else None
    if rank is not None and n is not None and rank != n:
        raise ValueError(f"perm has {n} entries, but the input has rank {rank}; perm must be a permutation "
                         f"of [0, ..., {rank - 1}]")
    value = constant_value(perm)
    if value is None:
        return tensor_shape.unknown_shape(rank if rank is not None else n)
    perm = [int(p) for p in value.reshape(-1)]
    check_permutation(perm, rank)
    if rank is None:
        return tensor_shape.unknown_shape(len(perm))
    dims = x.shape.as_list()
    return tensor_shape.TensorShape([dims[p] for p in perm])


@TRANSPOSE.set_gradient
def _transpose_grad(op, grad):
    perm = op.inputs[1]
    value = constant_value(perm)
    inverse = [int(i) for i in np.argsort(value.reshape(-1))] if value is not None else invert_permutation(perm)
    return [transpose(grad, inverse), None]


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dimensions of ``a`` by ``perm`` (default: reversed, so a matrix is transposed).
    ``conjugate=True`` also conjugates complex values."""
    a = convert_to_tensor(a, name="a")
    if conjugate and a.dtype.is_complex:
        a = unary_math_ops.conj(a)
    if perm is None:
        rank = a.shape.ndims
        perm = list(range(rank - 1, -1, -1)) if rank is not None else range_ops.range(
            shape_ops.rank(a) - 1, -1, -1)
    return apply_op("Transpose", [a, perm], name=name)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of a (batch of) matrices."""
    a = convert_to_tensor(a, name="a")
    rank = a.shape.ndims
    if rank is not None and rank < 2:
        raise ValueError(f"matrix_transpose: {a.name} should be a (batch of) matrices, of rank >= 2; it has "
                         f"shape {a.shape}")
    if rank is not None:
        perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    else:
        r = shape_ops.rank(a)
        perm = concat_split_ops.concat([range_ops.range(r - 2), concat_split_ops.stack([r - 1, r - 2])], 0)
    return transpose(a, perm, name=name, conjugate=conjugate)


# ---- InvertPermutation ----------------------------------------------------------------------------------------------
INVERT_PERMUTATION = DEFS.define("InvertPermutation", inputs=["x: T"], outputs=["y: T"],
                                 attrs=["T: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                                 doc="y[x[i]] = i for a permutation x of [0, ..., n-1].")


@INVERT_PERMUTATION.set_shape_fn
def _invert_permutation_shape(op):
    _check_vector(op.inputs[0], "the permutation")
    return op.inputs[0].shape if op.inputs[0].shape.ndims is not None else tensor_shape.unknown_shape(1)


@INVERT_PERMUTATION.set_constant_fn
def _invert_permutation_value(op, index):
    value = constant_value(op.inputs[0])
    if value is None:
        return None
    check_permutation([int(p) for p in value.reshape(-1)])
    return np.argsort(value).astype(value.dtype)


def invert_permutation(x, name=None):
    """The inverse permutation of the vector ``x``."""
    return apply_op("InvertPermutation", [x], name=name or "InvertPermutation")


# ---- ReverseV2 ------------------------------------------------------------------------------------------------------
REVERSE_V2 = DEFS.define("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
                         attrs=["Tidx: {int32, int64} = int32", "T: any"],
                         doc="Reverses the order of entries along each of the given axes.")


@REVERSE_V2.set_shape_fn
def _reverse_shape(op):
    x, axis = op.inputs
    _check_vector(axis, "the reverse axes")
    value = constant_value(axis)
    if value is not None and x.shape.ndims is not None:
        seen = set()
        for a in value.reshape(-1).tolist():
            a = concat_split_ops.check_axis(int(a), x.shape.ndims, "the tensor to reverse")
            if a in seen:
                raise ValueError(f"axis {a} is given more than once in the reverse axes {value.tolist()}")
            seen.add(a)
    return x.shape


REVERSE_V2.set_gradient(lambda op, grad: [reverse(grad, op.inputs[1]), None])


def reverse(tensor, axis, name=None):
    """Reverses ``tensor`` along each axis in ``axis`` (a list; negative counts from the end).
    TF 0.x's form, one bool per dimension, is accepted too."""
    if isinstance(axis, (list, tuple)) and axis and all(isinstance(a, (bool, np.bool_)) for a in axis):
        axis = [i for i, flip in enumerate(axis) if flip]
    if isinstance(axis, (list, tuple)) and not axis:
        axis = np.zeros([0], np.int32)
    return apply_op("ReverseV2", [tensor, axis], name=name or "ReverseV2")


reverse_v2 = reverse


# ---- ReverseSequence ------------------------------------------------------------------------------------------------
REVERSE_SEQUENCE = DEFS.define(
    "ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"], outputs=["output: T"],
    attrs=["seq_dim: int", "batch_dim: int = 0", "T: any", "Tlen: {int32, int64} = int64"],
    doc="For each batch entry b, reverses the first seq_lengths[b] entries along seq_dim.")


@REVERSE_SEQUENCE.set_shape_fn
def _reverse_sequence_shape(op):
    x, lengths = op.inputs
    _check_vector(lengths, "seq_lengths")
    if x.shape.ndims is None:
        return x.shape
    seq_dim = concat_split_ops.check_axis(op.get_attr("seq_dim"), x.shape.ndims, "the sequences (seq_axis)")
    batch_dim = concat_split_ops.check_axis(op.get_attr("batch_dim"), x.shape.ndims, "the sequences (batch_axis)")
    if seq_dim == batch_dim:
        raise ValueError(f"seq_axis and batch_axis must differ, both are {seq_dim}")
    batch = x.shape[batch_dim]
    if lengths.shape.ndims == 1 and not batch.is_compatible_with(lengths.shape[0]):
        raise ValueError(f"seq_lengths has {lengths.shape[0]} entries, but the input's batch dimension "
                         f"{batch_dim} has size {batch}")
    return x.shape


REVERSE_SEQUENCE.set_gradient(lambda op, grad: [
    reverse_sequence(grad, op.inputs[1], op.get_attr("seq_dim"), op.get_attr("batch_dim")), None])


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None,  # noqa: A002 - TF's name
                     seq_dim=None, batch_dim=None):
    """Reverses the first ``seq_lengths[b]`` entries along ``seq_axis`` of each slice ``b`` along
    ``batch_axis`` (default 0). TF1's ``seq_dim`` and ``batch_dim`` are accepted."""
    seq_axis = _resolve(seq_axis, seq_dim, "seq_axis", "seq_dim")
    batch_axis = _resolve(batch_axis, batch_dim, "batch_axis", "batch_dim")
    if seq_axis is None:
        raise TypeError("reverse_sequence needs seq_axis (the axis along which to reverse)")
    return apply_op("ReverseSequence", [input, seq_lengths],
                    {"seq_dim": seq_axis, "batch_dim": 0 if batch_axis is None else batch_axis},
                    name=name or "ReverseSequence")


def _resolve(new, old, new_name, old_name):
    """TF1's deprecated-argument rule: either spelling, not both."""
    if new is not None and old is not None:
        raise ValueError(f"cannot specify both '{new_name}' and '{old_name}' (the old name of the same argument)")
    return new if new is not None else old



# ---- Roll ----------------------------------------------------------------------------------------------------------
ROLL = DEFS.define("Roll", inputs=["input: T", "shift: Tshift", "axis: Taxis"], outputs=["output: T"],
                   attrs=["T: type", "Tshift: {int32, int64}", "Taxis: {int32, int64}"],
                   doc="Entries shifted cyclically by shift[i] along axis[i] (shifts on one axis add up).")


@ROLL.set_shape_fn
def _roll_shape(op):
    _, shift, axis = op.inputs
    if shift.shape.ndims is not None and axis.shape.ndims is not None and shift.shape.ndims > 1:
        raise ValueError(f"roll: shift must be a scalar or a vector, got shape {shift.shape}")
    if not shift.shape.is_compatible_with(axis.shape):
        raise ValueError(f"roll: shift and axis must have one shape, got {shift.shape} and {axis.shape}")
    return op.inputs[0].shape


ROLL.set_gradient(lambda op, grad: [roll(grad, unary_math_ops.negative(op.inputs[1]), op.inputs[2]), None, None])


def roll(input, shift, axis, name=None):  # noqa: A002 - TF's argument name
    """``input`` with its entries shifted cyclically by ``shift`` along ``axis`` (each may be a list)."""
    return apply_op("Roll", [input, shift, axis], name=name or "Roll")
