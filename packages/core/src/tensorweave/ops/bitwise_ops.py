"""Bit-level ops: ``tf.bitwise``'s elementwise AND, OR, XOR, NOT and shifts of integer tensors, and ``tf.bitcast``
(the same bytes read as another type). None is differentiable, as in TF."""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList

DEFS = OpDefList()

__all__ = ["bitcast"]  # the tf.bitwise names are tf.bitwise's only
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]

_INTEGERS = "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64}"


def _binary(op_type, py_name, doc, commutative=True):
    DEFS.define(op_type, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[_INTEGERS],
                shape_fn=common_shapes.broadcast_binary_shape, grad=NOT_DIFFERENTIABLE, is_commutative=commutative,
                is_elementwise=True, doc=doc)

    def wrapper(x, y, name=None):
        return apply_op(op_type, [x, y], name=name or op_type)

    wrapper.__name__ = wrapper.__qualname__ = py_name
    wrapper.__doc__ = f"{doc} Broadcasts like numpy; x and y have one integer dtype."
    return wrapper


bitwise_and = _binary("BitwiseAnd", "bitwise_and", "x & y.")
bitwise_or = _binary("BitwiseOr", "bitwise_or", "x | y.")
bitwise_xor = _binary("BitwiseXor", "bitwise_xor", "x ^ y.")
left_shift = _binary("LeftShift", "left_shift", "x << y, with y clamped to [0, bits - 1] (TF's kernel).",
                     commutative=False)
right_shift = _binary("RightShift", "right_shift", "x >> y (arithmetic for signed x), with y clamped to "
                      "[0, bits - 1] (TF's kernel).", commutative=False)
DEFS.define("Invert", inputs=["x: T"], outputs=["y: T"], attrs=[_INTEGERS], shape_fn=common_shapes.unchanged_shape,
            grad=NOT_DIFFERENTIABLE, is_elementwise=True, doc="~x: every bit flipped.")


def invert(x, name=None):
    """~x: every bit flipped."""
    return apply_op("Invert", [x], name=name or "Invert")


_BITCASTABLE = "{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, int16, complex64, " \
    "complex128}"
BITCAST = DEFS.define("Bitcast", inputs=["input: T"], outputs=["output: type"],
                      attrs=[f"T: {_BITCASTABLE}", f"type: {_BITCASTABLE}"], grad=NOT_DIFFERENTIABLE,
                      doc="The input's bytes as ``type``: a wider type consumes the last dimension (which must be "
                          "the size ratio), a narrower one adds it.")


@BITCAST.set_shape_fn
def _bitcast_shape(op):
    shape = op.inputs[0].shape
    size_in, size_out = op.inputs[0].dtype.size, op.get_attr("type").size
    if size_in == size_out or shape.ndims is None:
        return shape if size_in == size_out else tensor_shape.TensorShape(None)
    if size_in > size_out:
        return shape.concatenate([size_in // size_out])
    if shape.ndims == 0 or shape.dims[-1].value not in (None, size_out // size_in):
        raise ValueError(f"bitcast: bitcasting {op.inputs[0].dtype.name} to {op.get_attr('type').name} needs a "
                         f"last dimension of {size_out // size_in}, got shape {shape}")
    return shape[:-1]


def bitcast(input, type, name=None):  # noqa: A002 - TF's argument names
    """The bytes of ``input`` read as ``type``, without copying values (tf.bitcast)."""
    return apply_op("Bitcast", [input], {"type": dtypes.as_dtype(type)}, name=name or "Bitcast")
