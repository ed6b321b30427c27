"""CPU kernels for math ops."""

import numpy as np

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")

KERNELS.add("Add", np.add)
KERNELS.add("Less", np.less)


@KERNELS.register("MatMul")
def _matmul(a, b, *, transpose_a, transpose_b):
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)
