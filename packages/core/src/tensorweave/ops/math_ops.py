"""Math ops: elementwise binary arithmetic with broadcasting, division in TF1's flavours, and AddN.

The rest of TF1's math lives beside it: unary functions (unary_math_ops), comparisons and selection
(comparison_ops), reductions, cumulative sums, matmul, segment sums and range. Every broadcasting gradient
sums back to its input's shape with ``broadcast_gradient_ops.unbroadcast``.
"""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.ops import broadcast_gradient_ops, comparison_ops, unary_math_ops
from tensorweave.ops.array_ops import identity

DEFS = OpDefList()

__all__ = ["add", "subtract", "sub", "multiply", "mul", "scalar_mul", "divide", "truediv", "realdiv", "div",
        "div_no_nan", "divide_no_nan", "floordiv", "floor_div", "floormod", "mod", "truncatediv", "truncatemod", "pow",
        "maximum", "minimum", "squared_difference", "atan2", "add_n", "accumulate_n"]

_WITH_STRING = "T: {numeric, string}"
_NUMERIC = "T: numeric"
_REAL = "T: real"
_INEXACT = "T: {floating, complex64, complex128}"
_POWERS = "T: {floating, int32, int64, complex64, complex128}"


def _conj(t):
    """conj(t) for complex tensors, t itself otherwise (TF's gradients conjugate for complex inputs)."""
    return unary_math_ops.conj(t) if t.dtype.is_complex else t


def _binary(op_type, py_name, type_attr, doc, grad=None, commutative=False):
    """Defines a broadcasting elementwise op ``z = f(x, y)`` and returns (OpDef, wrapper named ``py_name``)."""
    op_def = DEFS.define(op_type, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[type_attr],
                         shape_fn=common_shapes.broadcast_binary_shape, grad=grad, is_commutative=commutative,
                         is_elementwise=True, doc=doc)

    def wrapper(x, y, name=None):
        return apply_op(op_type, [x, y], name=name or op_type)

    wrapper.__name__ = wrapper.__qualname__ = py_name
    wrapper.__doc__ = f"{doc} Broadcasts like numpy; x and y have one dtype."
    return op_def, wrapper


ADD, add = _binary("Add", "add", _WITH_STRING, "x + y (strings concatenate).", commutative=True)
SUB, subtract = _binary("Sub", "subtract", _NUMERIC, "x - y.")
MUL, multiply = _binary("Mul", "multiply", _NUMERIC, "x * y.", commutative=True)
REAL_DIV, realdiv = _binary("RealDiv", "realdiv", _INEXACT, "x / y for floating and complex types.")
DIV_NO_NAN, div_no_nan = _binary("DivNoNan", "div_no_nan", _INEXACT, "x / y, but 0 wherever y is 0.")
FLOOR_DIV, floordiv = _binary("FloorDiv", "floordiv", _REAL, "floor(x / y), rounding toward -inf.",
                              grad=NOT_DIFFERENTIABLE)
FLOOR_MOD, floormod = _binary("FloorMod", "floormod", _REAL, "x - floor(x / y) * y: the remainder has y's sign.")
TRUNCATE_DIV, truncatediv = _binary("TruncateDiv", "truncatediv", _REAL, "x / y rounded toward zero (C semantics).",
                                    grad=NOT_DIFFERENTIABLE)
TRUNCATE_MOD, truncatemod = _binary("TruncateMod", "truncatemod", _REAL, "The C remainder: it has x's sign.")
POW, pow = _binary("Pow", "pow", _POWERS, "x ** y (integers to negative powers are an error).")  # noqa: A001
MAXIMUM, maximum = _binary("Maximum", "maximum", _REAL, "max(x, y).", commutative=True)
MINIMUM, minimum = _binary("Minimum", "minimum", _REAL, "min(x, y).", commutative=True)
SQUARED_DIFFERENCE, squared_difference = _binary("SquaredDifference", "squared_difference", _POWERS,
                                                 "(x - y) ** 2.", commutative=True)
