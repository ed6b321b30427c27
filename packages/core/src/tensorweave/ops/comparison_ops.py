"""Comparisons, logical ops and selection: less … not_equal, logical_and/or/not/xor, where/select, clip_by_value."""

from tensorweave.framework import common_shapes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import broadcast_gradient_ops, fill_ops, math_ops

DEFS = OpDefList()

__all__ = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and", "logical_or",
           "logical_not", "logical_xor", "where", "where_v2", "select", "clip_by_value"]


def _compare(op_type, py_name, type_attr, doc, inputs=("x: T", "y: T"), attrs=None):
    """Defines a broadcasting op with a bool result (no gradient) and returns (OpDef, wrapper)."""
    attrs = [type_attr] if attrs is None else attrs
    op_def = DEFS.define(op_type, inputs=list(inputs), outputs=["z: bool"], attrs=attrs,
                         shape_fn=common_shapes.broadcast_binary_shape, grad=NOT_DIFFERENTIABLE, is_elementwise=True,
                         doc=doc)

    def wrapper(x, y, name=None):
        return apply_op(op_type, [x, y], name=name or op_type)

    wrapper.__name__ = wrapper.__qualname__ = py_name
    wrapper.__doc__ = f"{doc} Broadcasts like numpy."
    return op_def, wrapper


_EQUALITY = "T: {numeric, bool, string}"
LESS, less = _compare("Less", "less", "T: real", "x < y.")
LESS_EQUAL, less_equal = _compare("LessEqual", "less_equal", "T: real", "x <= y.")
GREATER, greater = _compare("Greater", "greater", "T: real", "x > y.")
GREATER_EQUAL, greater_equal = _compare("GreaterEqual", "greater_equal", "T: real", "x >= y.")
EQUAL, equal = _compare("Equal", "equal", _EQUALITY, "x == y.")
NOT_EQUAL, not_equal = _compare("NotEqual", "not_equal", _EQUALITY, "x != y.")
LOGICAL_AND, logical_and = _compare("LogicalAnd", "logical_and", None, "x AND y.", ("x: bool", "y: bool"), [])
LOGICAL_OR, logical_or = _compare("LogicalOr", "logical_or", None, "x OR y.", ("x: bool", "y: bool"), [])
LOGICAL_NOT = DEFS.define("LogicalNot", inputs=["x: bool"], outputs=["y: bool"], shape_fn=common_shapes.unchanged_shape,
                          grad=NOT_DIFFERENTIABLE, is_elementwise=True, doc="NOT x.")


def logical_not(x, name=None):
    """NOT x for a bool tensor."""
    return apply_op("LogicalNot", [x], name=name or "LogicalNot")


def logical_xor(x, y, name="LogicalXor"):
    """x XOR y for bool tensors (one NotEqual op)."""
    return apply_op("NotEqual", [x, y], {"T": "bool"}, name=name)


# ---- Select (TF1's where) and SelectV2 (broadcasting) ---------------------------------------------------------------
SELECT = DEFS.define("Select", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"], attrs=["T: any"],
                     is_elementwise=True, broadcast_inputs=(1, 2),
                     doc="t where condition, else e; condition has t's shape, is a scalar, or a vector over t's rows.")
SELECT_V2 = DEFS.define("SelectV2", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
                        attrs=["T: any"], is_elementwise=True,
                        doc="t where condition, else e, all three broadcasting like numpy.")


@SELECT.set_shape_fn
def _select_shape(op):
    condition, t, e = (x.shape for x in op.inputs)
    if not t.is_compatible_with(e):
        raise ValueError(f"the two value inputs of select must have one shape, got {t} and {e} "
                         f"(use tf.where_v2 to broadcast them)")
    shape = t.merge_with(e)
    if condition.ndims in (None, 0) or shape.ndims is None:
        return shape
    if condition.ndims == 1 and shape.ndims > 1:
        if not condition[0].is_compatible_with(shape[0]):
            raise ValueError(f"a vector condition of select must have one entry per row of the values: "
                             f"{condition} vs {shape}")
        return shape
    if not condition.is_compatible_with(shape):
        raise ValueError(f"the condition of select must be a scalar, a vector over the rows, or of the values' "
                         f"shape: {condition} vs {shape}")
    return shape.merge_with(condition)


