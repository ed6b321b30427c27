"""A feed value (Python number, nested list, numpy array) as an array of the fed tensor's dtype.

As TF1's Session.run: a numpy array of another numeric dtype is cast as numpy's ``astype`` casts (an int64 array
fed to int32 wraps, as in TF1), booleans feed numbers and numbers feed booleans. Unlike TF1, whose numpy conversion
wraps a Python list ([1, 2**33] fed to int32 gave [1, 0]), every Python number must fit the dtype: one that does not
is refused with the placeholder's name and the dtype's range, as TF1 refuses a bare Python scalar. A Python float
that would become inf (70000.0 into float16) is refused the same way, and a ragged list says where it is ragged.
"""

import functools

import ml_dtypes
import numpy as np

from tensorweave import dtypes, errors
from tensorweave.framework.tensor_conversion import ragged_shapes

# numpy kind of the fed tensor's dtype -> numpy kinds of values it accepts (floats never feed integers or bools:
# TF1 truncates 1.5 to 1 there; cast explicitly instead)
_ACCEPTS = {"i": "biu", "u": "biu", "b": "biu", "f": "biuf", "c": "biufc"}


def convert_feed(tensor, value):
    """``value`` as an array fit to feed ``tensor`` (dtype converted, shape checked)."""
    dtype = tensor.dtype
    if type(value) is np.ndarray and value.dtype == dtype._np:
        arr = value
    elif dtype is dtypes.resource or dtype is dtypes.variant:
        return value
    elif dtype is dtypes.string:
        arr = _as_array(tensor, value, object)
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = _cast(tensor, np.asarray(value))
    else:
        arr = _from_python(tensor, value)
    shape = tensor.shape
    if not shape.admits(arr.shape):
        raise errors.InvalidArgumentError(None, tensor.op, (
            f"cannot feed value of shape {arr.shape} for tensor {tensor.name!r}, which has shape "
            f"{_shape_text(shape)}"))
    return arr


def _shape_text(shape):
    return str(shape.as_list()).replace("None", "?") if shape.ndims is not None else "<unknown>"


def _as_array(tensor, value, np_type=None):
    try:
        arr = np.asarray(value, dtype=np_type)
    except ValueError:
        arr = None
    if (arr is None or arr.dtype.kind == "O") and isinstance(value, (list, tuple)):
        ragged = ragged_shapes(value)  # numpy refuses a ragged list, or makes objects of its rows
        if ragged is not None:
            raise ValueError(f"cannot feed a ragged list to tensor {tensor.name!r} (shape "
                             f"{_shape_text(tensor.shape)}, dtype {tensor.dtype.name}): {ragged}. Every row of a "
                             f"fed value needs the same length; pad the rows, or feed a numpy array")
    return np.asarray(value, dtype=np_type) if arr is None else arr


def _cast(tensor, arr):
    """A numpy value cast to the tensor's dtype as numpy casts (wrapping, overflowing to inf), kinds checked."""
    target = tensor.dtype._np
    if arr.dtype == target:
        return arr
    if arr.dtype.kind not in _ACCEPTS.get("f" if tensor.dtype.is_floating else target.kind, ""):  # bfloat16's is V
        raise errors.InvalidArgumentError(None, tensor.op, (
            f"cannot feed a value of dtype {arr.dtype.name} to tensor {tensor.name!r} of dtype {tensor.dtype.name}; "
            f"convert it first (e.g. np.asarray(value, np.{tensor.dtype.name}))"))
    if arr.dtype.kind in "fc" and target.itemsize < arr.dtype.itemsize:
        with np.errstate(over="ignore"):  # inf where it overflows, as numpy (and TF1) give, without the warning
            return arr.astype(target)
    return arr.astype(target)


