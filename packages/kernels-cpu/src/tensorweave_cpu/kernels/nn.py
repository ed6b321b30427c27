"""CPU kernels for nn ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
