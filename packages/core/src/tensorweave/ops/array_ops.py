"""Array ops: constants, placeholders and identities.

The rest of TF1's array ops live beside it: shapes and reshaping (shape_ops), fills, concatenation and
splitting, transposes, padding and tiling, slicing and gathering.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor, numpy_value
from tensorweave.framework.tensor_util import constant_value

DEFS = OpDefList()

__all__ = ["constant", "placeholder", "placeholder_with_default", "identity", "identity_n", "stop_gradient"]

# ---- Const ------------------------------------------------------------------------------------------
CONST = DEFS.define("Const", outputs=["output: dtype"], attrs=["value: tensor", "dtype: type"],
                    grad=NOT_DIFFERENTIABLE, outputs_borrowed=True, doc="A constant tensor; its value is an attr.")


@CONST.set_shape_fn
def _const_shape(op):
    return tensor_shape.TensorShape(op.get_attr("value").shape)


@CONST.set_constant_fn
def _const_value(op, index):
    return op.get_attr("value")


def constant_from_numpy(arr, name="Const"):
    return apply_op("Const", [], {"value": arr, "dtype": dtypes.as_dtype(arr.dtype)}, name=name)


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A constant. With ``shape``, a scalar or short list is repeated (its last element) to fill it."""
    arr = numpy_value(value, dtype)
    if shape is not None:
        shape = tensor_shape.as_shape(shape).as_list()
        n = int(np.prod(shape, dtype=np.int64))
        if verify_shape and list(arr.shape) != shape:
            raise TypeError(f"expected constant of shape {shape}, got shape {list(arr.shape)}")
        if arr.size == n:
            arr = arr.reshape(shape)
        elif arr.size == 1 or 0 < arr.size < n:
            flat = arr.reshape(-1)
            arr = np.concatenate([flat, np.repeat(flat[-1:], n - flat.size)]).reshape(shape)
        else:
            raise ValueError(f"constant value has {arr.size} elements, too many for shape {shape}")
    return constant_from_numpy(arr, name=name)


# ---- Placeholder ------------------------------------------------------------------------------------
PLACEHOLDER = DEFS.define("Placeholder", outputs=["output: dtype"], attrs=["dtype: type", "shape: shape"],
                          grad=NOT_DIFFERENTIABLE, is_placeholder=True, doc="A value that must be fed.")


@PLACEHOLDER.set_shape_fn
def _placeholder_shape(op):
    return op.get_attr("shape")


def placeholder(dtype, shape=None, name=None):
    """A tensor whose value must be fed (``feed_dict``). ``shape`` may have None dimensions."""
    return apply_op("Placeholder", [], {"dtype": dtypes.as_dtype(dtype),
                                        "shape": tensor_shape.TensorShape(shape)}, name=name or "Placeholder")


PLACEHOLDER_WITH_DEFAULT = DEFS.define(
    "PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape"], is_placeholder=True, doc="Passes its input through unless fed.")


@PLACEHOLDER_WITH_DEFAULT.set_shape_fn
def _pwd_shape(op):
    return op.get_attr("shape")


@PLACEHOLDER_WITH_DEFAULT.set_gradient
def _pwd_grad(op, grad):
    return [grad]


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's argument name
    value = convert_to_tensor(input)
    shape = tensor_shape.as_shape(shape)
    if not shape.is_compatible_with(value.shape):
        raise ValueError(f"default value of shape {value.shape} is not compatible with shape {shape}")
    return apply_op("PlaceholderWithDefault", [value], {"shape": shape}, name=name or "PlaceholderWithDefault")


# ---- Identity ---------------------------------------------------------------------------------------
IDENTITY = DEFS.define("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: any"],
                       shape_fn=common_shapes.unchanged_shape, is_pass_through=True, doc="Returns its input.")


@IDENTITY.set_gradient
def _identity_grad(op, grad):
    return [grad]


@IDENTITY.set_constant_fn
def _identity_value(op, index):
    return constant_value(op.inputs[0])


def identity(input, name=None):  # noqa: A002
    """``input`` passed through an Identity op; a SparseTensor part by part, as TF does."""
    if isinstance(input, SparseTensor):
        return SparseTensor(*(identity(part) for part in (input.indices, input.values, input.dense_shape)),
                            static_shape=input.get_shape())
    return apply_op("Identity", [input], name=name or "Identity")


IDENTITY_N = DEFS.define("IdentityN", inputs=["input: T"], outputs=["output: T"], attrs=["T: list(any)"],
                         is_pass_through=True, doc="Returns its list of inputs, in one op.")


@IDENTITY_N.set_shape_fn
def _identity_n_shape(op):
    return [t.shape for t in op.inputs]


@IDENTITY_N.set_gradient
def _identity_n_grad(op, *grads):
    return list(grads)


def identity_n(input, name=None):  # noqa: A002
    """Each tensor of the list ``input`` passed through one IdentityN op."""
    return apply_op("IdentityN", [list(input)], name=name or "IdentityN")


SNAPSHOT = DEFS.define("Snapshot", inputs=["input: T"], outputs=["output: T"], attrs=["T: any"],
                       shape_fn=common_shapes.unchanged_shape, doc="A copy of its input (not an alias of it).")
SNAPSHOT.set_gradient(lambda op, grad: [grad])


# ---- StopGradient, PreventGradient -------------------------------------------------------------------------------------
STOP_GRADIENT = DEFS.define("StopGradient", inputs=["input: T"], outputs=["output: T"], attrs=["T: any"],
                            shape_fn=common_shapes.unchanged_shape, grad=NOT_DIFFERENTIABLE, is_pass_through=True,
                            doc="Returns its input; gradients do not flow through it.")
PREVENT_GRADIENT = DEFS.define("PreventGradient", inputs=["input: T"], outputs=["output: T"],
                               attrs=["T: any", "message: string = ''"], shape_fn=common_shapes.unchanged_shape,
                               is_pass_through=True, doc="Returns its input; differentiating through it is an error.")

for _op_def in (STOP_GRADIENT, PREVENT_GRADIENT, SNAPSHOT):
    _op_def.set_constant_fn(_identity_value)


@PREVENT_GRADIENT.set_gradient
def _prevent_gradient_grad(op, grad):
    reason = op.get_attr("message") or "no reason given"
    raise LookupError(f"Gradient explicitly disabled for op {op.name!r} (PreventGradient), created at "
                      f"{op.where()}. Reason: {reason}")


def stop_gradient(input, name=None):  # noqa: A002
    """``input`` as a constant for differentiation: no gradient flows back through it."""
    return apply_op("StopGradient", [input], name=name or "StopGradient")


def prevent_gradient(input, message="", name=None):  # noqa: A002
    """``input``, with an error naming ``message`` if anything tries to differentiate through it."""
    return apply_op("PreventGradient", [input], {"message": message}, name=name or "PreventGradient")
