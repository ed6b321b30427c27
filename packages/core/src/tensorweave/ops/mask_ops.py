"""One-hot encoding, masks and unique values: OneHot, Where (coordinates of true entries), Unique,
UniqueWithCounts and ListDiff (setdiff1d), and boolean_mask / sequence_mask built from them."""

import collections

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.graph import name_scope
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    comparison_ops, concat_split_ops, gather_ops, math_ops, range_ops, reduction_ops, shape_ops, unary_math_ops,
)

DEFS = OpDefList()

__all__ = ["one_hot", "boolean_mask", "sequence_mask", "unique", "unique_with_counts", "setdiff1d",
           "sparse_mask"]

ONE_HOT = DEFS.define(
    "OneHot", inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"], outputs=["output: T"],
    attrs=["axis: int = -1", "T: any", "TI: {uint8, int32, int64} = int64"], grad=NOT_DIFFERENTIABLE,
    doc="on_value where an index equals the position along the new ``axis`` of size depth, off_value elsewhere.")
WHERE = DEFS.define(
    "Where", inputs=["input: T"], outputs=["index: int64"], attrs=["T: {numeric, bool} = bool"],
    grad=NOT_DIFFERENTIABLE, doc="The coordinates of the true (nonzero) entries, one row each, in row-major order.")
UNIQUE = DEFS.define(
    "Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"], attrs=["T: any", "out_idx: {int32, int64} = int32"],
    grad=NOT_DIFFERENTIABLE, doc="The distinct values of a vector in order of first appearance, and where each "
                                 "entry's value sits among them.")
