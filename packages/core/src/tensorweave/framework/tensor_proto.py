"""numpy arrays to and from TensorProto, the way TensorFlow lays them out (tensor_content little-endian,
strings in string_val, or the typed *_val fields other writers use): ``tf.make_tensor_proto`` and
``tf.make_ndarray``, used by GraphDefs' constants, summaries and the dashboard."""

import math

import ml_dtypes
import numpy as np

from tensorweave.protos import framework as protos

_NP_BY_ENUM = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8, 8: np.complex64,
               9: np.int64, 10: np.bool_, 14: ml_dtypes.bfloat16, 17: np.uint16, 18: np.complex128, 19: np.float16,
               22: np.uint32, 23: np.uint64}
_ENUM_BY_NP = {np.dtype(t): e for e, t in _NP_BY_ENUM.items()}
DT_STRING = protos.DATA_TYPES["DT_STRING"]
_VAL_FIELDS = {1: "float_val", 2: "double_val", 3: "int_val", 4: "int_val", 5: "int_val", 6: "int_val", 9: "int64_val",
               10: "bool_val", 17: "int_val", 22: "uint32_val", 23: "uint64_val"}


def _as_bytes(x):
    if isinstance(x, bytes):
        return x
    if isinstance(x, np.ndarray):
        x = x.item()
    return x if isinstance(x, bytes) else str(x).encode("utf-8")


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False):
    """A TensorProto holding ``values`` (an array, a scalar, bytes or str; strings become DT_STRING), cast to
    ``dtype`` and broadcast to ``shape`` when given (TF's ``tf.make_tensor_proto``)."""
    arr = np.asarray(values)
    if dtype is not None:
        np_type = getattr(dtype, "as_numpy_dtype", dtype)
        arr = arr.astype(np_type) if np.dtype(np_type).kind != "O" or arr.dtype.kind not in "OSU" else arr
    if shape is not None and tuple(shape) != arr.shape:
        if verify_shape:
            raise TypeError(f"expected a tensor of shape {list(shape)}, got shape {list(arr.shape)}")
        arr = np.broadcast_to(arr, tuple(shape)) if arr.size == 1 else arr.reshape(tuple(shape))
    proto = protos.TensorProto()
    for d in arr.shape:
        proto.tensor_shape.dim.add(size=int(d))
    if arr.dtype.kind in "OSU":
        proto.dtype = DT_STRING
        proto.string_val.extend(_as_bytes(x) for x in arr.reshape(-1))
        return proto
    if arr.dtype not in _ENUM_BY_NP:
        raise TypeError(f"cannot store an array of dtype {arr.dtype} in a TensorProto")
    proto.dtype = _ENUM_BY_NP[arr.dtype]
    proto.tensor_content = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
    return proto


def make_ndarray(tensor):
    """TF's ``tf.make_ndarray``: the array a TensorProto holds."""
    return tensor_proto_to_array(tensor)


MAX_FILLED = 1 << 24  # elements of a tensor that stores fewer values than its shape says


def tensor_proto_to_array(proto):
    """The numpy array a TensorProto holds, whichever encoding its writer chose (values it does not
    store are filled in as TF does, up to ``MAX_FILLED``: a shape claiming more is a ValueError)."""
    shape = [d.size for d in proto.tensor_shape.dim]
    if any(d < 0 for d in shape):
        raise ValueError(f"TensorProto of shape {shape} has an unknown dimension")
    count = math.prod(shape)
    if proto.dtype == DT_STRING:
        values = list(proto.string_val)
        if len(values) == 1 and count != 1:
            values = values * _filled(shape, count)
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        return arr.reshape(shape)
    if proto.dtype not in _NP_BY_ENUM:
        raise ValueError(f"TensorProto of data type {proto.dtype} cannot be read as an array")
    np_type = np.dtype(_NP_BY_ENUM[proto.dtype])
    if proto.tensor_content:
        return np.frombuffer(proto.tensor_content, dtype=np_type.newbyteorder("<")).astype(np_type).reshape(shape)
    if proto.dtype in (14, 19):
        values = np.array(proto.half_val, dtype=np.uint16).view(np_type)
    elif proto.dtype in (8, 18):
        parts = np.array(proto.scomplex_val if proto.dtype == 8 else proto.dcomplex_val)
        values = (parts[0::2] + 1j * parts[1::2]).astype(np_type)
    else:
        values = np.array(getattr(proto, _VAL_FIELDS[proto.dtype]), dtype=np_type)
    if values.size == count:
        return values.reshape(shape)
    if values.size == 0:
        return np.zeros(_filled(shape, count), dtype=np_type).reshape(shape)
    return np.concatenate([values, np.repeat(values[-1:], _filled(shape, count) - values.size)]).reshape(shape)


def _filled(shape, count):
    """``count``, the elements of a tensor that stores fewer (TF repeats the last), if it is not absurd."""
    if count > MAX_FILLED:
        raise ValueError(f"TensorProto of shape {shape} claims {count:,} elements but stores fewer; more than "
                         f"{MAX_FILLED:,} are not filled in")
    return count
