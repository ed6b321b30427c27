"""Joining and splitting: concat, split, stack, unstack (ops ConcatV2, Concat, Split, SplitV, Pack, Unpack).

Axes are tensors for concat and split (so they may be computed at run time) and attrs for stack and
unstack, as in TF. Static shapes are checked while building whenever the axis is constant; each
gradient is the inverse operation (concat <-> split, stack <-> unstack).
"""

import numbers

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, holds_tensor, is_tensor_like, numpy_value
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops import array_ops, fill_ops, gather_ops, math_ops, shape_ops, unary_math_ops
from tensorweave.ops.array_ops import constant_from_numpy

DEFS = OpDefList()

__all__ = ["concat", "split", "stack", "pack", "unstack", "unpack", "parallel_stack"]


def is_python_int(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def constant_int(tensor):
    """A scalar int tensor's value if known while building, else None."""
    value = constant_value(tensor)
    return None if value is None or np.ndim(value) != 0 else int(value)


def check_axis(axis, rank, what):
    """``axis`` in [-rank, rank) made non-negative; a ValueError naming ``what`` otherwise."""
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for {what} of rank {rank} (expected [-{rank}, {rank}))")
    return axis % rank


def _describe(values, i):
    return f"input {i} ({values[i].name}, shape {values[i].shape})"


def _scalar_axis(axis):
    if axis.shape.ndims not in (None, 0):
        raise ValueError(f"the axis must be a scalar, got shape {axis.shape}")


# ---- ConcatV2 / Concat ----------------------------------------------------------------------------------------------
CONCAT_V2 = DEFS.define("ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
                        attrs=["N: int >= 2", "T: any", "Tidx: {int32, int64} = int32"],
                        doc="Joins N tensors of one rank along an axis; the other dimensions must agree.")
CONCAT = DEFS.define("Concat", inputs=["concat_dim: int32", "values: N * T"], outputs=["output: T"],
                     attrs=["N: int >= 2", "T: any"], doc="ConcatV2 with TF 0.x's argument order (imported graphs).")


def concat_shape(values, axis):
    """The static shape of ``values`` joined along the tensor ``axis``; a ValueError names mismatched inputs."""
    _scalar_axis(axis)
    known = [i for i, t in enumerate(values) if t.shape.ndims is not None]
    if not known:
        return tensor_shape.TensorShape(None)
    first = known[0]
    rank = values[first].shape.ndims
    for i in known:
        if values[i].shape.ndims != rank:
            raise ValueError(f"all inputs of concat must have one rank, but {_describe(values, first)} has rank "
                             f"{rank} and {_describe(values, i)} has rank {values[i].shape.ndims}")
    if rank == 0:
        raise ValueError("cannot concatenate scalars (use tf.stack instead)")
    static_axis = constant_int(axis)
    if static_axis is None:
        return tensor_shape.unknown_shape(rank)
    static_axis = check_axis(static_axis, rank, "concat inputs")
    dims, owner = [None] * rank, [None] * rank
    total = 0 if len(known) == len(values) else None
    for i in known:
        for j, d in enumerate(values[i].shape.as_list()):
            if j == static_axis:
                total = None if total is None or d is None else total + d
            elif d is not None and dims[j] is None:
                dims[j], owner[j] = d, i
            elif d is not None and dims[j] != d:
                raise ValueError(f"concat along axis {static_axis} needs the inputs' other dimensions equal, but "
                                 f"dimension {j} differs: {_describe(values, owner[j])} and {_describe(values, i)}")
    dims[static_axis] = total
    return tensor_shape.TensorShape(dims)


CONCAT_V2.set_shape_fn(lambda op: concat_shape(op.inputs[:-1], op.inputs[-1]))
CONCAT.set_shape_fn(lambda op: concat_shape(op.inputs[1:], op.inputs[0]))


def _concat_value(values, axis, dtype):
    axis = constant_int(axis)
    arrays = [constant_value(t) for t in values]
    if axis is None or any(a is None for a in arrays):
        return None
    return np.concatenate(arrays, axis).astype(dtype.as_numpy_dtype, copy=False)


CONCAT_V2.set_constant_fn(
    lambda op, index: _concat_value(op.inputs[:-1], op.inputs[-1], op.outputs[0].dtype))
CONCAT.set_constant_fn(
    lambda op, index: _concat_value(op.inputs[1:], op.inputs[0], op.outputs[0].dtype))


@CONCAT_V2.set_shape_value_fn
def _concat_v2_shape_value(op, index):
    """Shape vectors joined: each part's known entries, in order."""
    result = tensor_shape.TensorShape([])
    for t in op.inputs[:-1]:
        result = result.concatenate(constant_value_as_shape(t))
    return result


def _dense(grad):
    """A gradient as a dense tensor (an IndexedSlices is scattered into zeros)."""
    return convert_to_tensor(grad)


def _sizes_along(values, axis, rank):
    """Each input's size along ``axis``: a Python list when known while building, else a tensor."""
    static_axis = constant_int(axis)
    if static_axis is not None and rank is not None:
        static_axis %= rank
        sizes = [t.shape[static_axis].value if t.shape.ndims is not None else None for t in values]
        if None not in sizes:
            return sizes
        return stack([s if s is not None else unstack(shape_ops.shape(t), num=rank)[static_axis]
                      for s, t in zip(sizes, values)])
    return stack([gather_ops.gather(shape_ops.shape(t), axis) for t in values])


def _int32_axis(axis, values):
    """The concat axis as a non-negative int32 (Split's split_dim is int32)."""
    static = constant_int(axis)
    rank = next((t.shape.ndims for t in values if t.shape.ndims is not None), None)
    if static is not None and rank is not None:
        return static % rank
    if static is not None and static >= 0:
        return static
    axis = unary_math_ops.cast(axis, dtypes.int32) if axis.dtype != dtypes.int32 else axis
    return math_ops.floormod(axis, shape_ops.rank(values[0]))

def _concat_grad(values, axis, grad):
    grad = _dense(grad)
    rank = grad.shape.ndims if grad.shape.ndims is not None else next(
        (t.shape.ndims for t in values if t.shape.ndims is not None), None)
    split_axis = _int32_axis(axis, values)
    return split(grad, _sizes_along(values, split_axis, rank), axis=split_axis, num=len(values))


CONCAT_V2.set_gradient(lambda op, grad: _concat_grad(op.inputs[:-1], op.inputs[-1], grad) + [None])
CONCAT.set_gradient(lambda op, grad: [None] + _concat_grad(op.inputs[1:], op.inputs[0], grad))


def concat(values, axis, name="concat"):
    """Joins ``values`` along ``axis`` (negative counts from the end; a tensor is allowed).

    TF 0.x's ``concat(concat_dim, values)`` order is accepted; one value returns an identity.
    """
    if is_python_int(values) and isinstance(axis, (list, tuple)):
        values, axis = axis, values
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        value = convert_to_tensor(values[0])
        axis_rank = convert_to_tensor(axis).shape.ndims if is_tensor_like(axis) else np.ndim(axis)
        if axis_rank not in (None, 0):
            raise ValueError(f"concat: the axis must be a scalar, got {axis!r}")
        if is_python_int(axis) and value.shape.ndims:
            check_axis(int(axis), value.shape.ndims, "concat inputs")
        return array_ops.identity(value, name=name)
    return apply_op("ConcatV2", [list(values), axis], name=name)


# ---- Split / SplitV -------------------------------------------------------------------------------------------------
SPLIT = DEFS.define("Split", inputs=["split_dim: int32", "value: T"], outputs=["output: num_split * T"],
                    attrs=["num_split: int >= 1", "T: any"], doc="Splits a tensor into num_split equal parts.")
SPLIT_V = DEFS.define("SplitV", inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
                      outputs=["output: num_split * T"],
                      attrs=["num_split: int >= 1", "T: any", "Tlen: {int32, int64} = int64"],
                      doc="Splits a tensor into parts of the given sizes (one size may be -1: the rest).")


def _split_shapes(value, split_dim, n, sizes):
    """Static shapes of the parts; ``sizes`` is a list (None entries unknown, one -1 allowed) or None."""
    _scalar_axis(split_dim)
    shape = value.shape
    if shape.ndims is None:
        return [tensor_shape.TensorShape(None)] * n
    if shape.ndims == 0:
        raise ValueError("cannot split a scalar")
    axis = constant_int(split_dim)
    if axis is None:
        return [tensor_shape.unknown_shape(shape.ndims)] * n
    axis = check_axis(axis, shape.ndims, "the value to split")
    total = shape[axis].value
    if sizes is None:
        if total is not None and total % n:
            raise ValueError(f"cannot split dimension {axis} of size {total} into {n} equal parts ({total} is "
                             f"not divisible by {n}); pass a list of sizes to split unequally")
        sizes = [None if total is None else total // n] * n
    else:
        sizes = _resolve_sizes(sizes, n, total, axis)
    dims = shape.as_list()
    return [tensor_shape.TensorShape(dims[:axis] + [s] + dims[axis + 1:]) for s in sizes]


def _resolve_sizes(sizes, n, total, axis):
    if len(sizes) != n:
        raise ValueError(f"size_splits has {len(sizes)} entries but num_split is {n}")
    if sizes.count(-1) > 1 or any(s is not None and s < -1 for s in sizes):
        raise ValueError(f"size_splits {sizes} may contain at most one -1 and no other negative size")
    known = sum(s for s in sizes if s is not None and s >= 0)
    if total is not None and (known > total or (-1 not in sizes and None not in sizes and known != total)):
        raise ValueError(f"size_splits {sizes} must add up to the size {total} of dimension {axis} of the value")
    if -1 in sizes:
        rest = None if total is None or None in sizes else total - known
        sizes = [rest if s == -1 else s for s in sizes]
    return sizes


SPLIT.set_shape_fn(lambda op: _split_shapes(op.inputs[1], op.inputs[0], op.get_attr("num_split"), None))


@SPLIT_V.set_shape_fn
def _split_v_shape(op):
    value, size_splits, split_dim = op.inputs
    if size_splits.shape.ndims not in (None, 1):
        raise ValueError(f"size_splits must be a vector, got shape {size_splits.shape}")
    known = constant_value(size_splits)
    n = op.get_attr("num_split")
    sizes = None if known is None else [int(s) for s in np.asarray(known).reshape(-1)]
    if sizes is None:
        partial = constant_value_as_shape(size_splits)
        sizes = partial.as_list() if partial.ndims == n else [None] * n
    return _split_shapes(value, split_dim, n, sizes)


def _filled(op, grads):
    """Output gradients with missing ones as zeros of their output's shape."""
    return [fill_ops.zeros_like(t) if g is None else _dense(g) for g, t in zip(grads, op.outputs)]


SPLIT.set_gradient(lambda op, *grads: [None, concat(_filled(op, grads), op.inputs[0])])
SPLIT_V.set_gradient(lambda op, *grads: [concat(_filled(op, grads), op.inputs[2]), None, None])


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits ``value`` along ``axis`` into ``num_or_size_splits`` equal parts (an int) or parts of the
    given sizes (a list or 1-D tensor, one of them may be -1). Returns a list of tensors."""
    if is_python_int(num_or_size_splits) or isinstance(num_or_size_splits, tensor_shape.Dimension):
        return apply_op("Split", [axis, value], {"num_split": int(num_or_size_splits)}, name=name)
    sizes = num_or_size_splits
    if num is None:
        if isinstance(sizes, (list, tuple, np.ndarray)):
            num = int(np.size(sizes))
        else:
            sizes = convert_to_tensor(sizes, name="size_splits")
            num = sizes.shape[0].value if sizes.shape.ndims == 1 else None
            if num is None:
                raise ValueError(f"split: cannot infer the number of parts from size_splits {sizes.name} of "
                                 f"shape {sizes.shape}; pass num=")
    return apply_op("SplitV", [value, sizes, axis], {"num_split": num}, name=name)


# ---- Pack / Unpack --------------------------------------------------------------------------------------------------
PACK = DEFS.define("Pack", inputs=["values: N * T"], outputs=["output: T"],
                   attrs=["N: int >= 1", "T: any", "axis: int = 0"],
                   doc="Stacks N tensors of one shape into one of rank + 1 along a new axis.")
UNPACK = DEFS.define("Unpack", inputs=["value: T"], outputs=["output: num * T"],
                     attrs=["num: int >= 0", "T: any", "axis: int = 0"],
                     doc="Unstacks a tensor along an axis into num tensors of rank - 1.")


@PACK.set_shape_fn
def _pack_shape(op):
    values = op.inputs
    shape, owner = tensor_shape.TensorShape(None), 0
    for i, t in enumerate(values):
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"all inputs of stack must have one shape, but {_describe(values, owner)} and "
                             f"{_describe(values, i)} differ")
        if t.shape.ndims is not None and shape.ndims is None:
            owner = i
        shape = shape.merge_with(t.shape)
    if shape.ndims is None:
        return tensor_shape.TensorShape(None)
    axis = check_axis(op.get_attr("axis"), shape.ndims + 1, "the stacked result")
    dims = shape.as_list()
    return tensor_shape.TensorShape(dims[:axis] + [len(values)] + dims[axis:])


@UNPACK.set_shape_fn
def _unpack_shape(op):
    shape, num = op.inputs[0].shape, op.get_attr("num")
    if shape.ndims is None:
        return [tensor_shape.TensorShape(None)] * num
    if shape.ndims == 0:
        raise ValueError("cannot unstack a scalar")
    axis = check_axis(op.get_attr("axis"), shape.ndims, "the value to unstack")
    if shape[axis].value is not None and shape[axis].value != num:
        raise ValueError(f"cannot unstack dimension {axis} of size {shape[axis].value} into {num} tensors")
    dims = shape.as_list()
    return [tensor_shape.TensorShape(dims[:axis] + dims[axis + 1:])] * num


@PACK.set_constant_fn
def _pack_value(op, index):
    arrays = [constant_value(t) for t in op.inputs]
    if any(a is None for a in arrays):
        return None
    return np.stack(arrays, op.get_attr("axis")).astype(op.outputs[0].dtype.as_numpy_dtype, copy=False)


@PACK.set_shape_value_fn
def _pack_shape_value(op, index):
    """A shape vector stacked from scalars: the known ones (not -1) are known dimensions."""
    dims = []
    for t in op.inputs:
        v = constant_value(t)
        dims.append(None if v is None or int(v) < 0 else int(v))
    return tensor_shape.TensorShape(dims)


PACK.set_gradient(lambda op, grad: unstack(_dense(grad), num=len(op.inputs), axis=op.get_attr("axis")))
UNPACK.set_gradient(lambda op, *grads: [stack(_filled(op, grads), axis=op.get_attr("axis"))])


def stack(values, axis=0, name="stack"):
    """Stacks a list of tensors (Python values, and nested lists of them, mixed in) along a new ``axis``.

    A list of Python/numpy values alone becomes one constant, as in TF.
    """
    if not isinstance(values, (list, tuple)):
        if axis == 0:
            return convert_to_tensor(values, name=name)
        raise TypeError(f"stack takes a list of tensors, got {values!r}")
    if not holds_tensor(values):
        arr = numpy_value(values)
        axis = check_axis(axis, arr.ndim, "the stacked result")
        return constant_from_numpy(np.ascontiguousarray(np.moveaxis(arr, 0, axis)), name=name)
    return apply_op("Pack", [values], {"axis": axis}, name=name)


def pack(values, axis=0, name="pack"):
    """TF 0.x's name of ``stack``."""
    return stack(values, axis=axis, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits ``value`` along ``axis`` into a list of ``num`` tensors of one less rank; ``num`` defaults to
    the size of that dimension, which must then be known while building."""
    value = convert_to_tensor(value, name="value")
    if num is None:
        shape = value.shape
        if shape.ndims is None:
            raise ValueError(f"unstack: cannot infer num from {value.name}, whose rank is unknown; pass num=")
        if shape.ndims == 0:
            raise ValueError(f"unstack: cannot unstack the scalar {value.name}")
        num = shape[check_axis(axis, shape.ndims, "the value to unstack")].value
        if num is None:
            raise ValueError(f"unstack: cannot infer num from shape {shape} of {value.name}: dimension {axis} is "
                             f"unknown while building; pass num=")
    return apply_op("Unpack", [value], {"num": num, "axis": axis}, name=name)


def unpack(value, num=None, axis=0, name="unpack"):
    """TF 0.x's name of ``unstack``."""
    return unstack(value, num=num, axis=axis, name=name)


def parallel_stack(values, name="parallel_stack"):
    """``stack`` along axis 0 for values whose shape is fully known while building (TF's requirement, as
    the output is allocated before the inputs are computed)."""
    values = [convert_to_tensor(v) if is_tensor_like(v) else v for v in values]
    first = next((v for v in values if is_tensor_like(v)), None)
    shape = first.shape if first is not None else tensor_shape.TensorShape(np.shape(values[0]))
    if not shape.is_fully_defined():
        raise ValueError(f"parallel_stack needs inputs whose shape is fully known while building; "
                         f"{first.name} has shape {shape}. Use tf.stack instead")
    return stack(values, axis=0, name=name)
