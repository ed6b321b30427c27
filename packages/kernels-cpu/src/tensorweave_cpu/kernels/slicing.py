"""CPU kernels for slicing: Slice and StridedSlice return views of their input (numpy basic indexing);
StridedSliceGrad writes dy into zeros through the same index, ResourceStridedSliceAssign a value into a
variable (under its lock, copy-on-write like every variable update)."""

from tensorweave.extension import MASKS, KernelSet, dense_key, errors, sliced_dims
from tensorweave_cpu.kernels.state import owned_value, variable_of

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"ResourceStridedSliceAssign", "Slice", "StridedSlice", "StridedSliceGrad"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _invalid(message):
    return errors.InvalidArgumentError(None, None, message)


def _key_builder(node):
    """A function (shape, begin, end, strides) -> index tuple, remembering the last spec it checked."""
    masks = {m: node.attrs[m] for m in MASKS}
    last = [(None, None)]

    def key_for(shape, begin, end, strides):
        spec = (shape, begin.tobytes(), end.tobytes(), strides.tobytes())
        seen, key = last[0]
        if spec == seen:
            return key
        try:
            key = dense_key(len(shape), begin.tolist(), end.tolist(), strides.tolist(), **masks)
            sliced_dims(key, list(shape))
        except ValueError as e:
            raise _invalid(f"strided slice of a tensor of shape {list(shape)} with begin {begin.tolist()}, end "
                           f"{end.tolist()}, strides {strides.tolist()}: {e}") from None
        key += (Ellipsis,)  # a 0-d result stays an array
        last[0] = (spec, key)
        return key

    return key_for


@KERNELS.register_build("StridedSlice")
def _strided_slice(node):
    key_for = _key_builder(node)

    def compute(x, begin, end, strides):
        return x[key_for(x.shape, begin, end, strides)]

    return compute


@KERNELS.register_build("StridedSliceGrad")
def _strided_slice_grad(node):
    key_for = _key_builder(node)
    xp = node.device.array_module

    def compute(shape, begin, end, strides, dy):
        shape = tuple(int(d) for d in shape.tolist())
        key = key_for(shape, begin, end, strides)
        out = xp.zeros(shape, dtype=dy.dtype)
        target = out[key]
        if target.shape != dy.shape:
            raise _invalid(f"dy has shape {list(dy.shape)}, but the slice of a tensor of shape {list(shape)} has "
                           f"shape {list(target.shape)}")
        out[key] = dy
        return out

    return compute


@KERNELS.register("Slice")
def _slice(x, begin, size):
    begin, size = begin.tolist(), size.tolist()
    if len(begin) != x.ndim or len(size) != x.ndim:
        raise _invalid(f"slice: begin {begin} and size {size} need one entry per dimension of the input of shape "
                       f"{list(x.shape)}")
    key = []
    for i, (b, s, d) in enumerate(zip(begin, size, x.shape)):
        e = d if s == -1 else b + s
        if not (0 <= b <= d and s >= -1 and e <= d):
            raise _invalid(f"slice: begin {begin} and size {size} do not fit the input of shape {list(x.shape)}: in "
                           f"dimension {i}, begin {b} and size {s} reach past {d}. Need 0 <= begin <= dim and "
                           f"begin + size <= dim (size -1 means to the end)")
        key.append(slice(b, e))
    return x[tuple(key) + (Ellipsis,)]


@KERNELS.register_build("ResourceStridedSliceAssign")
def _strided_slice_assign(node):
    key_for = _key_builder(node)
    dtype = node.attrs["T"]

    def compute(handle, begin, end, strides, value):
        var = variable_of(handle, dtype)
        with var.lock:
            current = owned_value(var)
            key = key_for(current.shape, begin, end, strides)
            target_shape = current[key].shape
            if target_shape != value.shape:
                raise _invalid(f"cannot assign a value of shape {list(value.shape)} to a slice of shape "
                               f"{list(target_shape)} of variable {var.name!r} (no broadcasting)")
            current[key] = value

    return compute
