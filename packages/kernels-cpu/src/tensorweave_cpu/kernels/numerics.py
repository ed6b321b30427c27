"""CheckNumerics: its input passed through, or the step failed when the input holds NaN or Inf (TF1's message)."""

from tensorweave.extension import KernelSet, errors

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"CheckNumerics"})


@KERNELS.register_build("CheckNumerics")
def _check_numerics(node):
    xp = node.device.array_module
    message = node.attrs["message"]

    def compute(x):
        if x.size and not bool(xp.isfinite(x).all()):  # one pass when the values are fine
            nan, inf = bool(xp.isnan(x).any()), bool(xp.isinf(x).any())
            what = "Inf and NaN" if nan and inf else "NaN" if nan else "Inf"
            raise errors.InvalidArgumentError(None, node.source, f"{message} : Tensor had {what} values")
        return x

    return compute
