"""CPU kernels for linear-algebra ops."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")


@KERNELS.register("Qr")
def _qr(a, *, full_matrices, xp):
    return xp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
