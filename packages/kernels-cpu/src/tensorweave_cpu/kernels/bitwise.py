"""CPU kernels for tf.bitwise and Bitcast: numpy's bitwise ufuncs; shift amounts are clamped to [0, bits - 1] as TF's kernel
clamps them (numpy would give 0 or -1 for a shift past the width)."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Bitcast", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert", "LeftShift", "RightShift"})


def _plain(op_type, ufunc_name):
    KERNELS.add(op_type, build=lambda node: getattr(node.device.array_module, ufunc_name))


def _shift(op_type, ufunc_name):
    def build(node):
        xp = node.device.array_module
        shift = getattr(xp, ufunc_name)

        def compute(x, y):
            bits = x.dtype.itemsize * 8
            return shift(x, xp.clip(y, 0, bits - 1).astype(x.dtype, copy=False))
        return compute
    KERNELS.add(op_type, build=build)


for _op_type, _name in [("BitwiseAnd", "bitwise_and"), ("BitwiseOr", "bitwise_or"), ("BitwiseXor", "bitwise_xor"),
                        ("Invert", "invert")]:
    _plain(_op_type, _name)
_shift("LeftShift", "left_shift")
_shift("RightShift", "right_shift")


@KERNELS.register("Bitcast")
def _bitcast(x, *, type, xp):  # noqa: A002 - the op's attr name
    target = np.dtype(type.as_numpy_dtype)
    size_in, size_out = x.dtype.itemsize, target.itemsize
    if size_in < size_out and (x.ndim == 0 or x.shape[-1] != size_out // size_in):
        raise ValueError(f"Bitcast: {x.dtype} to {target} needs a last dimension of {size_out // size_in}, got "
                         f"shape {list(x.shape)}")
    out = xp.ascontiguousarray(x).view(target)
    if size_in > size_out:
        return out.reshape(x.shape + (size_in // size_out,))
    return out.reshape(x.shape[:-1]) if size_in < size_out else out.reshape(x.shape)