UNIQUE_WITH_COUNTS = DEFS.define(
    "UniqueWithCounts", inputs=["x: T"], outputs=["y: T", "idx: out_idx", "count: out_idx"],
    attrs=["T: any", "out_idx: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
    doc="Unique, plus how often each distinct value occurs.")


@ONE_HOT.set_shape_fn
def _one_hot_shape(op):
    indices, depth, on_value, off_value = op.inputs
    for t, what in ((depth, "depth"), (on_value, "on_value"), (off_value, "off_value")):
        if t.shape.ndims not in (0, None):
            raise ValueError(f"one_hot: {what} must be a scalar, got shape {t.shape}")
    axis = op.get_attr("axis")
    value = constant_value(depth)
    if value is not None and int(value) < 0:
        raise ValueError(f"one_hot: depth must be non-negative, got {int(value)}")
    if indices.shape.ndims is None:
        return tensor_shape.TensorShape(None)
    dims = indices.shape.as_list()
    if not -1 <= axis <= len(dims):
        raise ValueError(f"one_hot: axis must be -1 or in [0, {len(dims)}] for indices of rank {len(dims)}, "
                         f"got {axis}")
    dims.insert(len(dims) if axis == -1 else axis, None if value is None else int(value))
    return tensor_shape.TensorShape(dims)


@WHERE.set_shape_fn
def _where_shape(op):
    return tensor_shape.TensorShape([None, op.inputs[0].shape.ndims])


def _unique_shape(op):
    x = op.inputs[0].shape
    if x.ndims is not None and x.ndims != 1:
        raise ValueError(f"unique takes a 1-D tensor, got shape {x}; flatten it first (tf.reshape(x, [-1]))")
    return [tensor_shape.TensorShape([None]), x.with_rank(1)] + [tensor_shape.TensorShape([None])] * (
        len(op.outputs) - 2)


UNIQUE.set_shape_fn(_unique_shape)
UNIQUE_WITH_COUNTS.set_shape_fn(_unique_shape)
LIST_DIFF = DEFS.define(
    "ListDiff", inputs=["x: T", "y: T"], outputs=["out: T", "idx: out_idx"],
    attrs=["T: any", "out_idx: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
    doc="The entries of the vector x that are not in y, in x's order (repeats kept), and where they sit in x.")


@LIST_DIFF.set_shape_fn
def _list_diff_shape(op):
    op.inputs[0].shape.with_rank(1)
    op.inputs[1].shape.with_rank(1)
    return [tensor_shape.TensorShape([None])] * 2


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A one-hot tensor: position i along the new ``axis`` (default last) of size ``depth`` is ``on_value``
    (default 1) where indices == i, ``off_value`` (default 0) elsewhere; an index outside [0, depth) gives an
    all-off row. The dtype is ``dtype``, else that of on_value/off_value when they are tensors or arrays, else
    float32; Python numbers take the dtype chosen."""
    typed = {what: dtypes.as_dtype(v.dtype) for what, v in (("on_value", on_value), ("off_value", off_value))
             if v is not None and hasattr(v, "dtype")}
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        for what, dt in typed.items():
            if dt != dtype:
                raise TypeError(f"one_hot: {what} has dtype {dt.name}, which does not match dtype={dtype.name}")
    elif typed:
        dtype = next(iter(typed.values()))
    else:
        literal = next((v for v in (on_value, off_value) if v is not None), None)
        dtype = dtypes.float32 if literal is None else convert_to_tensor(literal).dtype
    if len(set(typed.values())) > 1:
        raise TypeError(f"one_hot: on_value ({typed['on_value'].name}) and off_value ({typed['off_value'].name}) "
                        f"must have one dtype")
    on = convert_to_tensor(1 if on_value is None else on_value, dtype=None if "on_value" in typed else dtype,
                           name="on_value")
    off = convert_to_tensor(0 if off_value is None else off_value, dtype=None if "off_value" in typed else dtype,
                            name="off_value")
    return apply_op("OneHot", [indices, depth, on, off], {"axis": -1 if axis is None else axis},
                    name=name or "one_hot")


def boolean_mask(tensor, mask, name="boolean_mask", axis=None):
    """The entries (or slices) of ``tensor`` where ``mask`` is true: the mask's k dims cover tensor's dims
    axis … axis+k-1, which become one dim of unknown size. E.g. a [N, D] tensor and an [N] mask give [?, D]."""
    with name_scope(name):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        k = mask.shape.ndims
        if k is None:
            raise ValueError("boolean_mask: the mask's rank must be known while building (a shape like [None] "
                             "is fine, an unknown shape is not)")
        if k == 0:
            raise ValueError("boolean_mask: the mask cannot be a scalar; use tf.cond or tf.where to choose")
        axis = 0 if axis is None else axis
        rank = tensor.shape.ndims
        if axis < 0:
            if rank is None:
                raise ValueError(f"boolean_mask: a negative axis ({axis}) needs a tensor of known rank")
            axis += rank
        if rank is not None and axis + k > rank:
            raise ValueError(f"boolean_mask: a mask of rank {k} at axis {axis} needs a tensor of rank at least "
                             f"{axis + k}, got shape {tensor.shape}")
        covered = tensor.shape[axis:axis + k] if rank is not None else tensor_shape.unknown_shape(k)
        if not covered.is_compatible_with(mask.shape):
            raise ValueError(f"boolean_mask: mask of shape {mask.shape} does not match dims {axis}..{axis + k - 1} "
                             f"of the tensor, {covered}")
        if k > 1:
            shape = shape_ops.shape(tensor)
            count = covered.num_elements()
            count = [count] if count is not None else shape_ops.reshape(
                reduction_ops.reduce_prod(shape[axis:axis + k]), [1])
            tensor = shape_ops.reshape(tensor, concat_split_ops.concat([shape[:axis], count, shape[axis + k:]], 0))
            mask = shape_ops.reshape(mask, [-1])
        chosen = apply_op("Where", [mask])[:, 0]
        return gather_ops.gather(tensor, chosen, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[..., j] = j < lengths[...]: a mask of shape lengths.shape + [maxlen] (maxlen defaults to
    max(lengths), 0 for no lengths), in ``dtype``."""
    with name_scope(name or "SequenceMask"):
        lengths = convert_to_tensor(lengths, name="lengths")
        if maxlen is None:
            maxlen = math_ops.maximum(reduction_ops.reduce_max(lengths), 0)
        else:
            maxlen = convert_to_tensor(maxlen, dtype=None if is_tensor_like(maxlen) else lengths.dtype, name="maxlen")
            if maxlen.shape.ndims not in (0, None):
                raise ValueError(f"sequence_mask: maxlen must be a scalar, got shape {maxlen.shape}")
        positions = range_ops.range(0, maxlen, 1, dtype=maxlen.dtype)
        mask = comparison_ops.less(positions, unary_math_ops.cast(lengths[..., None], maxlen.dtype))
        return mask if dtypes.as_dtype(dtype) == dtypes.bool else unary_math_ops.cast(mask, dtype)


UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCountsOutput = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique(x, out_idx=dtypes.int32, name=None):
    """(y, idx): the distinct values of the 1-D ``x`` in order of first appearance, and x == y[idx]."""
    return UniqueOutput(*apply_op("Unique", [x], {"out_idx": out_idx}, name=name or "Unique"))


ListDiffOutput = collections.namedtuple("ListDiff", ["out", "idx"])


def setdiff1d(x, y, index_dtype=dtypes.int32, name=None):
    """(out, idx): the entries of the 1-D ``x`` that are not in ``y``, in order, and x[idx] == out."""
    x = convert_to_tensor(x, name="x")
    y = convert_to_tensor(y, dtype=x.dtype, name="y")
    return ListDiffOutput(*apply_op("ListDiff", [x, y], {"out_idx": index_dtype}, name=name or "ListDiff"))


def sparse_mask(a, mask_indices, name=None):
    """The IndexedSlices ``a`` without the slices whose index is in ``mask_indices``."""
    with name_scope(name or "sparse_mask") as scope:
        indices, kept = setdiff1d(a.indices, mask_indices)
        return IndexedSlices(gather_ops.gather(a.values, kept, name=scope), indices, a.dense_shape)


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """(y, idx, count): as ``unique``, plus how often each value of y occurs in x."""
    return UniqueWithCountsOutput(*apply_op("UniqueWithCounts", [x], {"out_idx": out_idx},
                                            name=name or "UniqueWithCounts"))