def _from_python(tensor, value):
    """Python numbers and lists of them: converted exactly, or refused where a number does not fit."""
    dtype = tensor.dtype
    if type(value) in (int, float) and (dtype.is_floating or dtype._np.kind in "iu"):  # the common scalar feed: checked in Python
        if dtype.is_integer and type(value) is int:
            lo, hi = _integer_range(dtype)
            if not lo <= value <= hi:
                _refuse(tensor, value, ())
            return np.asarray(value, dtype._np)
        if dtype.is_floating:
            edge = _overflow_edge(dtype)
            if edge is not None and edge <= abs(value) < float("inf"):
                _refuse(tensor, value, ())
            return np.asarray(value, dtype._np)
    arr = _as_array(tensor, value)
    kind = arr.dtype.kind
    if kind in "fO" and _all_python_ints(value):  # ints beyond int64, or mixing int64 and uint64
        outside = _first_outside_integers(value, dtype) if dtype.is_integer else None
        if outside is not None:
            _refuse(tensor, *outside)
        arr = np.array(value, dtype=dtype._np if dtype.is_integer else np.float64)
        kind = arr.dtype.kind
    if arr.size and dtype.is_integer and kind in "iu":
        lo, hi = _integer_range(dtype)
        if arr.min() < lo or arr.max() > hi:
            _refuse(tensor, *_first(arr, (arr < lo) | (arr > hi)))
    elif arr.size and dtype.is_floating and kind in "iuf":
        edge = _overflow_edge(dtype)
        if edge is not None and (arr.max() >= edge or arr.min() <= -edge):  # some value may round to inf
            with np.errstate(over="ignore"):
                out = arr.astype(dtype._np)
            overflowed = np.isinf(out) & np.isfinite(arr)
            if overflowed.any():
                _refuse(tensor, *_first(arr, overflowed))
            return out
    return _cast(tensor, arr)


@functools.lru_cache(maxsize=None)
def _integer_range(dtype):
    return dtype.min, dtype.max


@functools.lru_cache(maxsize=None)
def _overflow_edge(dtype):
    """The smallest magnitude that rounds to inf in ``dtype`` (max + half its last step), None for float64."""
    if dtype is dtypes.float64:
        return None
    info = ml_dtypes.finfo(dtype._np)  # numpy's finfo, and bfloat16's
    return float(info.max) + 2.0 ** (info.maxexp - 2 - info.nmant)


def _first(arr, mask):
    where = tuple(int(i) for i in np.argwhere(mask)[0])
    return arr[where].item(), where


def _all_python_ints(value):
    if isinstance(value, (list, tuple)):
        return all(_all_python_ints(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool)


def _first_outside_integers(value, dtype, where=()):
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _first_outside_integers(v, dtype, where + (i,))
            if found is not None:
                return found
        return None
    return (value, where) if not dtype.min <= value <= dtype.max else None


def _refuse(tensor, number, where):
    dtype = tensor.dtype
    at = f" (at index {list(where)})" if where else ""
    if dtype.is_integer:
        wider = "" if dtype.size == 8 else "use a wider dtype for the tensor (e.g. tf.int64) or "
        raise TypeError(f"cannot feed {number}{at} to tensor {tensor.name!r} of dtype {dtype.name}, whose values "
                        f"range from {dtype.min} to {dtype.max}: it would wrap around. To feed it, {wider}bring "
                        f"the value into range")
    raise TypeError(f"cannot feed {number!r}{at} to tensor {tensor.name!r} of dtype {dtype.name}, whose largest "
                    f"finite value is {dtype.max!r}: it would become inf. To feed it, use a "
                    f"wider dtype for the tensor (e.g. tf.float32) or scale the value")


def flat_feed_items(feed_dict):
    """``feed_dict``'s (key, value) pairs, a key that is a nested tuple of tensors (an LSTM's state) paired leaf by
    leaf with a value of the same structure, as TF1's Session.run allows."""
    items = []

    def pair(key, value, path):
        if not isinstance(key, tuple):
            items.append((key, value))
            return
        if not isinstance(value, (tuple, list)) or len(value) != len(key):
            size = len(value) if isinstance(value, (tuple, list)) else "no"
            raise ValueError(f"feed_dict key{path} is a tuple of {len(key)} tensors but its value has {size} "
                             f"elements: feed a nested tuple key with a value of the same structure")
        for i, (k, v) in enumerate(zip(key, value)):
            pair(k, v, f"{path}[{i}]")
    for key, value in feed_dict.items():
        pair(key, value, "")
    return items
