"""CPU kernels for io ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
