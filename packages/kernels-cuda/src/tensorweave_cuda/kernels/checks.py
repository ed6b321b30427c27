"""Index checks on the GPU: one reduction finds the first index outside a range, so a kernel can refuse bad
indices with the CPU kernel's message before it changes anything (one small device-to-host read)."""

import functools

from tensorweave_cpu.kernels.state import index_out_of_range

_NONE = 2 ** 63 - 1


@functools.lru_cache(maxsize=None)
def _first_bad_kernel():
    import cupy
    return cupy.ReductionKernel(
        "T x, int64 lower, int64 upper", "int64 first",
        "((long long)x < lower || (long long)x >= upper) ? (long long)_j : 0x7fffffffffffffffLL",
        "min(a, b)", "first = a", "0x7fffffffffffffffLL", "tensorweave_first_out_of_range")


def first_out_of_range(indices, lower, upper):
    """The flat position of the first entry of ``indices`` outside [lower, upper), or None (None for lower=None
    means no lower bound: negative ids are allowed, as segment sums drop them)."""
    if indices.size == 0:
        return None
    lower = -(2 ** 63) if lower is None else int(lower)
    at = int(_first_bad_kernel()(indices.reshape(-1), lower, int(upper)))
    return None if at == _NONE else at


def check_rows(indices, rows, what):
    """Refuses ids outside [0, rows) with the CPU kernels' message (``check_indices``'s, in one reduction)."""
    at = first_out_of_range(indices, 0, rows)
    if at is not None:
        raise index_out_of_range(what, at, int(indices.reshape(-1)[at]), rows)
