"""CPU kernels for training ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
