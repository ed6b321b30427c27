"""Turning Python values, numpy arrays and tensor-like objects (Variables, IndexedSlices) into Tensors.

Every op input goes through ``convert_to_tensor``; a (nested) list or tuple holding tensors becomes one Pack op
there (TF1's auto-packing), so ``tf.tile(x, [batch, 1])`` and ``x + [n, 3]`` work wherever a tensor is expected.
"""

import numbers

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import apply_op, graph as graph_mod
from tensorweave.framework.tensor import Tensor

_conversion_functions = []  # (type or tuple, fn(value, dtype, name, as_ref) -> Tensor, priority)


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """``conversion_func(value, dtype=None, name=None, as_ref=False)`` turns instances of ``base_type``
    into Tensors wherever a tensor is expected (TF1's hook of the same name)."""
    _conversion_functions.append((base_type, conversion_func, priority))
    _conversion_functions.sort(key=lambda e: e[2])


_fetch_conversions = []  # (type, expand(obj) -> list of fetchable elements, combine(values) -> result, feed)


def register_fetch_conversion(cls, expand, combine, feed=None):
    """Lets ``Session.run`` fetch ``cls`` objects (IndexedSlices, SparseTensor, ...) element-wise: ``expand(obj)``
    lists the graph elements to fetch, ``combine(values)`` builds the fetched result from their values. With
    ``feed(obj, value) -> [(tensor, part of value), ...]`` such objects are feed_dict keys too (TF1's
    ``register_session_run_conversion_functions``)."""
    _fetch_conversions.append((cls, expand, combine, feed))


def fetch_conversion(obj):
    """(expand, combine) registered for ``obj``'s type, or None."""
    for cls, expand, combine, _ in _fetch_conversions:
        if isinstance(obj, cls):
            return expand, combine
    return None


def feed_conversion(obj):
    """``feed(obj, value)`` registered for ``obj``'s type, or None."""
    for cls, _, _, feed in _fetch_conversions:
        if feed is not None and isinstance(obj, cls):
            return feed
    return None


def numpy_value(value, dtype=None):
    """A numpy array for a Python/numpy value, in ``dtype`` if given, refusing lossy kind changes."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if value is None:
        raise ValueError("None values not supported.")
    if isinstance(value, np.ndarray) or np.isscalar(value) and not isinstance(value, (str, bytes)):
        arr = np.asarray(value)
    else:
        arr = _from_python(value, dtype)
    if arr.dtype.kind == "O" and not isinstance(value, np.ndarray) and any(v is None for v in arr.flat):
        raise TypeError(f"Failed to convert elements of {_short(value)} to Tensor: None is not a value (TF1 "
                        f"refuses it as well). Give a number, or build the tensor with a placeholder.")
    if arr.dtype.kind == "O" and not isinstance(value, np.ndarray) and not all(
            isinstance(v, (str, bytes)) for v in arr.flat):
        raise TypeError(f"Failed to convert elements of {_short(value)} to Tensor. Consider casting elements to a "
                        f"supported type.")
    if arr.dtype.kind == "S" and not isinstance(value, np.ndarray):
        arr = np.asarray(value, dtype=object)  # numpy's fixed-width bytes would drop trailing NULs
    elif arr.dtype.kind == "U":
        arr = np.vectorize(str.encode, otypes=[object])(arr) if arr.size else arr.astype(object)  # str as UTF-8
    elif arr.dtype.kind == "S":
        arr = arr.astype(object)
    if dtype is None:
        if arr.dtype == np.float64 and not isinstance(value, np.ndarray) and not isinstance(value, np.generic):
            arr = arr.astype(np.float32)  # Python floats default to float32, as in TF
        elif arr.dtype == np.int64 and not isinstance(value, np.ndarray) and not isinstance(value, np.generic):
            arr = arr.astype(np.int64 if _exceeds_int32(arr) else np.int32)
        dtypes.as_dtype(arr.dtype)  # refuses unsupported types with a clear message
        return arr
    target = np.dtype(dtype.as_numpy_dtype)
    if arr.dtype == target:
        return arr
    if dtype is dtypes.string:
        if arr.dtype.kind != "O" and not (arr.size == 0 and not isinstance(value, np.ndarray)):
            raise TypeError(f"expected a string value, got {value!r}")
        return arr.astype(object)
    if arr.dtype.kind == "O":
        raise TypeError(f"cannot convert {_short(value)} to {dtype.name}")
    if dtype.is_integer and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.array_equal(arr, np.trunc(arr)):
            raise TypeError(f"expected {dtype.name}, got {_short(value)} of type {arr.dtype.name}: "
                            f"non-integral values cannot become {dtype.name}; cast explicitly with tf.cast")
    if dtype.is_bool and arr.dtype.kind != "b":
        raise TypeError(f"expected bool, got {_short(value)} of type {arr.dtype.name}")
    if arr.dtype.kind == "b" and dtype.is_numeric:
        raise TypeError(f"expected {dtype.name}, got boolean {_short(value)}; use tf.cast to convert booleans")
    if dtype.is_integer and arr.dtype.kind in "iu" and arr.size:
        info = np.iinfo(target)
        if arr.min() < info.min or arr.max() > info.max:
            raise TypeError(f"value {_short(value)} does not fit in {dtype.name}")
    return arr.astype(target)


def _exceeds_int32(arr):
    return arr.size > 0 and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min)


def _from_python(value, dtype):
    if isinstance(value, (list, tuple)) and holds_tensor(value):
        raise TypeError(f"{_short(value)} holds Tensors, so it cannot be a constant's value; "
                        f"tf.convert_to_tensor or tf.stack packs it into one tensor")
    np_type = None if dtype is None or dtype in (dtypes.string,) else dtype.as_numpy_dtype
    try:
        return np.asarray(value, dtype=np_type) if np_type is not None and not _has_float(value, dtype) else np.asarray(value)
    except (ValueError, TypeError) as e:
        ragged = ragged_shapes(value)
        if ragged is not None:
            raise ValueError(f"cannot convert {_short(value)} to a tensor: it is not rectangular ({ragged})") from None
        raise TypeError(f"cannot convert {_short(value)} to a tensor: {e}") from None


def ragged_shapes(value):
    """Where a nested list stops being rectangular, as text ("[0] has shape (2,) but [1] has shape (1,)"),
    or None if it is rectangular."""
    def shape(v, path):
        if not isinstance(v, (list, tuple)):
            return np.shape(v)
        shapes = [shape(x, f"{path}[{i}]") for i, x in enumerate(v)]
        for i, s in enumerate(shapes[1:], 1):
            if s != shapes[0]:
                raise _Ragged(f"{path}[0] has shape {shapes[0]} but {path}[{i}] has shape {s}")
        return (len(v),) + (shapes[0] if shapes else ())

    try:
        shape(value, "")
    except _Ragged as e:
        return str(e)
    return None


class _Ragged(Exception):
    pass


def _has_float(value, dtype):
    return dtype.is_integer and any(isinstance(v, float) for v in _flatten(value))


def _flatten(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flatten(v)
    else:
        yield value


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_tensor_like(value):
    return isinstance(value, Tensor) or any(isinstance(value, t) for t, _, _ in _conversion_functions)


_NEVER_TENSORS = (int, float, complex, str, bytes, np.generic, np.ndarray)


def holds_tensor(values):
    """Whether a (nested) list or tuple holds a Tensor or tensor-like object (so converting it packs)."""
    for v in values:
        if isinstance(v, (list, tuple)):
            if holds_tensor(v):
                return True
        elif not isinstance(v, _NEVER_TENSORS) and is_tensor_like(v):
            return True
    return False


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False):
    """TF1's ``tf.convert_to_tensor``: Tensors pass through (dtype checked), others become constants."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtype:
            raise ValueError(f"tensor conversion requested dtype {dtype.name} for tensor {value.name} "
                             f"of dtype {value.dtype.name}; use tf.cast to change it")
        return value
    for base_type, fn, _ in _conversion_functions:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is not NotImplemented:
                return result
    if isinstance(value, (list, tuple)) and holds_tensor(value):
        return pack_nested(value, dtype, name)
    if dtype is None and preferred_dtype is not None:
        try:
            return _constant(numpy_value(value, preferred_dtype), name)
        except TypeError:
            pass
    return _constant(numpy_value(value, dtype), name)


