"""CPU kernels for shape ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
