"""CPU kernels for padding and tiling."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
