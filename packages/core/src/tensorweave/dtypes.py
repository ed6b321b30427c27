"""Tensor element types with TF1's names, each backed by a numpy dtype (bfloat16 by ml_dtypes', which numpy lacks:
the library JAX uses for it)."""

import ml_dtypes
import numpy as np


class DType:
    """An element type. Compares equal to its TF name and to itself only."""

    __slots__ = ("name", "as_numpy_dtype", "_np", "as_datatype_enum")

    def __init__(self, name, np_type, enum):
        self.name = name
        self.as_numpy_dtype = np_type
        self._np = np.dtype(np_type) if np_type is not None else None
        self.as_datatype_enum = enum

    @property
    def base_dtype(self):
        return self

    @property
    def real_dtype(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    @property
    def is_floating(self):
        return self._np is not None and (self._np.kind == "f" or self._np == _BFLOAT16)

    @property
    def is_integer(self):
        return self._np is not None and self._np.kind in "iu"

    @property
    def is_unsigned(self):
        return self._np is not None and self._np.kind == "u"

    @property
    def is_bool(self):
        return self is bool

    @property
    def is_complex(self):
        return self._np is not None and self._np.kind == "c"

    @property
    def is_numeric(self):
        return self.is_floating or (self._np is not None and self._np.kind in "iuc")

    @property
    def is_differentiable(self):
        """Whether gradients flow through tensors of this type."""
        return self.is_floating or self.is_complex or self is resource or self is variant

    @property
    def size(self):
        return self._np.itemsize if self._np is not None and self._np.kind != "O" else 1

    @property
    def min(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).min)
        if self.is_integer:
            return int(np.iinfo(self._np).min)
        raise TypeError(f"dtype {self.name} has no min")

    @property
    def max(self):
        if self.is_floating:
            return float(ml_dtypes.finfo(self._np).max)
        if self.is_integer:
            return int(np.iinfo(self._np).max)
        raise TypeError(f"dtype {self.name} has no max")

    def is_compatible_with(self, other):
        return self is as_dtype(other)

    def __repr__(self):
        return f"tf.{self.name}"

    def __eq__(self, other):
        if isinstance(other, DType):
            return self is other
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.name)

    def __reduce__(self):
        return as_dtype, (self.name,)


_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

float16 = DType("float16", np.float16, 19)
half = float16
bfloat16 = DType("bfloat16", ml_dtypes.bfloat16, 14)  # float32's exponent with an 8-bit significand (TPUs')
float32 = DType("float32", np.float32, 1)
float64 = DType("float64", np.float64, 2)
double = float64
int8 = DType("int8", np.int8, 6)
int16 = DType("int16", np.int16, 5)
int32 = DType("int32", np.int32, 3)
int64 = DType("int64", np.int64, 9)
uint8 = DType("uint8", np.uint8, 4)
uint16 = DType("uint16", np.uint16, 17)
uint32 = DType("uint32", np.uint32, 22)
uint64 = DType("uint64", np.uint64, 23)
bool = DType("bool", np.bool_, 10)  # noqa: A001 - TF's public name
complex64 = DType("complex64", np.complex64, 8)
complex128 = DType("complex128", np.complex128, 18)
string = DType("string", np.object_, 7)
resource = DType("resource", np.object_, 20)
variant = DType("variant", np.object_, 21)

_ALL = [float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
        bool, complex64, complex128, string, resource, variant]
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, double=float64, float=float32)
_BY_ENUM = {d.as_datatype_enum: d for d in _ALL}
_BY_NP = {d._np: d for d in _ALL if d._np is not None and d._np.kind != "O"}

FLOATING = (float16, bfloat16, float32, float64)
INTEGER = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
NUMERIC = FLOATING + INTEGER + (complex64, complex128)
REAL = FLOATING + INTEGER
ALL_TYPES = tuple(_ALL)


def as_dtype(value):
    """Converts a DType, TF name, numpy dtype/type or datatype enum to a DType."""
    if isinstance(value, DType):
        return value
    if value is None:  # numpy reads None as float64; TF refuses it (and float64 != None)
        raise TypeError("cannot convert None to a tensorweave dtype")
    if isinstance(value, str):
        try:
            return _BY_NAME[value]
        except KeyError:
            raise TypeError(f"unknown dtype name {value!r}; known: {sorted(_BY_NAME)}") from None
    if isinstance(value, int) and not isinstance(value, type(True)):
        try:
            return _BY_ENUM[value]
        except KeyError:
            raise TypeError(f"unknown datatype enum {value}") from None
    if value in (bytes, str, np.bytes_, np.str_):
        return string
    if value is type(True):
        return bool
    if value is float:
        return float32
    if value is int:
        return int32
    try:
        npd = np.dtype(value)
    except TypeError:
        raise TypeError(f"cannot convert {value!r} to a tensorweave dtype") from None
    if npd.kind in "SUO":
        return string
    try:
        return _BY_NP[npd]
    except KeyError:
        raise TypeError(f"numpy dtype {npd} has no tensorweave equivalent") from None
