"""TF1's feature specs for parsing Examples (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature) and how a
dict of them becomes what the parse ops take: sorted keys, types, shapes and dense defaults."""

import collections
import re

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.ops.array_ops import constant
from tensorweave.ops.shape_ops import reshape

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature"]

PARSABLE = (dtypes.float32, dtypes.int64, dtypes.string)  # what an Example's lists hold


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values, parsed into a SparseTensor."""

    __slots__ = ()


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature with exactly ``prod(shape)`` values, parsed into a dense tensor of ``shape``; an Example
    without it gets ``default_value`` (reshaped to ``shape``), or fails to parse if there is none."""

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature with any number of values of ``shape`` each, parsed into a dense tensor [rows] + shape; in a
    batch shorter rows are padded with ``default_value`` (a scalar). ``allow_missing``: absent means no rows."""

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class RawParams:
    """The parse ops' view of a features dict: sparse (VarLen) and dense keys in sorted order, their types,
    the dense shapes (a FixedLenSequenceFeature's with an unknown first dimension) and defaults."""

    def __init__(self):
        self.sparse_keys, self.sparse_types = [], []
        self.dense_keys, self.dense_types, self.dense_shapes, self.dense_defaults = [], [], [], []

    @property
    def keys(self):
        return self.sparse_keys + self.dense_keys


def _check_dtype(key, dtype, parameter):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in PARSABLE:
        raise TypeError(f"Value passed to parameter '{parameter}' has DataType {dtype.name} not in list of allowed "
                        f"values: float32, int64, string (feature {key!r}: an Example holds only float, int64 and "
                        f"bytes lists; parse it as one of those and cast the result)")
    return dtype


def _known_shape(key, feature):
    if feature.shape is None:
        raise ValueError(f"Missing shape for feature {key}. Received feature={feature!r}.")
    shape = tensor_shape.as_shape(feature.shape)
    if shape.ndims and shape.dims[0].value is None and isinstance(feature, FixedLenFeature):
        raise ValueError(f"First dimension of shape for feature {key} unknown. Consider using "
                         f"FixedLenSequenceFeature. Received feature={feature!r}.")
    if not shape.is_fully_defined():
        raise ValueError(f"All dimensions of shape for feature {key} need to be known but received {shape}.")
    return shape


def features_to_raw_params(features, allowed, sequence=False, dense_param="dense_defaults",
                           sparse_param="sparse_types"):
    """Validates ``features`` (a dict of the ``allowed`` spec classes) and returns its RawParams; defaults are
    still Python values or tensors (``dense_default_tensors`` makes them inputs). ``sequence``: these are the
    feature lists of a SequenceExample, whose dense shapes are those of one step."""
    params = RawParams()
    for key in sorted(features):
        feature = features[key]
        if not isinstance(feature, tuple(allowed)):
            names = ", ".join(a.__name__ for a in allowed)
            raise ValueError(f"Unsupported {type(feature).__name__} {feature!r} for feature {key!r}; use one of "
                             f"{names}")
        if getattr(feature, "dtype", None) is None:
            raise ValueError(f"Missing type for feature {key}. Received feature={feature!r}.")
        if isinstance(feature, VarLenFeature):
            params.sparse_keys.append(key)
            params.sparse_types.append(_check_dtype(key, feature.dtype, sparse_param))
            continue
        dtype = _check_dtype(key, feature.dtype, dense_param)
        shape = _known_shape(key, feature)
        if isinstance(feature, FixedLenSequenceFeature) and not sequence:
            if not feature.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
            shape = tensor_shape.TensorShape([None]).concatenate(shape)
        params.dense_keys.append(key)
        params.dense_types.append(dtype)
        params.dense_shapes.append(shape)
        params.dense_defaults.append(feature.default_value)
    return params


def _default_name(prefix, key):
    return prefix + re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)


def dense_default_tensors(params):
    """One default tensor per dense key, as the ops take them: a FixedLenFeature's default reshaped to its
    shape (empty: the feature is required); a FixedLenSequenceFeature's padding value, a scalar."""
    out = []
    for key, dtype, shape, default in zip(params.dense_keys, params.dense_types, params.dense_shapes,
                                          params.dense_defaults):
        variable = shape.ndims > 0 and shape.dims[0].value is None
        if default is None:
            out.append(constant("" if dtype == dtypes.string else 0, dtype=dtype) if variable else
                       constant(np.zeros(0, dtype=dtype.as_numpy_dtype), dtype=dtype))
            continue
        if is_tensor_like(default) and not variable:
            out.append(convert_to_tensor(default, dtype=dtype))
            continue
        target = [] if variable else shape.as_list()
        tensor = convert_to_tensor(default, dtype=dtype, name=_default_name("padding_" if variable else "key_", key))
        size, wanted = tensor.shape.num_elements(), int(np.prod(target, dtype=np.int64))
        if size is not None and size != wanted:
            raise ValueError(f"Cannot reshape a tensor with {size} elements to shape {target} ({wanted} elements): "
                             f"the default_value of feature {key!r} must have one value per element of its "
                             f"{'padding (a scalar)' if variable else 'shape'}")
        out.append(reshape(tensor, target))
    return out
