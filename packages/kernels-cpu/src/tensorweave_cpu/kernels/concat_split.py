"""CPU kernels for concatenation and splitting."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
