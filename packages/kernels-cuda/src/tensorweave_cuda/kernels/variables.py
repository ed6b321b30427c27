"""What the GPU update kernels need of resource variables: the CPU package's Var, its copy-on-write array and
locks, and an index check that runs on the device."""

from tensorweave_cpu.kernels.state import index_out_of_range, owned_value, variable_of  # noqa: F401 - re-exported
from tensorweave_cuda.kernels.checks import first_out_of_range


def check_rows(indices, rows, what):
    """Refuses ids outside [0, rows) with the CPU kernels' message (one reduction on the device)."""
    at = first_out_of_range(indices, 0, rows)
    if at is not None:
        raise index_out_of_range(what, at, int(indices.reshape(-1)[at]), rows)
