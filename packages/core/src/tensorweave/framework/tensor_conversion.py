"""Turning Python values, numpy arrays and tensor-like objects (Variables, IndexedSlices) into Tensors."""

import numbers

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.tensor import Tensor

_conversion_functions = []  # (type or tuple, fn(value, dtype, name, as_ref) -> Tensor, priority)


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """``conversion_func(value, dtype=None, name=None, as_ref=False)`` turns instances of ``base_type``
    into Tensors wherever a tensor is expected (TF1's hook of the same name)."""
    _conversion_functions.append((base_type, conversion_func, priority))
    _conversion_functions.sort(key=lambda e: e[2])


def numpy_value(value, dtype=None):
    """A numpy array for a Python/numpy value, in ``dtype`` if given, refusing lossy kind changes."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, np.ndarray) or np.isscalar(value) and not isinstance(value, (str, bytes)):
        arr = np.asarray(value)
    else:
        arr = _from_python(value, dtype)
    if arr.dtype.kind in "US":
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
        if arr.dtype.kind != "O":
            raise TypeError(f"expected a string value, got {value!r}")
        return arr
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
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in _flatten(value)):
        raise TypeError("a list containing Tensors must be converted with tf.stack, not as a constant")
    np_type = None if dtype is None or dtype in (dtypes.string,) else dtype.as_numpy_dtype
    try:
        return np.asarray(value, dtype=np_type) if np_type is not None and not _has_float(value, dtype) else np.asarray(value)
    except (ValueError, TypeError) as e:
        raise TypeError(f"cannot convert {_short(value)} to a tensor: {e}") from None


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
    if dtype is None and preferred_dtype is not None:
        try:
            return _constant(numpy_value(value, preferred_dtype), name)
        except TypeError:
            pass
    return _constant(numpy_value(value, dtype), name)


def _constant(arr, name):
    from tensorweave.ops.array_ops import constant_from_numpy
    return constant_from_numpy(arr, name=name or "Const")


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
