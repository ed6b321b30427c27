"""Shape ops: shape, shape_n, size, rank, reshape, expand_dims, squeeze, broadcast_to, ensure_shape.

Shapes are inferred while building whenever the inputs allow (a reshape's target from a constant or
partly constant shape tensor, with -1 inferred), so size and axis mistakes raise there. As in TF1,
``shape``/``size``/``rank`` of a tensor whose static shape decides them are constants.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, holds_tensor, is_tensor_like, packed_dtype
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops import broadcast_gradient_ops
from tensorweave.ops.array_ops import constant_from_numpy

DEFS = OpDefList()

__all__ = ["shape", "shape_n", "size", "rank", "reshape", "expand_dims", "squeeze", "broadcast_to",
           "broadcast_dynamic_shape", "broadcast_static_shape", "ensure_shape"]


def shape_tensor(shape, name="shape"):
    """A 1-D integer tensor from a shape given as a tensor, a TensorShape, or a list mixing ints and scalar
    tensors (which ``convert_to_tensor`` packs)."""
    if isinstance(shape, tensor_shape.TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"shape {shape} is not fully defined; pass a shape tensor (e.g. tf.shape(x)) instead")
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and holds_tensor(shape):  # packed; other entries cast to int32, as TF1
        index = packed_dtype(shape) in (dtypes.int32, dtypes.int64)
        return convert_to_tensor(shape, dtype=None if index else dtypes.int32, name=name)
    if is_tensor_like(shape) or (isinstance(shape, np.ndarray) and shape.dtype in (np.int32, np.int64)):
        return convert_to_tensor(shape, name=name)
    return convert_to_tensor(shape, dtype=_index_dtype(shape), name=name)


def _index_dtype(values):
    arr = np.asarray(values)
    if arr.dtype.kind not in "iu" and arr.size:
        raise TypeError(f"a shape must hold integers, got {values!r}")
    return dtypes.int64 if arr.size and (arr.max() > np.iinfo(np.int32).max) else dtypes.int32


def _constant(value, dtype, name):
    return constant_from_numpy(np.array(value, dtypes.as_dtype(dtype).as_numpy_dtype), name=name)


# ---- Shape, ShapeN, Size, Rank --------------------------------------------------------------------------------------
SHAPE = DEFS.define("Shape", inputs=["input: T"], outputs=["output: out_type"],
                    attrs=["T: any", "out_type: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                    doc="The shape of a tensor, as a 1-D integer tensor.")
SHAPE_N = DEFS.define("ShapeN", inputs=["input: N * T"], outputs=["output: N * out_type"],
                      attrs=["N: int >= 1", "T: any", "out_type: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                      doc="The shapes of N tensors in one op.")
SIZE = DEFS.define("Size", inputs=["input: T"], outputs=["output: out_type"],
                   attrs=["T: any", "out_type: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                   shape_fn=common_shapes.scalar_shape, doc="The number of elements of a tensor.")
RANK = DEFS.define("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=["T: any"], grad=NOT_DIFFERENTIABLE,
                   shape_fn=common_shapes.scalar_shape, doc="The number of dimensions of a tensor.")


@SHAPE_N.set_shape_fn
@SHAPE.set_shape_fn
def _shape_shape(op):
    return [tensor_shape.TensorShape([t.shape.ndims]) for t in op.inputs]


@SHAPE_N.set_constant_fn
@SHAPE.set_constant_fn
def _shape_value(op, index):
    shape = op.inputs[index].shape
    return np.array(shape.as_list(), op.outputs[index].dtype.as_numpy_dtype) if shape.is_fully_defined() else None


SHAPE.set_shape_value_fn(lambda op, index: op.inputs[0].shape)  # the input's static shape, partly known


@SIZE.set_constant_fn
def _size_value(op, index):
    n = op.inputs[0].shape.num_elements()
    return None if n is None else np.array(n, op.outputs[0].dtype.as_numpy_dtype)


@RANK.set_constant_fn
def _rank_value(op, index):
    rank = op.inputs[0].shape.ndims
    return None if rank is None else np.array(rank, np.int32)


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002 - TF's argument name
    """The shape of ``input`` as a 1-D tensor of ``out_type``; a constant when the static shape is known."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.shape.is_fully_defined():
        return _constant(input.shape.as_list(), out_type, name or "Shape")
    return apply_op("Shape", [input], {"out_type": dtypes.as_dtype(out_type)}, name=name or "Shape")


