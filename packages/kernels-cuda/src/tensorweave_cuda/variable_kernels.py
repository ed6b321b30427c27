"""GPU kernels for the variable updates the CPU package writes with numpy alone: its Var, copy-on-write array and
checks (one message on both devices), with device arrays.

The CPU kernels write with ``np.copyto`` and numpy ufuncs; here an update writes in place when nothing but the
variable holds its array (the reference count, as on CPU: copy-on-write). Scatters go through ``scatter_rows``:
CUDA atomics where they exist for the dtype, rounds otherwise. Count-up-to and strided-slice assignment are the
CPU package's own kernels (array-namespace generic).
"""

import sys

from tensorweave.extension import KernelSet

from tensorweave_cpu.kernels.state import check_scatter, check_update_shape, owned_value, uninitialized, variable_of
from tensorweave_cuda.scatter_rows import scatter_rows

KERNELS = KernelSet("GPU")


@KERNELS.register("AssignVariableOp")
def _assign(handle, value, *, dtype, xp):
    var = variable_of(handle, dtype)
    with var.lock:
        if var.value is not None and var.value.shape == value.shape and sys.getrefcount(var.value) <= 2:
            var.value[...] = value
        else:
            var.value = xp.array(value, dtype=dtype.as_numpy_dtype, copy=True)


def _in_place(ufunc_name):
    def update(handle, value, *, dtype, xp):
        var = variable_of(handle, dtype)
        with var.lock:
            current = owned_value(var)
            check_update_shape(var, current.shape, value.shape)
            getattr(xp, ufunc_name)(current, value, out=current)
    return update


KERNELS.add("AssignAddVariableOp", _in_place("add"))
KERNELS.add("AssignSubVariableOp", _in_place("subtract"))


@KERNELS.register("VarIsInitializedOp")
def _is_initialized(handle, *, xp):
    return xp.asarray(variable_of(handle).value is not None)


@KERNELS.register("VariableShape")
def _variable_shape(handle, *, out_type, xp):
    var = variable_of(handle)
    if var.value is None:
        raise uninitialized(var)
    return xp.asarray(var.value.shape, dtype=out_type.as_numpy_dtype)


def _scatter(ufunc_name):
    def scatter(handle, indices, updates, *, dtype, xp):
        var = variable_of(handle, dtype)
        with var.lock:
            current = owned_value(var)
            check_scatter(var, current.shape, indices, updates.shape)
            if ufunc_name is None:
                current[indices] = updates
            else:
                scatter_rows(xp, ufunc_name, current, indices.reshape(-1),
                             updates.reshape((-1,) + current.shape[1:]) if updates.ndim else updates)
    return scatter


for _op_type, _ufunc_name in (("ResourceScatterUpdate", None), ("ResourceScatterAdd", "add"),
                              ("ResourceScatterSub", "subtract"), ("ResourceScatterMin", "minimum"),
                              ("ResourceScatterMax", "maximum"), ("ResourceScatterMul", "multiply"),
                              ("ResourceScatterDiv", "true_divide")):
    KERNELS.add(_op_type, _scatter(_ufunc_name))
