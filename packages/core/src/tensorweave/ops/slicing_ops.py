"""Slicing: Slice, StridedSlice (with TF's five masks) and its gradient op, and Python indexing of tensors.

``t[1:, ..., tf.newaxis, 0]`` becomes one StridedSlice whose begin/end/strides are constants when the key
holds Python ints, so static shapes stay exact; scalar int tensors in the key are packed into the vectors.
The spec is read by ``slice_spec.dense_key`` both here (shapes) and in the kernels (values).
"""

import builtins
import numbers

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor, holds_tensor, is_tensor_like
from tensorweave.framework.tensor_util import (
    constant_value, constant_value_as_shape,
)
from tensorweave.ops import fill_ops, shape_ops, state_ops, unary_math_ops
from tensorweave.ops.control_flow_context import replace_value
from tensorweave.ops.slice_spec import MASKS, UNKNOWN, dense_key, sliced_dims

DEFS = OpDefList()

__all__ = ["slice", "strided_slice", "slice_helper", "newaxis"]

newaxis = None

_INDEX = "Index: {int32, int64}"
_MASK_ATTRS = [f"{m}: int = 0" for m in MASKS]

SLICE = DEFS.define("Slice", inputs=["input: T", "begin: Index", "size: Index"], outputs=["output: T"],
                    attrs=["T: any", _INDEX],
                    doc="input[begin[i] : begin[i] + size[i]] in every dimension; size -1 takes the rest.")
STRIDED_SLICE = DEFS.define(
    "StridedSlice", inputs=["input: T", "begin: Index", "end: Index", "strides: Index"], outputs=["output: T"],
    attrs=["T: any", _INDEX] + _MASK_ATTRS,
    doc="Python/numpy basic indexing: ranges with strides, single indices, ellipsis and new axes via masks.")
STRIDED_SLICE_ASSIGN = DEFS.define(
    "ResourceStridedSliceAssign", inputs=["ref: resource", "begin: Index", "end: Index", "strides: Index", "value: T"],
    attrs=["T: any", _INDEX] + _MASK_ATTRS, is_stateful=True, grad=NOT_DIFFERENTIABLE,
    doc="Writes value into the slice of the variable that StridedSlice with the same spec reads.")
STRIDED_SLICE_GRAD = DEFS.define(
    "StridedSliceGrad", inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
    outputs=["output: T"], attrs=["T: any", _INDEX] + _MASK_ATTRS,
    doc="Zeros of ``shape`` with dy placed where StridedSlice with the same spec read from.")


def _masks(op):
    return {m: op.get_attr(m) for m in MASKS}


def _vector_entries(t):
    """The entries of a 1-D int tensor as ints, UNKNOWN where not known while building; None if its length
    is unknown too."""
    value = constant_value(t)
    if value is not None:
        return [int(v) for v in np.asarray(value).reshape(-1)]
    if t.op.type == "Pack":
        values = [constant_value(x) for x in t.op.inputs]
        return [UNKNOWN if v is None else int(v) for v in values]
    if t.shape.ndims == 1 and t.shape[0].value is not None:
        return [UNKNOWN] * t.shape[0].value
    return None


# ---- Slice ----------------------------------------------------------------------------------------------------------
@SLICE.set_shape_fn
def _slice_shape(op):
    x, begin, size = op.inputs
    begin.shape.with_rank(1)
    size.shape.with_rank(1)
    begins, sizes = _vector_entries(begin), _vector_entries(size)
    n = next((len(v) for v in (begins, sizes) if v is not None), x.shape.ndims)
    for what, values in (("begin", begins), ("size", sizes)):
        if values is not None and len(values) != n:
            raise ValueError(f"slice: {what} has {len(values)} entries, expected {n} (one per dimension)")
    if x.shape.ndims is not None and n is not None and n != x.shape.ndims:
        raise ValueError(f"slice: begin and size need one entry per dimension of the input ({x.shape.ndims}), "
                         f"got {n}")
    if n is None:
        return tensor_shape.TensorShape(None)
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * n
    begins, sizes = begins or [UNKNOWN] * n, sizes or [UNKNOWN] * n
    out = []
    for i, (b, s, d) in enumerate(zip(begins, sizes, dims)):
        if (b is not UNKNOWN and b < 0) or (s is not UNKNOWN and s < -1) or (
                d is not None and UNKNOWN not in (b, s) and b + max(s, 0) > d) or (
                d is not None and b is not UNKNOWN and b > d):
            raise ValueError(f"slice: begin {_show(begins)} and size {_show(sizes)} do not fit the input's shape "
                             f"{x.shape} in dimension {i}; need 0 <= begin <= dim and begin + size <= dim "
                             f"(size -1 means to the end)")
        if s is not UNKNOWN and s >= 0:
            out.append(s)
        elif s == -1 and d is not None and b is not UNKNOWN:
            out.append(d - b)
        else:
            out.append(None)
    return tensor_shape.TensorShape(out)