def shape_n(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shapes of a list of tensors, each a 1-D tensor of ``out_type`` (one ShapeN op)."""
    return apply_op("ShapeN", [list(input)], {"out_type": dtypes.as_dtype(out_type)}, name=name or "ShapeN")


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    """The number of elements of ``input`` as a scalar of ``out_type``; a constant when known."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.shape.is_fully_defined():
        return _constant(input.shape.num_elements(), out_type, name or "Size")
    return apply_op("Size", [input], {"out_type": dtypes.as_dtype(out_type)}, name=name or "Size")


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of ``input`` as an int32 scalar; a constant when known."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.shape.ndims is not None:
        return _constant(input.shape.ndims, dtypes.int32, name or "Rank")
    return apply_op("Rank", [input], name=name or "Rank")


# ---- Reshape --------------------------------------------------------------------------------------------------------
RESHAPE = DEFS.define("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
                      attrs=["T: any", "Tshape: {int32, int64} = int32"],
                      doc="The same elements in a new shape; one -1 entry is inferred.")


def check_reshape_target(dims):
    """Validates a constant target shape: only -1 may be negative, and only once."""
    bad = [d for d in dims if d < -1]
    if bad:
        raise ValueError(f"target shape {dims} has the negative size {bad[0]}; only -1 (infer that size) is allowed")
    if dims.count(-1) > 1:
        raise ValueError(f"target shape {dims} has more than one -1; only one size can be inferred")


def _elements(dims):
    return int(np.prod(dims, dtype=np.int64))


@RESHAPE.set_shape_fn
def _reshape_shape(op):
    x, target = op.inputs
    target.shape.with_rank(1)
    value = constant_value(target)
    if value is not None:
        dims = [int(d) for d in value.reshape(-1)]
        check_reshape_target(dims)
        out = [None if d == -1 else d for d in dims]
    else:
        out = constant_value_as_shape(target)
        if out.ndims is None:
            return tensor_shape.TensorShape(None)
        out = out.as_list()
    return tensor_shape.TensorShape(_complete_reshape(x.shape, out))


def _complete_reshape(in_shape, out):
    """``out`` with a single unknown size filled in from a fully known input; a size mismatch raises."""
    known = [d for d in out if d is not None]
    product, unknown = _elements(known), len(out) - len(known)
    shown = [-1 if d is None else d for d in out]
    if in_shape.is_fully_defined():
        n = in_shape.num_elements()
        if unknown == 0 and product != n:
            raise ValueError(f"Cannot reshape a tensor with {n} elements (shape {in_shape}) to shape {shown} "
                             f"({product} elements)")
        if unknown == 1 and product:
            if n % product:
                raise ValueError(f"Cannot reshape a tensor with {n} elements (shape {in_shape}) to shape {shown}: "
                                 f"{n} is not a multiple of {product}, the product of the given sizes")
            out = [n // product if d is None else d for d in out]
    elif in_shape.ndims is not None and unknown == 0:
        in_known = _elements([d for d in in_shape.as_list() if d is not None])
        if (product % in_known) if in_known else product:
            raise ValueError(f"Cannot reshape a tensor of shape {in_shape} to shape {shown} ({product} elements): "
                             f"the input's element count is a multiple of {in_known}")
    return out


@RESHAPE.set_constant_fn
def _reshape_value(op, index):
    value, target = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    return None if value is None or target is None else value.reshape([int(d) for d in target.reshape(-1)])


def _back_to_input_shape(op, grad):
    """``grad`` reshaped to the shape of ``op``'s first input: static when known (one unknown size as -1)."""
    x = op.inputs[0]
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is not None and (None not in dims or (dims.count(None) == 1 and 0 not in dims)):
        if grad.shape.is_fully_defined() and grad.shape.as_list() == dims:
            return grad
        return reshape(grad, [-1 if d is None else d for d in dims])
    return reshape(grad, shape(x))


RESHAPE.set_gradient(lambda op, grad: [_back_to_input_shape(op, grad), None])


def reshape(tensor, shape, name=None):  # noqa: A002 - TF's argument name
    """``tensor``'s elements (row-major) in ``shape``; one entry may be -1 and is inferred."""
    return apply_op("Reshape", [tensor, shape_tensor(shape)], name=name or "Reshape")


# ---- ExpandDims, Squeeze --------------------------------------------------------------------------------------------
EXPAND_DIMS = DEFS.define("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
                          attrs=["T: any", "Tdim: {int32, int64} = int32"],
                          doc="Inserts a dimension of size 1 at index dim (negative counts from the end).")


def expand_axis(axis, rank):
    """The non-negative position of a new axis ``axis`` in a rank-``rank`` tensor; ValueError out of range."""
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"expand_dims axis {axis} is out of range for a tensor of rank {rank}: it must be in "
                         f"[{-rank - 1}, {rank}]")
    return axis + rank + 1 if axis < 0 else axis


@EXPAND_DIMS.set_shape_fn
def _expand_dims_shape(op):
    x, dim = op.inputs
    value, rank = constant_value(dim), x.shape.ndims
    if value is not None and value.size != 1:
        raise ValueError(f"the axis of expand_dims must be a single integer, got {value.tolist()}")
    if rank is None:
        return tensor_shape.TensorShape(None)
    if value is None:
        return tensor_shape.unknown_shape(rank + 1)
    dims = x.shape.as_list()
    dims.insert(expand_axis(int(value.reshape(-1)[0]), rank), 1)
    return tensor_shape.TensorShape(dims)


@EXPAND_DIMS.set_constant_fn
def _expand_dims_value(op, index):
    value, dim = constant_value(op.inputs[0]), constant_value(op.inputs[1])
    if value is None or dim is None:
        return None
    return np.expand_dims(value, expand_axis(int(dim.reshape(-1)[0]), value.ndim))


EXPAND_DIMS.set_gradient(lambda op, grad: [_back_to_input_shape(op, grad), None])


def _resolve(new, old, new_name, old_name):
    if new is not None and old is not None:
        raise ValueError(f"cannot specify both '{new_name}' and '{old_name}' (the old name of the same argument)")
    return new if new is not None else old


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    """``input`` with a new dimension of size 1 at ``axis`` (``dim`` is TF1's old name)."""
    axis = _resolve(axis, dim, "axis", "dim")
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op("ExpandDims", [input, axis], name=name or "ExpandDims")


SQUEEZE = DEFS.define("Squeeze", inputs=["input: T"], outputs=["output: T"],
                      attrs=["T: any", "squeeze_dims: list(int) = []"],
                      doc="Removes dimensions of size 1 (the listed ones, or all).")


def squeeze_axes(dims, axes):
    """The non-negative axes to remove from a tensor of sizes ``dims`` (None where unknown); all size-1 axes
    when ``axes`` is empty. ValueError for an axis out of range or of a size other than 1."""
    rank = len(dims)
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"squeeze axis {a} is out of range for a tensor of rank {rank}: it must be in "
                             f"[{-rank}, {rank})")
    if not axes:
        return [i for i, d in enumerate(dims) if d == 1]
    chosen = sorted({a % rank for a in axes})
    for a in chosen:
        if dims[a] not in (1, None):
            raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got {dims[a]}")
    return chosen


