"""CPU kernels for linear-algebra ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Qr"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


@KERNELS.register("Qr")
def _qr(a, *, full_matrices, xp):
    return xp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
