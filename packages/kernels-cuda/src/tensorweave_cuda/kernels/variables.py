"""What the GPU update kernels need of resource variables: the Var and its copy-on-write array (the CPU package's
Var, as the GPU variable kernels use it), index checks on the device, and the locks of several variables."""

from tensorweave.extension import errors

from tensorweave_cpu.kernels.state import variable_of  # noqa: F401 - re-exported for the update kernels
from tensorweave_cuda.kernels.checks import first_out_of_range
from tensorweave_cuda.variable_kernels import owned_value  # noqa: F401


def check_rows(indices, rows, what):
    """Refuses ids outside [0, rows) with the CPU kernels' message (one reduction on the device)."""
    at = first_out_of_range(indices, 0, rows)
    if at is not None:
        value = int(indices.reshape(-1)[at])
        raise errors.InvalidArgumentError(None, None, f"{what}: indices[{at}] = {value} is not in [0, {rows})")


class locked:  # noqa: N801 - used as a context manager, like a lock
    """Holds the locks of several variables (when ``use_locking``), taken in one global order so two updates
    never deadlock: the CPU kernels' rule."""

    def __init__(self, variables, locking=True):
        self.locks = [v.lock for v in sorted(variables, key=id)] if locking else []

    def __enter__(self):
        for lock in self.locks:
            lock.acquire()

    def __exit__(self, *exc):
        for lock in reversed(self.locks):
            lock.release()