@SQUEEZE.set_shape_fn
def _squeeze_shape(op):
    x, axes = op.inputs[0], op.get_attr("squeeze_dims")
    if x.shape.ndims is None:
        return tensor_shape.TensorShape(None)
    dims = x.shape.as_list()
    if not axes and None in dims:
        return tensor_shape.TensorShape(None)
    gone = squeeze_axes(dims, axes)
    return tensor_shape.TensorShape([d for i, d in enumerate(dims) if i not in gone])


@SQUEEZE.set_constant_fn
def _squeeze_value(op, index):
    value = constant_value(op.inputs[0])
    if value is None:
        return None
    return np.squeeze(value, axis=tuple(squeeze_axes(list(value.shape), op.get_attr("squeeze_dims"))))


SQUEEZE.set_gradient(lambda op, grad: [_back_to_input_shape(op, grad)])


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """``input`` without its size-1 dimensions (only those in ``axis`` if given; ``squeeze_dims`` is the old
    name). Squeezing a dimension whose size is not 1 is an error."""
    axis = _resolve(axis, squeeze_dims, "axis", "squeeze_dims")
    if axis is None:
        axis = []
    elif not isinstance(axis, (list, tuple)):
        axis = [axis]
    return apply_op("Squeeze", [input], {"squeeze_dims": [int(a) for a in axis]}, name=name or "Squeeze")