@SELECT_V2.set_shape_fn
def _select_v2_shape(op):
    condition, t, e = (x.shape for x in op.inputs)
    return common_shapes.broadcast_shapes(common_shapes.broadcast_shapes(condition, t), e)


@SELECT.set_gradient
def _select_grad(op, grad):
    condition, t, _ = op.inputs
    zeros = fill_ops.zeros_like(t)
    return [None, select(condition, grad, zeros), select(condition, zeros, grad)]


@SELECT_V2.set_gradient
def _select_v2_grad(op, grad):
    condition, t, e = op.inputs
    return [None, broadcast_gradient_ops.unbroadcast(where_v2(condition, grad, 0), t, condition, e),
            broadcast_gradient_ops.unbroadcast(where_v2(condition, 0, grad), e, condition, t)]


def select(condition, x, y, name=None):
    """TF1's Select: x where condition, else y (x and y of one shape)."""
    return apply_op("Select", [condition, x, y], name=name or "Select")


def _where(op_type, condition, x, y, name):
    if x is None and y is None:
        return apply_op("Where", [condition], name=name or "Where")
    if x is None or y is None:
        raise ValueError("where: x and y must both be given (to select) or both be None (to get the coordinates "
                         "of true entries)")
    return apply_op(op_type, [condition, x, y], name=name or op_type)


def where(condition, x=None, y=None, name=None):
    """TF1's where: elements of x where condition, else of y (Select: a scalar, row-vector or same-shape
    condition). With only ``condition``, the int64 coordinates of its true entries."""
    return _where("Select", condition, x, y, name)


def where_v2(condition, x=None, y=None, name=None):
    """Like ``where``, but condition, x and y broadcast against each other (SelectV2)."""
    return _where("SelectV2", condition, x, y, name)


# ---- ClipByValue ----------------------------------------------------------------------------------------------------
CLIP_BY_VALUE = DEFS.define("ClipByValue", inputs=["t: T", "clip_value_min: T", "clip_value_max: T"],
                            outputs=["output: T"], attrs=["T: real"], is_elementwise=True, broadcast_inputs=(0,),
                            doc="min(max(t, clip_value_min), clip_value_max) elementwise; the bounds broadcast to t.")


@CLIP_BY_VALUE.set_shape_fn
def _clip_by_value_shape(op):
    t, low, high = (x.shape for x in op.inputs)
    for name, bound in (("clip_value_min", low), ("clip_value_max", high)):
        if t.ndims is not None and bound.ndims is not None and (
                bound.ndims > t.ndims or not common_shapes.broadcast_shapes(t, bound).is_compatible_with(t)):
            raise ValueError(f"{name} of shape {bound} does not broadcast to the clipped tensor's shape {t}; "
                             f"give a scalar or a tensor of that shape")
    return t


@CLIP_BY_VALUE.set_gradient
def _clip_by_value_grad(op, grad):
    """The gradient of TF's own composition maximum(minimum(t, max), min): ties go to t, and a NaN in t
    sends its gradient to clip_value_min (minimum and maximum give it to their other argument)."""
    t, low, high = op.inputs
    under_high = less_equal(t, high)
    over_low = greater_equal(math_ops.minimum(t, high), low)
    return [where_v2(logical_and(under_high, over_low), grad, 0),
            broadcast_gradient_ops.unbroadcast(where_v2(over_low, 0, grad), low, t, high),
            broadcast_gradient_ops.unbroadcast(where_v2(logical_and(logical_not(under_high), over_low), grad, 0),
                                               high, t, low)]


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clips t to [clip_value_min, clip_value_max] (scalars or tensors that broadcast to t).

    An IndexedSlices is clipped in its values and stays sparse.
    """
    values = convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name="t")
    clipped = apply_op("ClipByValue", [values, clip_value_min, clip_value_max], name=name or "clip_by_value")
    if isinstance(t, IndexedSlices):
        return IndexedSlices(clipped, t.indices, t.dense_shape)
    return clipped