def _show(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


@SLICE.set_gradient
def _slice_grad(op, grad):
    """The gradient is zero outside the slice: StridedSliceGrad with end = begin + the output's shape."""
    x, begin, _ = op.inputs
    index_dtype = begin.dtype
    end = begin + _shape_of(op.outputs[0], index_dtype)
    strides = _ones_like_vector(begin)
    return [apply_op("StridedSliceGrad", [_shape_of(x, index_dtype), begin, end, strides, convert_to_tensor(grad)],
                     name="SliceGrad"), None, None]


def _shape_of(t, dtype):
    """t's shape as a 1-D tensor of ``dtype``: a constant when known while building."""
    if t.shape.is_fully_defined():
        return convert_to_tensor(np.asarray(t.shape.as_list(), dtype.as_numpy_dtype))
    return shape_ops.shape(t, out_type=dtype)


def _ones_like_vector(v):
    n = v.shape[0].value if v.shape.ndims == 1 else None
    if n is not None:
        return convert_to_tensor(np.ones(n, v.dtype.as_numpy_dtype))
    return fill_ops.ones_like(v)


@SLICE.set_constant_fn
def _slice_value(op, index):
    x, begin, size = (constant_value(t) for t in op.inputs)
    if x is None or begin is None or size is None:
        return None
    return x[tuple(builtins.slice(b, x.shape[i] if s == -1 else b + s) for i, (b, s) in enumerate(zip(begin, size)))]


def slice(input_, begin, size, name=None):  # noqa: A001 - TF's public name
    """input_[begin[i]:begin[i] + size[i]] in every dimension; a size of -1 takes everything from begin on.
    begin and size may be lists mixing ints and scalar int tensors."""
    begin, size = _index_vectors([begin, size])
    return apply_op("Slice", [input_, begin, size], name=name or "Slice")


# ---- StridedSlice and StridedSliceGrad -----------------------------------------------------------------------------
def _strided_shape(op, input_shape, begin, end, strides):
    for t, what in ((begin, "begin"), (end, "end"), (strides, "strides")):
        if t.shape.ndims not in (1, None):
            raise ValueError(f"{what} must be a vector, got shape {t.shape}")
    entries = [_vector_entries(t) for t in (begin, end, strides)]
    n = next((len(v) for v in entries if v is not None), None)
    if n is None or input_shape.ndims is None:
        return tensor_shape.TensorShape(None)
    entries = [v if v is not None else [UNKNOWN] * n for v in entries]
    key = dense_key(input_shape.ndims, *entries, **_masks(op))
    return tensor_shape.TensorShape(sliced_dims(key, input_shape.as_list()))


@STRIDED_SLICE.set_shape_fn
def _strided_slice_shape(op):
    x, begin, end, strides = op.inputs
    return _strided_shape(op, x.shape, begin, end, strides)


@STRIDED_SLICE_GRAD.set_shape_fn
def _strided_slice_grad_shape(op):
    shape, begin, end, strides, dy = op.inputs
    shape.shape.with_rank(1)
    out = constant_value_as_shape(shape)
    expected = _strided_shape(op, out, begin, end, strides)
    if not expected.is_compatible_with(dy.shape):
        raise ValueError(f"dy has shape {dy.shape}, but the slice of a tensor of shape {out} has shape {expected}")
    return out


@STRIDED_SLICE_ASSIGN.set_shape_fn
def _strided_slice_assign_shape(op):
    ref, begin, end, strides, value = op.inputs
    expected = _strided_shape(op, state_ops.handle_shape(ref), begin, end, strides)
    if not expected.is_compatible_with(value.shape):
        raise ValueError(f"the value has shape {value.shape}, but the slice it is assigned to has shape {expected}")
    return []


@STRIDED_SLICE.set_gradient
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    dx = apply_op("StridedSliceGrad", [_shape_of(x, begin.dtype), begin, end, strides, convert_to_tensor(grad)],
                  _masks(op), name="StridedSliceGrad")
    return [dx, None, None, None]


@STRIDED_SLICE_GRAD.set_gradient
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    return [None, None, None, None, apply_op("StridedSlice", [convert_to_tensor(grad), begin, end, strides],
                                             _masks(op), name="StridedSlice")]


@STRIDED_SLICE.set_constant_fn
def _strided_slice_value(op, index):
    x, begin, end, strides = (constant_value(t) for t in op.inputs)
    if x is None or begin is None or end is None or strides is None:
        return None
    key = dense_key(x.ndim, begin.tolist(), end.tolist(), strides.tolist(), **_masks(op))
    sliced_dims(key, list(x.shape))
    return x[key + (Ellipsis,)]


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """input_[begin:end:strides] per dimension, with TF's masks (bit i concerns entry i of the spec):
    begin_mask/end_mask ignore begin[i]/end[i] (slice from the start/to the end), ellipsis_mask marks the
    entry that stands for all remaining dimensions, new_axis_mask inserts a dimension of 1, shrink_axis_mask
    takes the single index begin[i] and drops the dimension. ``var``: the variable sliced, when there is one
    (the result then gets ``assign``, as in TF)."""
    if strides is None:
        n = len(begin) if isinstance(begin, (list, tuple)) else None
        strides = [1] * n if n is not None else _ones_like_vector(convert_to_tensor(begin))
    begin, end, strides = _index_vectors([begin, end, strides])
    result = apply_op("StridedSlice", [input_, begin, end, strides],
                      {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
                       "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask},
                      name=name or "StridedSlice")
    if var is not None:
        result = _VariableSlice.replace(result, var)
    return result


class _VariableSlice(Tensor):
    """A slice of a variable's value that can be written: ``v[1:3].assign(value)``, as in TF1."""

    __slots__ = ("_variable",)

    @classmethod
    def replace(cls, tensor, variable):
        """``tensor`` (the fresh output of a StridedSlice, with no consumers yet) as a _VariableSlice."""
        sliced = cls(tensor.op, 0, tensor.dtype)
        sliced._shape = tensor.shape
        sliced._variable = variable
        tensor.op._outputs[0] = sliced
        replace_value(tensor, sliced)
        return sliced

    def assign(self, value, name=None):
        """Writes ``value`` (of exactly this slice's shape) into the variable; as a tensor, the result reads the
        variable after the write."""
        var = self._variable
        value = convert_to_tensor(value, dtype=var.dtype, name="value")
        if not self.shape.is_compatible_with(value.shape):
            raise ValueError(f"cannot assign a value of shape {value.shape} to the slice {self.name} of variable "
                             f"{var.name}, which has shape {self.shape} (no broadcasting)")
        _, begin, end, strides = self.op.inputs
        parent = getattr(var, "_parent_op", None)
        with var.graph.control_dependencies([parent] if parent is not None else []), \
                var.graph.colocate_with(var.handle, ignore_existing=True):
            op = apply_op("ResourceStridedSliceAssign", [var.handle, begin, end, strides, value], _masks(self.op),
                          name=name or "strided_slice_assign")
        return var._assigned(op)


def _index_vectors(values, names=None):
    """begin/end/strides (or begin/size) as 1-D tensors of one index dtype: int64 if any part is int64 or needs
    it, else int32. A list may mix ints and scalar int tensors; it is packed into one vector (Pack). ``names``:
    the names of the tensors made from lists."""
    parts = [list(v) if isinstance(v, (list, tuple)) else v for v in values]
    pieces = [x for v in parts for x in (v if isinstance(v, list) else [v])]
    wide = any(getattr(x, "dtype", None) in (dtypes.int64, np.int64) for x in pieces) or any(
        isinstance(x, numbers.Integral) and not -2 ** 31 <= x < 2 ** 31 for x in pieces)
    dtype = dtypes.int64 if wide else dtypes.int32
    out = []
    for v, name in zip(parts, names or [None] * len(parts)):
        if isinstance(v, list) and holds_tensor(v):
            out.append(convert_to_tensor(v, dtype=dtype, name=name))  # packed, the other index dtype cast
        elif isinstance(v, list) or not is_tensor_like(v):
            out.append(convert_to_tensor(np.asarray(v, dtype.as_numpy_dtype).reshape(-1), name=name))
        else:
            out.append(_as_index(v, dtype))
    return out


def _as_index(value, dtype):
    """``value`` as a tensor of the index dtype (cast from the other index dtype)."""
    if not is_tensor_like(value):
        return convert_to_tensor(value, dtype=dtype)
    value = convert_to_tensor(value)
    if value.dtype == dtype:
        return value
    return unary_math_ops.cast(value, dtype)


# ---- Python indexing ---------------------------------------------------------------------------------------------
_KEY_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
              "tensors are valid indices")


def _check_index(value, what):
    """A Python int, or a scalar int tensor; TypeError in TF's words (and with the alternatives) otherwise."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{_KEY_ERROR}, got {value!r} as {what}. To select entries with a bool mask use "
                        f"tf.boolean_mask(tensor, mask)")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, tensor_shape.Dimension) and value.value is not None:
        return value.value
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value)
    if is_tensor_like(value):
        tensor = convert_to_tensor(value)
        if tensor.dtype in (dtypes.int32, dtypes.int64) and tensor.shape.ndims in (0, None):
            return tensor
        shown, dtype = f"a {tensor.dtype.name} tensor of shape {tensor.shape}", tensor.dtype
    elif isinstance(value, (list, tuple, np.ndarray)):
        array = np.asarray(value)
        shown, dtype = _short(value), dtypes.bool if array.dtype == np.bool_ else None
        if array.dtype.kind in "iu":
            dtype = dtypes.int32
    else:
        shown, dtype = f"{_short(value)} ({type(value).__name__})", None
    if dtype is not None and dtype.is_bool:
        hint = "to select entries with a bool mask use tf.boolean_mask(tensor, mask)"
    elif dtype is not None and dtype.is_integer:
        hint = "to pick several entries use tf.gather(tensor, indices, axis=...) or tf.gather_nd(tensor, indices)"
    else:
        hint = "cast a float index to an integer first (tf.cast(index, tf.int32))"
    raise TypeError(f"{_KEY_ERROR}, got {shown} as {what}; {hint}")


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def slice_helper(tensor, key, var=None):
    """``tensor[key]`` with TF1's rules: ints (negative count from the end), slices with any step, ``...``,
    ``None``/``tf.newaxis`` and scalar int tensors, as one StridedSlice."""
    if not isinstance(key, tuple):
        key = (key,)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(MASKS, 0)
    for i, item in enumerate(key):
        bit = 1 << i
        if isinstance(item, builtins.slice):
            start = None if item.start is None else _check_index(item.start, f"the start of slice {i}")
            stop = None if item.stop is None else _check_index(item.stop, f"the stop of slice {i}")
            step = 1 if item.step is None else _check_index(item.step, f"the step of slice {i}")
            if isinstance(step, int) and step == 0:
                raise ValueError(f"slice {i} of the index has step 0; a slice needs a non-zero step")
            masks["begin_mask"] |= bit if start is None else 0
            masks["end_mask"] |= bit if stop is None else 0
            begin.append(0 if start is None else start)
            end.append(0 if stop is None else stop)
            strides.append(step)
        elif item is Ellipsis:
            if masks["ellipsis_mask"]:
                raise ValueError("an index can have only one ellipsis (...)")
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif item is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        else:
            index = _check_index(item, f"index {i}")
            masks["shrink_axis_mask"] |= bit
            begin.append(index)
            end.append(index + 1)
            strides.append(1)
    tensor = convert_to_tensor(tensor)
    with graph_mod.name_scope(None, "strided_slice", [tensor]) as name:  # TF1's names: strided_slice/stack_1
        begin, end, strides = _index_vectors([begin, end, strides], names=("stack", "stack_1", "stack_2"))
        return strided_slice(tensor, begin, end, strides, var=var, name=name, **masks)
