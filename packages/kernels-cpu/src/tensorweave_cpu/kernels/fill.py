"""CPU kernels for fills."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
