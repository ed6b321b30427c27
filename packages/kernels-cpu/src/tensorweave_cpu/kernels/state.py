"""CPU kernels for state ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
