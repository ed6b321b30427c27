"""CPU kernels for transposes and reversals."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