# ---- BroadcastTo, BroadcastArgs -------------------------------------------------------------------------------------
BROADCAST_TO = DEFS.define("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
                           attrs=["T: any", "Tidx: {int32, int64} = int32"],
                           doc="The input repeated (numpy broadcasting) to the given shape.")


@BROADCAST_TO.set_shape_fn
def _broadcast_to_shape(op):
    x, target = op.inputs
    target.shape.with_rank(1)
    out = constant_value_as_shape(target)
    if out.ndims is None or x.shape.ndims is None:
        return out
    if x.shape.ndims > out.ndims:
        raise ValueError(f"cannot broadcast a tensor of shape {x.shape} to shape {out}, which has fewer dimensions")
    dims = out.as_list()
    lead = len(dims) - x.shape.ndims
    for i, d in enumerate(x.shape.as_list()):
        t = dims[lead + i]
        if d in (1, None):
            continue
        if t is None:
            dims[lead + i] = d
        elif t != d:
            raise ValueError(f"cannot broadcast a tensor of shape {x.shape} to shape {out}: dimension {lead + i} "
                             f"is {d} in the input and {t} in the target (it must be equal or 1 in the input)")
    return tensor_shape.TensorShape(dims)


@BROADCAST_TO.set_gradient
def _broadcast_to_grad(op, grad):
    return [broadcast_gradient_ops.unbroadcast(grad, op.inputs[0], op.outputs[0]), None]


def broadcast_to(input, shape, name=None):  # noqa: A002
    """``input`` broadcast (numpy rules) to ``shape``."""
    return apply_op("BroadcastTo", [input, shape_tensor(shape)], name=name or "BroadcastTo")


BROADCAST_ARGS = DEFS.define("BroadcastArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T"],
                             attrs=["T: {int32, int64} = int32"], grad=NOT_DIFFERENTIABLE,
                             doc="The broadcast of two shapes given as 1-D tensors.")


@BROADCAST_ARGS.set_shape_fn
def _broadcast_args_shape(op):
    ranks = [t.shape.with_rank(1)[0].value for t in op.inputs]
    return tensor_shape.TensorShape([None if None in ranks else max(ranks)])


def broadcast_shape_values(s0, s1):
    """numpy broadcasting of two shapes given as int sequences; ValueError names both if incompatible."""
    try:
        return list(np.broadcast_shapes(tuple(int(d) for d in s0), tuple(int(d) for d in s1)))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: {list(s0)} and {list(s1)}") from None


@BROADCAST_ARGS.set_constant_fn
def _broadcast_args_value(op, index):
    s0, s1 = (constant_value(t) for t in op.inputs)
    if s0 is None or s1 is None:
        return None
    return np.array(broadcast_shape_values(s0.tolist(), s1.tolist()), op.outputs[0].dtype.as_numpy_dtype)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two 1-D shape tensors, as a 1-D tensor (computed at run time if not known)."""
    return apply_op("BroadcastArgs", [shape_tensor(shape_x), shape_tensor(shape_y)], name="BroadcastArgs")


def broadcast_static_shape(shape_x, shape_y):
    """The broadcast of two TensorShapes; ValueError if they cannot broadcast."""
    return common_shapes.broadcast_shapes(shape_x, shape_y)


# ---- EnsureShape ----------------------------------------------------------------------------------------------------
ENSURE_SHAPE = DEFS.define("EnsureShape", inputs=["input: T"], outputs=["output: T"], attrs=["T: any", "shape: shape"],
                           doc="Passes its input through after checking it has a compatible shape.")


@ENSURE_SHAPE.set_shape_fn
def _ensure_shape_shape(op):
    x, want = op.inputs[0], op.get_attr("shape")
    if not x.shape.is_compatible_with(want):
        raise ValueError(f"input of shape {x.shape} is not compatible with the expected shape {want}")
    return x.shape.merge_with(want)


ENSURE_SHAPE.set_gradient(lambda op, grad: [grad])


def ensure_shape(x, shape, name=None):
    """``x``, checked (while building and at run time) to have a shape compatible with ``shape``."""
    return apply_op("EnsureShape", [x], {"shape": tensor_shape.as_shape(shape)}, name=name or "EnsureShape")
