"""CPU kernels for slicing."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
