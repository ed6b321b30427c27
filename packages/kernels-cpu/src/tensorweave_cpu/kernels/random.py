"""CPU kernels for random ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
