"""CPU kernels for gathering and scattering."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