ATAN2, _atan2 = _binary("Atan2", "atan2", "T: floating", "The angle of the point (x, y) in (-pi, pi]; arguments y, x.")

sub, mul, floor_div, mod, divide_no_nan = subtract, multiply, floordiv, floormod, div_no_nan


def _to_inputs(op, grad_x, grad_y):
    """Gradients for the broadcast output of ``op``, summed back to the shapes of x and y."""
    x, y = op.inputs
    return [broadcast_gradient_ops.unbroadcast(grad_x, x, y), broadcast_gradient_ops.unbroadcast(grad_y, y, x)]


ADD.set_gradient(lambda op, grad: _to_inputs(op, grad, grad))
SUB.set_gradient(lambda op, grad: _to_inputs(op, grad, unary_math_ops.negative(grad)))


@MUL.set_gradient
def _mul_grad(op, grad):
    x, y = op.inputs
    return _to_inputs(op, grad * _conj(y), _conj(x) * grad)


@REAL_DIV.set_gradient
def _real_div_grad(op, grad):
    x, y = op.inputs
    return _to_inputs(op, realdiv(grad, _conj(y)), grad * _conj(realdiv(realdiv(unary_math_ops.negative(x), y), y)))


@DIV_NO_NAN.set_gradient
def _div_no_nan_grad(op, grad):
    x, y = op.inputs
    return _to_inputs(op, div_no_nan(grad, _conj(y)),
                      grad * _conj(div_no_nan(div_no_nan(unary_math_ops.negative(x), y), y)))


def _mod_grad(quotient):
    """x mod y = x - q(x, y) * y with q piecewise constant: d/dx = 1, d/dy = -q."""
    def grad_fn(op, grad):
        x, y = op.inputs
        return _to_inputs(op, grad, grad * unary_math_ops.negative(quotient(x, y)))
    return grad_fn


FLOOR_MOD.set_gradient(_mod_grad(floordiv))
TRUNCATE_MOD.set_gradient(_mod_grad(truncatediv))


@POW.set_gradient
def _pow_grad(op, grad):
    """TF's rule: d/dy uses log(x) only where x > 0 (x != 0 for complex), and 0 elsewhere."""
    x, y = op.inputs
    z = op.outputs[0]
    positive = comparison_ops.not_equal(x, 0) if x.dtype.is_complex else comparison_ops.greater(x, 0)
    safe_x = comparison_ops.where_v2(positive, x, 1)
    log_x = comparison_ops.where_v2(positive, unary_math_ops.log(safe_x), 0)
    return _to_inputs(op, grad * _conj(y * pow(x, y - 1)), grad * _conj(z * log_x))


def _min_max_grad(x_wins_where):
    """Ties go to x, as in TF: x gets the gradient where ``x_wins_where(x, y)`` holds, y elsewhere."""
    def grad_fn(op, grad):
        x_wins = x_wins_where(*op.inputs)
        return _to_inputs(op, comparison_ops.where_v2(x_wins, grad, 0), comparison_ops.where_v2(x_wins, 0, grad))
    return grad_fn


MAXIMUM.set_gradient(_min_max_grad(lambda x, y: comparison_ops.greater_equal(x, y)))
MINIMUM.set_gradient(_min_max_grad(lambda x, y: comparison_ops.less_equal(x, y)))


@SQUARED_DIFFERENCE.set_gradient
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    scaled = (2 * grad) * _conj(x - y)
    return _to_inputs(op, scaled, unary_math_ops.negative(scaled))


@ATAN2.set_gradient
def _atan2_grad(op, grad):
    """d/dy atan2(y, x) = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)."""
    y, x = op.inputs
    scale = realdiv(grad, x * x + y * y)
    return _to_inputs(op, scale * x, unary_math_ops.negative(scale * y))


def atan2(y, x, name=None):
    """The angle of the point (x, y) in (-pi, pi], elementwise with broadcasting."""
    return apply_op("Atan2", [y, x], name=name or "Atan2")


