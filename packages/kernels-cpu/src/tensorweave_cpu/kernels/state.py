"""CPU kernels for resource variables: the Var resource, reads, assignments, gathers and scatters.

Reads hand out the variable's array itself, not a copy. Updates happen in place, but only on an array
nothing else holds: when a read's result (or a fetched value) is still alive, the update first copies
the array, as TF's copy-on-write variables do, so a value once read never changes under its reader.
"""

import sys
import threading

import numpy as np

from tensorweave.extension import DEFAULT_CONTAINER, KernelSet, Resource, ResourceHandle, errors

from tensorweave_cpu.kernels.gather import index_tuple

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"DestroyResourceOp", "ReadVariableOp", "ResourceCountUpTo", "ResourceGather",
                                     "VarHandleOp"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too.
The other updates are not: they write with np.copyto and numpy ufuncs (a GPU package shares their checks below)."""


class Var(Resource):
    """A variable's state: its array (None until first assigned), its dtype, and the lock updates hold."""

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype
        self.value = None
        self.lock = threading.Lock()
        self.closed = False

    def debug_string(self):
        shape = None if self.value is None else list(self.value.shape)
        return f"Var {self.name} {self.dtype.name} {shape}"

    def close(self, error=None):
        """Its container was cleared or it was deleted: handles to it must be looked up again."""
        self.closed = True


def variable_of(handle, dtype=None):
    """The Var behind ``handle``, checked against the dtype the op expects."""
    var = getattr(handle, "resource", None)
    if type(var) is not Var:
        raise errors.InvalidArgumentError(None, None, f"expected the handle of a variable, got {handle!r}")
    if dtype is not None and var.dtype is not dtype:
        raise errors.InvalidArgumentError(None, None, (
            f"variable {var.name!r} holds {var.dtype.name}, but this op treats it as {dtype.name}"))
    return var


def uninitialized(var):
    return errors.FailedPreconditionError(None, None, (
        f"Attempting to use uninitialized value {var.name}: variable {var.name!r} has not been assigned a value "
        f"in this session's containers. Run its initializer first, e.g. "
        f"sess.run(tf.global_variables_initializer())"))


def owned_value(var):
    """``var``'s array, ready to update in place: copied first if anything else still holds it.

    Call with ``var.lock`` held. ``sys.getrefcount`` sees the attribute and its own argument (2); any
    more is a reader, a fetched result or a view, which must keep the old value. Any array module: a cupy
    array has no ``writeable`` flag (it is always writeable).
    """
    if var.value is None:
        raise uninitialized(var)
    if sys.getrefcount(var.value) > 2 or not getattr(var.value.flags, "writeable", True):
        var.value = var.value.copy()
    return var.value


def check_indices(indices, rows, what):
    """Refuses ids outside [0, rows) with TF's message, instead of numpy's wrap-around for negatives."""
    if indices.size and (indices.min() < 0 or indices.max() >= rows):
        flat = indices.reshape(-1)
        bad = int(((flat < 0) | (flat >= rows)).argmax())
        raise index_out_of_range(what, bad, int(flat[bad]), rows)


def index_out_of_range(what, at, value, rows):
    """The error for ``indices[at] = value`` outside [0, rows): one message on every device."""
    return errors.InvalidArgumentError(None, None, f"{what}: indices[{at}] = {value} is not in [0, {rows})")


@KERNELS.register_build("VarHandleOp", context=True)
def _var_handle(node):
    container = node.attrs["container"] or DEFAULT_CONTAINER
    name = node.attrs["shared_name"] or node.name
    dtype = node.attrs["dtype"]
    last = [None, None]  # the Var last found and its handle: valid until the Var is closed

    def var_handle(ctx):
        var = last[0]
        if var is not None and not var.closed:
            return last[1]
        var = ctx.resource_manager.lookup_or_create(container, name, lambda: Var(name, dtype))
        if type(var) is not Var or var.dtype is not dtype:
            have = f"a {var.dtype.name} variable" if type(var) is Var else type(var).__name__
            raise errors.InvalidArgumentError(None, None, (
                f"resource {container}/{name} is {have}, but this op asks for a {dtype.name} variable; give "
                f"variables of different dtypes different names (shared_name)"))
        handle = ResourceHandle(ctx.device.name, container, name, var)
        last[:] = [var, handle]
        return handle

    return var_handle


@KERNELS.register("ReadVariableOp")
def _read(handle, *, dtype):
    var = variable_of(handle, dtype)
    with var.lock:
        value = var.value
    if value is None:
        raise uninitialized(var)
    return value


@KERNELS.register("AssignVariableOp")
def _assign(handle, value, *, dtype):
    var = variable_of(handle, dtype)
    with var.lock:
        if var.value is not None and var.value.shape == np.shape(value) and sys.getrefcount(var.value) <= 2 \
                and var.value.flags.writeable:
            np.copyto(var.value, value)
        else:
            var.value = np.array(value, dtype=dtype.as_numpy_dtype, copy=True)


