"""Variable ops: resource variables and their reads, assignments and scatter updates.

A variable is a ``Var`` resource in a container of its device, found by a ``VarHandleOp`` under its
``shared_name`` (the op's name by default, so sessions on one target share it). Every other op takes the
handle: reads snapshot the value, assignments and scatters update it under the variable's lock. The
Python side (``tf.Variable``) lives in ops/variables.py; the TF1 functions ``tf.assign`` and friends
here accept any such variable.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.ops import array_ops, concat_split_ops, fill_ops, shape_ops

DEFS = OpDefList()

__all__ = ["assign", "assign_add", "assign_sub", "count_up_to", "is_variable_initialized", "scatter_add",
           "scatter_div", "scatter_max", "scatter_min", "scatter_mul", "scatter_sub", "scatter_update",
           "scatter_nd_update", "scatter_nd_add", "scatter_nd_sub"]

_INDICES = "Tindices: {int32, int64}"

VAR_HANDLE = DEFS.define(
    "VarHandleOp", outputs=["resource: resource"],
    attrs=["container: string = ''", "shared_name: string = ''", "dtype: type", "shape: shape"],
    is_stateful=True, grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape,
    doc="The handle of the variable named shared_name in container (made, uninitialized, on first use).")
READ = DEFS.define("ReadVariableOp", inputs=["resource: resource"], outputs=["value: dtype"], attrs=["dtype: type"],
                   is_stateful=True, doc="A snapshot of the variable's value.")
ASSIGN = DEFS.define("AssignVariableOp", inputs=["resource: resource", "value: dtype"], attrs=["dtype: type"],
                     is_stateful=True, grad=NOT_DIFFERENTIABLE, doc="Sets the variable's value (initializing it).")
ASSIGN_ADD = DEFS.define("AssignAddVariableOp", inputs=["resource: resource", "value: dtype"],
                         attrs=["dtype: numeric"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
                         doc="Adds value to the variable in place, under its lock.")
ASSIGN_SUB = DEFS.define("AssignSubVariableOp", inputs=["resource: resource", "value: dtype"],
                         attrs=["dtype: numeric"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
                         doc="Subtracts value from the variable in place, under its lock.")
DEFS.define("VarIsInitializedOp", inputs=["resource: resource"], outputs=["is_initialized: bool"],
            is_stateful=True, grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape,
            doc="Whether the variable has been assigned a value.")
VARIABLE_SHAPE = DEFS.define("VariableShape", inputs=["input: resource"], outputs=["output: out_type"],
                             attrs=["out_type: {int32, int64} = int32"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
                             doc="The shape of the variable's current value.")
GATHER = DEFS.define("ResourceGather", inputs=["resource: resource", "indices: Tindices"], outputs=["output: dtype"],
                     attrs=["batch_dims: int = 0", "validate_indices: bool = True", "dtype: type", _INDICES],
                     is_stateful=True, doc="Rows ``indices`` of the variable (its sparse read).")
DEFS.define("ResourceCountUpTo", inputs=["resource: resource"], outputs=["output: T"],
            attrs=["limit: int", "T: {int32, int64}"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            shape_fn=common_shapes.scalar_shape,
            doc="Increments a scalar variable and returns its old value; OutOfRange once it reached limit.")
DEFS.define("DestroyResourceOp", inputs=["resource: resource"], attrs=["ignore_lookup_error: bool = True"],
            is_stateful=True, grad=NOT_DIFFERENTIABLE, doc="Deletes the resource from its container.")

# Scatter updates: op type -> the dtypes it accepts. Kernels apply the matching numpy ufunc per row.
SCATTER_OPS = {"ResourceScatterUpdate": "dtype: type", "ResourceScatterAdd": "dtype: numeric",
               "ResourceScatterSub": "dtype: numeric", "ResourceScatterMul": "dtype: numeric",
               "ResourceScatterDiv": "dtype: floating", "ResourceScatterMin": "dtype: real",
               "ResourceScatterMax": "dtype: real"}
for _op_type, _dtype_attr in SCATTER_OPS.items():
    DEFS.define(_op_type, inputs=["resource: resource", "indices: Tindices", "updates: dtype"],
                attrs=[_dtype_attr, _INDICES], is_stateful=True, grad=NOT_DIFFERENTIABLE,
                shape_fn=lambda op: _check_scatter_shape(op),
                doc=f"{_op_type[15:]} of rows ``indices`` of the variable with ``updates``, under its lock.")

for _op_type, _dtype_attr in (("ResourceScatterNdUpdate", "T: type"), ("ResourceScatterNdAdd", "T: numeric"),
                              ("ResourceScatterNdSub", "T: numeric")):
    DEFS.define(_op_type, inputs=["ref: resource", "indices: Tindices", "updates: T"],
                attrs=[_dtype_attr, _INDICES, "use_locking: bool = True"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
                doc=f"{_op_type[17:]} of the slices of the variable at index vectors ``indices`` with ``updates``.")


# ---- static facts about a handle ------------------------------------------------------------------------
def handle_creator(handle):
    """The VarHandleOp behind ``handle`` (followed through Identity, Enter, Switch...), or None."""
    op = handle.op
    for _ in range(256):
        if op.type == "VarHandleOp":
            return op
        resource_inputs = [t for t in op.inputs if t.dtype is dtypes.resource]
        if not resource_inputs:
            return None
        op = resource_inputs[0].op
    return None


def handle_shape(handle):
    """The static shape of the variable behind ``handle`` (unknown if not traceable)."""
    creator = handle_creator(handle)
    return creator.get_attr("shape") if creator is not None else tensor_shape.TensorShape(None)


def handle_dtype(handle):
    """The dtype of the value of the variable behind ``handle``, or None if not traceable."""
    creator = handle_creator(handle)
    return creator.get_attr("dtype") if creator is not None else None


def zeros_like_value(handle):
    """Zeros shaped like the variable behind ``handle``: the gradient of a handle no read reached."""
    shape = handle_shape(handle)
    dims = shape.as_list() if shape.is_fully_defined() else variable_shape(handle)
    return fill_ops.zeros(dims, handle_dtype(handle))


@READ.set_shape_fn
def _read_shape(op):
    return handle_shape(op.inputs[0])


@READ.set_gradient
def _read_grad(op, grad):
    return [grad]


def _check_value_shape(op):
    var_shape, value_shape = handle_shape(op.inputs[0]), op.inputs[1].shape
    if not var_shape.is_compatible_with(value_shape):
        raise ValueError(f"cannot update variable {handle_creator(op.inputs[0]).name!r} of shape {var_shape} "
                         f"with a value of shape {value_shape}")


for _def in (ASSIGN, ASSIGN_ADD, ASSIGN_SUB):
    _def.set_shape_fn(_check_value_shape)


def _check_scatter_shape(op):
    var_shape, (indices, updates) = handle_shape(op.inputs[0]), op.inputs[1:]
    if updates.shape.ndims == 0 or var_shape.ndims is None:
        return []
    want = indices.shape.concatenate(var_shape.with_rank_at_least(1)[1:])
    if not updates.shape.is_compatible_with(want):
        raise ValueError(f"{op.type}: updates of shape {updates.shape} do not fit rows {indices.shape} of "
                         f"variable {handle_creator(op.inputs[0]).name!r} of shape {var_shape} (want {want} or "
                         f"a scalar)")
    return []


@VARIABLE_SHAPE.set_shape_fn
def _variable_shape_shape(op):
    return tensor_shape.TensorShape([handle_shape(op.inputs[0]).ndims])


@GATHER.set_shape_fn
def _gather_shape(op):
    if op.get_attr("batch_dims") != 0:
        raise ValueError("ResourceGather supports batch_dims=0 only")
    params = handle_shape(op.inputs[0])
    if params.ndims is None:
        return tensor_shape.TensorShape(None)
    params = params.with_rank_at_least(1)
    return op.inputs[1].shape.concatenate(params[1:])


@GATHER.set_gradient
def _gather_grad(op, grad):
    """IndexedSlices on the handle: only the rows read get a gradient."""
    handle, indices = op.inputs
    params_shape = handle_shape(handle)
    if params_shape.is_fully_defined():
        dense_shape = array_ops.constant(np.asarray(params_shape.as_list(), np.int64))
    else:
        dense_shape = variable_shape(handle, out_type=dtypes.int64)
    if indices.shape.ndims != 1:
        size = shape_ops.expand_dims(shape_ops.size(indices, out_type=dtypes.int64), 0)
        grad = shape_ops.reshape(grad, concat_split_ops.concat([size, dense_shape[1:]], 0))
        indices = shape_ops.reshape(indices, size)
    return [IndexedSlices(grad, indices, dense_shape), None]


# ---- op builders used by tf.Variable and the optimizers ----------------------------------------------------
def var_handle_op(dtype, shape, container="", shared_name="", name=None):
    return apply_op("VarHandleOp", [], {"dtype": dtype, "shape": shape, "container": container,
                                        "shared_name": shared_name}, name=name or "VarHandleOp")


def read_variable_op(handle, dtype, name=None):
    return apply_op("ReadVariableOp", [handle], {"dtype": dtype}, name=name or "ReadVariableOp")


def assign_variable_op(handle, value, name=None):
    return apply_op("AssignVariableOp", [handle, value], name=name or "AssignVariableOp")


def assign_add_variable_op(handle, value, name=None):
    return apply_op("AssignAddVariableOp", [handle, value], name=name or "AssignAddVariableOp")


def assign_sub_variable_op(handle, value, name=None):
    return apply_op("AssignSubVariableOp", [handle, value], name=name or "AssignSubVariableOp")


def var_is_initialized_op(handle, name=None):
    return apply_op("VarIsInitializedOp", [handle], name=name or "VarIsInitializedOp")


def variable_shape(handle, out_type=dtypes.int32, name=None):
    return apply_op("VariableShape", [handle], {"out_type": out_type}, name=name or "VariableShape")


def resource_gather(handle, indices, dtype, name=None):
    return apply_op("ResourceGather", [handle, indices], {"dtype": dtype}, name=name or "ResourceGather")


def resource_scatter(op_type, handle, indices, updates, name=None):
    return apply_op(op_type, [handle, indices, updates], name=name or op_type)


def resource_count_up_to(handle, limit, dtype, name=None):
    return apply_op("ResourceCountUpTo", [handle], {"limit": limit, "T": dtype}, name=name or "ResourceCountUpTo")


# ---- TF1's functions over variables ------------------------------------------------------------------------
def _variable(ref, fn_name):
    if not hasattr(ref, "assign_add") or not hasattr(ref, "handle"):
        raise TypeError(f"tf.{fn_name} needs a tf.Variable as its first argument, got {ref!r}; tensors are "
                        f"immutable, so build a new tensor instead")
    return ref


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """``ref = value``; the result reads the new value when used as a tensor."""
    return _variable(ref, "assign").assign(value, use_locking=use_locking, name=name)


def assign_add(ref, value, use_locking=None, name=None):
    return _variable(ref, "assign_add").assign_add(value, use_locking=use_locking, name=name)


def assign_sub(ref, value, use_locking=None, name=None):
    return _variable(ref, "assign_sub").assign_sub(value, use_locking=use_locking, name=name)


def _scatter(method):
    def scatter(ref, indices, updates, use_locking=True, name=None):
        if "_nd_" in method:
            return getattr(_variable(ref, method), method)(indices, updates, name=name)
        sparse_delta = IndexedSlices(updates, indices)
        return getattr(_variable(ref, method), method)(sparse_delta, use_locking=use_locking, name=name)
    scatter.__name__ = method
    scatter.__doc__ = f"Row-wise ``{method}`` of ``ref[indices]`` with ``updates`` (duplicate rows accumulate)."
    return scatter


scatter_update = _scatter("scatter_update")
scatter_add = _scatter("scatter_add")
scatter_sub = _scatter("scatter_sub")
scatter_mul = _scatter("scatter_mul")
scatter_nd_update = _scatter("scatter_nd_update")
scatter_nd_add = _scatter("scatter_nd_add")
scatter_nd_sub = _scatter("scatter_nd_sub")
scatter_div = _scatter("scatter_div")
scatter_min = _scatter("scatter_min")
scatter_max = _scatter("scatter_max")


def is_variable_initialized(variable):
    """A bool tensor: whether ``variable`` has a value in the session that runs it."""
    return _variable(variable, "is_variable_initialized").is_initialized()


def count_up_to(ref, limit, name=None):
    """Increments ``ref`` and returns its old value; raises OutOfRangeError once it reached ``limit``."""
    return _variable(ref, "count_up_to").count_up_to(limit)