# ---- division as TF1's Python functions spell it ----------------------------------------------------------------
_TRUEDIV_TYPES = {dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32, dtypes.uint8: dtypes.float32,
                  dtypes.uint16: dtypes.float32, dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64,
                  dtypes.uint32: dtypes.float64, dtypes.uint64: dtypes.float64}


def as_same_dtype_tensors(x, y):
    """Both operands as tensors of one dtype: a Python value takes the dtype of the tensor beside it."""
    if is_tensor_like(x):
        x = convert_to_tensor(x, name="x")
        return x, convert_to_tensor(y, dtype=None if is_tensor_like(y) else x.dtype, name="y")
    if is_tensor_like(y):
        y = convert_to_tensor(y, name="y")
        return convert_to_tensor(x, dtype=y.dtype, name="x"), y
    x = convert_to_tensor(x, name="x")
    return x, convert_to_tensor(y, dtype=x.dtype, name="y")


def truediv(x, y, name=None):
    """x / y in Python 3's sense: integers become float32 (8/16-bit) or float64 (32/64-bit) first."""
    x, y = as_same_dtype_tensors(x, y)
    if x.dtype != y.dtype:
        raise TypeError(f"truediv: x and y must have the same dtype, got {x.dtype.name} != {y.dtype.name}; "
                        f"use tf.cast to convert one of them")
    as_float = _TRUEDIV_TYPES.get(x.dtype)
    if as_float is not None:
        x, y = unary_math_ops.cast(x, as_float), unary_math_ops.cast(y, as_float)
    return realdiv(x, y, name=name or "truediv")


divide = truediv


def div(x, y, name=None):
    """x / y with Python 2's semantics: floor division for integers, real division otherwise."""
    x, y = as_same_dtype_tensors(x, y)
    if x.dtype.is_floating or x.dtype.is_complex:
        return realdiv(x, y, name=name or "div")
    return floordiv(x, y, name=name or "div")


def scalar_mul(scalar, x, name=None):
    """scalar * x for a scalar; an IndexedSlices stays sparse (only its values are scaled)."""
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype if hasattr(x, "dtype") else None, name="scalar")
    if scalar.shape.ndims not in (0, None):
        raise ValueError(f"scalar_mul: the scalar must be 0-D, got shape {scalar.shape}")
    if isinstance(x, IndexedSlices):
        return IndexedSlices(multiply(scalar, x.values, name=name), x.indices, x.dense_shape)
    return multiply(scalar, x, name=name)


# ---- AddN ----------------------------------------------------------------------------------------------------------
ADD_N = DEFS.define("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
                    attrs=["N: int >= 1", "T: {numeric, variant}"], is_commutative=True, is_elementwise=True,
                    doc="The sum of N tensors of one shape (used to sum gradient paths).")


@ADD_N.set_shape_fn
def _add_n_shape(op):
    shape = tensor_shape.TensorShape(None)
    for t in op.inputs:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"AddN inputs must all have one shape: {shape} and {t.shape} differ "
                             f"(AddN does not broadcast; use tf.add)")
        shape = shape.merge_with(t.shape)
    return shape


@ADD_N.set_gradient
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


def add_n(inputs, name=None):
    """The elementwise sum of a list of tensors of one shape and dtype (IndexedSlices are made dense)."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("add_n: inputs must be a non-empty list of tensors of one shape and dtype, "
                         f"got {inputs!r}")
    inputs = [convert_to_tensor(t) for t in inputs]
    if len(inputs) == 1:
        if name:
            return identity(inputs[0], name=name)
        return inputs[0]
    return apply_op("AddN", [inputs], name=name or "AddN")


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """The sum of ``inputs`` (TF1's accumulate_n; here the same AddN, which already sums in one pass)."""
    result = add_n(inputs, name=name)
    if shape is not None:
        result.set_shape(shape)
    if tensor_dtype is not None and result.dtype != dtypes.as_dtype(tensor_dtype):
        raise TypeError(f"accumulate_n: inputs have dtype {result.dtype.name}, tensor_dtype says "
                        f"{dtypes.as_dtype(tensor_dtype).name}")
    return result
