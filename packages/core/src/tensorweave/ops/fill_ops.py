"""Fills: fill, zeros, ones, zeros_like, ones_like.

As in TF1, a fill whose shape is known while building is a constant when small, and a Fill of a scalar
constant when large (so big arrays are not embedded in the graph); a shape known only at run time gives
a Fill. ``zeros_like``/``ones_like`` of a tensor whose static shape is known are constants too.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import common_shapes, graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, holds_tensor, is_tensor_like
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops import array_ops, reduction_ops, shape_ops

DEFS = OpDefList()

__all__ = ["fill", "zeros", "ones", "zeros_like", "ones_like"]

_LARGEST_CONSTANT = 1000  # TF1's limit for embedding a fill as a Const
_LARGEST_FOLDED = 1 << 16  # the largest fill constant_value materializes

FILL = DEFS.define("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
                   attrs=["T: any", "index_type: {int32, int64} = int32"],
                   doc="A tensor of shape dims with every entry the scalar value.")


@FILL.set_shape_fn
def _fill_shape(op):
    dims, value = op.inputs
    dims.shape.with_rank(1)
    if value.shape.ndims not in (None, 0):
        raise ValueError(f"the value of fill must be a scalar, got a tensor of shape {value.shape}")
    known = constant_value(dims)
    if known is not None and (known < 0).any():
        raise ValueError(f"fill dims must be non-negative, got {known.tolist()}")
    return constant_value_as_shape(dims)


@FILL.set_constant_fn
def _fill_value(op, index):
    dims, value = (constant_value(t) for t in op.inputs)
    if dims is None or value is None or int(np.prod(dims, dtype=np.int64)) > _LARGEST_FOLDED:
        return None
    return np.full([int(d) for d in dims], value, dtype=op.outputs[0].dtype.as_numpy_dtype)


@FILL.set_gradient
def _fill_grad(op, grad):
    return [None, reduction_ops.reduce_sum(grad)]


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` (a 1-D tensor, or a list of ints and scalar tensors) filled with ``value``."""
    return apply_op("Fill", [shape_ops.shape_tensor(dims), value], name=name or "Fill")


# ---- ZerosLike, OnesLike --------------------------------------------------------------------------------------------
ZEROS_LIKE = DEFS.define("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: any"], grad=NOT_DIFFERENTIABLE,
                         shape_fn=common_shapes.unchanged_shape, doc="Zeros (b'' for strings) shaped as x.")
ONES_LIKE = DEFS.define("OnesLike", inputs=["x: T"], outputs=["y: T"],
                        attrs=["T: {bool, float16, float32, float64, int8, int16, int32, int64, uint8, complex64, "
                               "complex128}"],
                        grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.unchanged_shape, doc="Ones shaped as x.")


def _like_value(fill_value):
    def evaluate(op, index):
        shape = op.inputs[0].shape
        if not shape.is_fully_defined() or shape.num_elements() > _LARGEST_FOLDED:
            return None
        return np.full(shape.as_list(), fill_value(op.outputs[0].dtype), dtype=op.outputs[0].dtype.as_numpy_dtype)
    return evaluate


def _zero(dtype):
    return b"" if dtype is dtypes.string else False if dtype is dtypes.bool else 0


def _one(dtype):
    if dtype is dtypes.string:
        raise TypeError("ones of dtype string are not defined; use tf.fill(shape, b'...') for a string fill")
    return True if dtype is dtypes.bool else 1


ZEROS_LIKE.set_constant_fn(_like_value(_zero))
ONES_LIKE.set_constant_fn(_like_value(_one))


# ---- wrappers -------------------------------------------------------------------------------------------------------
def _static_dims(shape):
    """``shape`` as a list of ints if it is given without tensors, else None (a run-time shape)."""
    if is_tensor_like(shape) or (isinstance(shape, (list, tuple)) and holds_tensor(shape)):
        return None
    dims = tensor_shape.as_shape(shape)
    if not dims.is_fully_defined():
        raise ValueError(f"a fill needs a fully defined shape, got {dims}; pass a shape tensor (e.g. tf.shape(x)) "
                         f"for sizes known only at run time")
    return dims.as_list()


def _filled(shape, dtype, value, name, default_name):
    dtype = dtypes.as_dtype(dtype)
    scalar = value(dtype)
    with graph_mod.name_scope(name, default_name, [shape] if is_tensor_like(shape) else []) as scope:
        dims = _static_dims(shape)
        if dims is not None and int(np.prod(dims, dtype=np.int64)) < _LARGEST_CONSTANT:
            return array_ops.constant_from_numpy(np.full(dims, scalar, dtype=dtype.as_numpy_dtype), name=scope)
        dims = shape_ops.shape_tensor(dims if dims is not None else shape)
        if dims.shape.ndims == 0:
            dims = shape_ops.reshape(dims, [-1])
        return apply_op("Fill", [dims, array_ops.constant(scalar, dtype=dtype)], name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of ``shape`` (a list, TensorShape or 1-D tensor) and ``dtype`` of zeros (False, b'')."""
    return _filled(shape, dtype, _zero, name, "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ``shape`` and ``dtype`` of ones (True for bool)."""
    return _filled(shape, dtype, _one, name, "ones")


def _filled_like(tensor, dtype, name, optimize, op_type, value, default_name):
    tensor = convert_to_tensor(tensor)
    dtype = tensor.dtype if dtype is None else dtypes.as_dtype(dtype)
    with graph_mod.name_scope(name, default_name, [tensor]) as scope:
        if optimize and tensor.shape.is_fully_defined():
            return _filled(tensor.shape, dtype, value, scope, default_name)
        if dtype is not tensor.dtype:
            result = _filled(shape_ops.shape(tensor), dtype, value, scope, default_name)
            result.set_shape(tensor.shape)
            return result
        return apply_op(op_type, [tensor], name=scope)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros shaped as ``tensor`` (of ``dtype`` if given); a constant when the static shape is known."""
    return _filled_like(tensor, dtype, name, optimize, "ZerosLike", _zero, "zeros_like")


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones shaped as ``tensor`` (of ``dtype`` if given); a constant when the static shape is known."""
    return _filled_like(tensor, dtype, name, optimize, "OnesLike", _one, "ones_like")