def pack_nested(values, dtype=None, name=None):
    """TF1's auto-packing: a (nested) list or tuple holding tensors as one tensor (a Pack op per list).

    The dtype is ``dtype``, else the first tensor's (depth first); with ``dtype`` given, tensors of another dtype
    are cast to it, as TF1 does; without it they are refused. Python and numpy entries become constants of it.
    """
    found = packed_dtype(values)
    values = _tensors_inside(values)
    if dtype is None:
        dtype = found
    return _pack(values, dtype, name or "packed", graph_mod.get_default_graph(), cast=found is not dtype)


class _Packed(list):
    """A nested list that becomes a Pack of its own (it holds tensors); other lists become constants."""


def _tensors_inside(values):
    return _Packed(_tensors_inside(v) if isinstance(v, (list, tuple)) and holds_tensor(v)
                   else convert_to_tensor(v) if not isinstance(v, _NEVER_TENSORS) and is_tensor_like(v) else v
                   for v in values)


def packed_dtype(values):
    """The dtype a list holding tensors packs to without a requested dtype: its first tensor's, depth first."""
    for v in values:
        if isinstance(v, (list, tuple)):
            found = packed_dtype(v)
            if found is not None:
                return found
        elif not isinstance(v, _NEVER_TENSORS) and is_tensor_like(v):
            return dtypes.as_dtype(v.dtype).base_dtype
    return None


def _pack(values, dtype, name, graph, cast):
    with graph.name_scope(name) as scope:
        elems = []
        for i, v in enumerate(values):
            if isinstance(v, _Packed):
                v = _pack(v, dtype, str(i), graph, cast)
            elif not isinstance(v, Tensor):
                v = convert_to_tensor(v, dtype=dtype, name=str(i))
            elif v.dtype.base_dtype is not dtype:
                if not cast:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype {v.dtype.name} to "
                                    f"{dtype.name} (Tensor is: {v!r}); cast it with tf.cast, or pass dtype= "
                                    f"to convert the whole list")
                v = apply_op.apply_op("Cast", [v], {"DstT": dtype}, name="Cast")
            elems.append(v)
        return apply_op.apply_op("Pack", [elems], {"axis": 0}, name=scope)


def _constant(arr, name):
    return apply_op.apply_op("Const", [], {"value": arr, "dtype": dtypes.as_dtype(arr.dtype)}, name=name or "Const")


def convert_n_to_tensor(values, dtype=None, name=None):
    return [convert_to_tensor(v, dtype=dtype, name=f"{name}_{i}" if name else None) for i, v in enumerate(values)]


def python_scalar_dtype(value):
    """The dtype TF gives a bare Python number (a numpy scalar keeps its own), or None if it is not one."""
    if isinstance(value, np.generic):
        return dtypes.as_dtype(value.dtype) if value.dtype.kind in "biuf" else None
    if isinstance(value, bool):
        return dtypes.bool
    if isinstance(value, numbers.Integral):
        return dtypes.int32
    if isinstance(value, numbers.Real):
        return dtypes.float32
    return None
