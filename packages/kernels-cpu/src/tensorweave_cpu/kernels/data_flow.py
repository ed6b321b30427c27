"""CPU kernels for data_flow ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