def check_update_shape(var, shape, value_shape):
    """Refuses an in-place update (assign_add, assign_sub) by a value of another shape."""
    if tuple(shape) != tuple(value_shape):
        raise errors.InvalidArgumentError(None, None, (
            f"cannot update variable {var.name!r} of shape {list(shape)} with a value of shape "
            f"{list(value_shape)}: shapes must be equal"))


def _in_place(ufunc):
    def update(handle, value, *, dtype):
        var = variable_of(handle, dtype)
        with var.lock:
            current = owned_value(var)
            check_update_shape(var, current.shape, np.shape(value))
            ufunc(current, value, out=current)
    return update


KERNELS.add("AssignAddVariableOp", _in_place(np.add))
KERNELS.add("AssignSubVariableOp", _in_place(np.subtract))


@KERNELS.register("VarIsInitializedOp")
def _is_initialized(handle):
    return np.bool_(variable_of(handle).value is not None)


@KERNELS.register("VariableShape")
def _variable_shape(handle, *, out_type):
    value = _read(handle, dtype=variable_of(handle).dtype)
    return np.asarray(value.shape, dtype=out_type.as_numpy_dtype)


@KERNELS.register("ResourceGather")
def _gather(handle, indices, *, dtype):
    value = _read(handle, dtype=dtype)
    if value.ndim == 0:
        raise errors.InvalidArgumentError(None, None, f"cannot gather rows of scalar variable {handle.name!r}")
    check_indices(indices, value.shape[0], f"gather from variable {handle.name!r}")
    return value[indices]


def check_scatter(var, shape, indices, updates_shape, check_ids=check_indices):
    """Refuses a row scatter into ``var`` (its array of ``shape``) that does not fit; True when the updates are
    one scalar. A GPU package passes its own id check (same message)."""
    if len(shape) == 0:
        raise errors.InvalidArgumentError(None, None, f"cannot scatter into scalar variable {var.name!r}")
    check_ids(indices, shape[0], f"scatter into variable {var.name!r}")
    expected = tuple(indices.shape) + tuple(shape[1:])
    if len(updates_shape) and tuple(updates_shape) != expected:
        raise errors.InvalidArgumentError(None, None, (
            f"scatter into variable {var.name!r} of shape {list(shape)}: updates have shape "
            f"{list(updates_shape)}, expected {list(expected)} or a scalar"))
    return len(updates_shape) == 0


def _scatter(ufunc):
    def scatter(handle, indices, updates, *, dtype):
        var = variable_of(handle, dtype)
        with var.lock:
            current = owned_value(var)
            check_scatter(var, current.shape, indices, np.shape(updates))
            if ufunc is None:
                current[indices] = updates
            else:
                ufunc.at(current, indices, updates)  # unbuffered: duplicate rows apply one after another
    return scatter


for _op_type, _ufunc in (("ResourceScatterUpdate", None), ("ResourceScatterAdd", np.add),
                         ("ResourceScatterSub", np.subtract), ("ResourceScatterMul", np.multiply),
                         ("ResourceScatterDiv", np.divide), ("ResourceScatterMin", np.minimum),
                         ("ResourceScatterMax", np.maximum)):
    KERNELS.add(_op_type, _scatter(_ufunc))


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


@KERNELS.register("DestroyResourceOp", context=True)
def _destroy(ctx, handle, *, ignore_lookup_error):
    try:
        ctx.resource_manager.delete(handle.container, handle.name)
    except errors.NotFoundError:
        if not ignore_lookup_error:
            raise


def _scatter_nd(op_type, ufunc):
    def scatter(ref, indices, updates, *, T, use_locking):  # noqa: N803 - the op's attr name
        var = variable_of(ref, T)
        with var.lock:
            current = owned_value(var)
            columns = index_tuple(current, indices, op_type)
            expected = indices.shape[:-1] + current.shape[len(columns):]
            if np.shape(updates) != expected:
                raise errors.InvalidArgumentError(None, None, (
                    f"{op_type} into variable {var.name!r} of shape {list(current.shape)}: updates have shape "
                    f"{list(np.shape(updates))}, expected indices.shape[:-1] + shape[{len(columns)}:] = "
                    f"{list(expected)}"))
            if ufunc is None:
                current[columns] = updates
            else:
                ufunc.at(current, columns, updates)
    return scatter


for _op_type, _ufunc in (("ResourceScatterNdUpdate", None), ("ResourceScatterNdAdd", np.add),
                         ("ResourceScatterNdSub", np.subtract)):
    KERNELS.add(_op_type, _scatter_nd(_op_type, _ufunc))
