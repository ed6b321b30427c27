"""GPU kernels for variable updates: the CPU package's Var resource and checks, with device arrays.

The CPU kernels test numpy's ``writeable`` flag and write with ``np.copyto``; here an update writes in place when
nothing but the variable holds its array (the reference count, as on CPU: copy-on-write). Scatters go through
``scatter_rows``: CUDA atomics where they exist for the dtype, rounds otherwise.
"""

import sys

from tensorweave.extension import KernelSet, errors

from tensorweave_cpu.kernels.slicing import _key_builder
from tensorweave_cpu.kernels.state import check_indices, uninitialized, variable_of
from tensorweave_cuda.scatter_rows import scatter_rows

KERNELS = KernelSet("GPU")


def owned_value(var):
    """``var``'s array, copied first if a reader still holds it (call with ``var.lock`` held)."""
    if var.value is None:
        raise uninitialized(var)
    if sys.getrefcount(var.value) > 2:
        var.value = var.value.copy()
    return var.value


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
            if current.shape != value.shape:
                raise errors.InvalidArgumentError(None, None, (
                    f"cannot update variable {var.name!r} of shape {list(current.shape)} with a value of shape "
                    f"{list(value.shape)}: shapes must be equal"))
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
            if current.ndim == 0:
                raise errors.InvalidArgumentError(None, None, f"cannot scatter into scalar variable {var.name!r}")
            check_indices(indices, current.shape[0], f"scatter into variable {var.name!r}")
            if updates.ndim and updates.shape != indices.shape + current.shape[1:]:
                raise errors.InvalidArgumentError(None, None, (
                    f"scatter into variable {var.name!r} of shape {list(current.shape)}: updates have shape "
                    f"{list(updates.shape)}, expected {list(indices.shape + current.shape[1:])} or a scalar"))
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


@KERNELS.register("ResourceCountUpTo")
def _count_up_to(handle, *, limit, T):  # noqa: N803 - the op's attr name
    var = variable_of(handle, T)
    with var.lock:
        current = owned_value(var)
        if current.ndim != 0:
            raise errors.InvalidArgumentError(None, None, (
                f"count_up_to needs a scalar variable; {var.name!r} has shape {list(current.shape)}"))
        if int(current) >= limit:
            raise errors.OutOfRangeError(None, None, f"Reached limit of {limit} (variable {var.name!r})")
        before = current.copy()
        current += 1
    return before


@KERNELS.register_build("ResourceStridedSliceAssign")
def _strided_slice_assign(node):
    key_for = _key_builder(node)  # the CPU kernel's key rules and messages
    dtype = node.attrs["T"]

    def compute(handle, begin, end, strides, value):
        var = variable_of(handle, dtype)
        with var.lock:
            current = owned_value(var)
            key = key_for(current.shape, begin, end, strides)
            target_shape = current[key].shape
            if target_shape != value.shape:
                raise errors.InvalidArgumentError(None, None, (
                    f"cannot assign a value of shape {list(value.shape)} to a slice of shape {list(target_shape)} "
                    f"of variable {var.name!r} (no broadcasting)"))
            current[key] = value

    return compute
