"""CPU kernels for MatMul and BatchMatMul/BatchMatMulV2 (numpy's matmul broadcasts batch dimensions itself).

float16 products are computed in float32 and rounded back, as numpy's float16 matmul accumulates in
float16 and loses most of its precision on long inner dimensions.
"""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"BatchMatMul", "BatchMatMulV2", "MatMul"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _product(node, multiply):
    if node.input_dtypes[0] == np.float16:
        return lambda a, b: multiply(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    return multiply


@KERNELS.register_build("MatMul")
def _matmul(node):
    product = _product(node, node.device.array_module.dot)  # dot: less call overhead than matmul for 2-D
    transpose_a, transpose_b = node.attrs["transpose_a"], node.attrs["transpose_b"]
    if not transpose_a and not transpose_b:
        return product
    return lambda a, b: product(a.T if transpose_a else a, b.T if transpose_b else b)


def _batch_matmul(node):
    xp = node.device.array_module
    product = _product(node, xp.matmul)
    adj_x, adj_y = node.attrs["adj_x"], node.attrs["adj_y"]
    complex_type = node.input_dtypes[0].is_complex

    def adjoint(m):
        m = xp.swapaxes(m, -1, -2)
        return xp.conj(m) if complex_type else m

    if not adj_x and not adj_y:
        return product
    return lambda x, y: product(adjoint(x) if adj_x else x, adjoint(y) if adj_y else y)


KERNELS.add("BatchMatMulV2", build=_batch_matmul)


@KERNELS.register_build("BatchMatMul")
def _batch_matmul_same_batch(node):
    compute = _batch_matmul(node)

    def checked(x, y):
        if x.shape[:-2] != y.shape[:-2]:
            raise ValueError(f"BatchMatMul needs equal batch dimensions, got {x.shape[:-2]} and {y.shape[:-2]}")
        return compute(x, y)
    return checked
