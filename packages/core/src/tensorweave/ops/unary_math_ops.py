"""Elementwise functions of one tensor (exp, log, sqrt, tanh, sigmoid, rounding…), their fused gradient ops, and Cast.

As in TF, sqrt, rsqrt, reciprocal, tanh and sigmoid differentiate through their *output* with one fused
gradient op each (``SqrtGrad(y, dy)`` …), so a backward step costs one kernel; those gradient ops have
gradients of their own, for second derivatives.
"""

from tensorweave import dtypes
from tensorweave.framework import common_shapes
from tensorweave.framework import graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import fill_ops, math_ops

DEFS = OpDefList()

__all__ = ["negative", "neg", "abs", "sign", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "square",
           "reciprocal", "tanh", "sigmoid", "sin", "cos", "floor", "ceil", "round", "rint", "conj", "is_finite", "is_nan",
           "is_inf", "cast", "saturate_cast", "to_float", "to_double", "to_int32", "to_int64",
           "to_complex64", "to_complex128"]

_SIGNED = "T: {floating, int8, int16, int32, int64, complex64, complex128}"
_INEXACT = "T: {floating, complex64, complex128}"


def _unary(op_type, py_name, type_attr, doc, grad=None, output="y: T"):
    """Defines an elementwise op ``y = f(x)`` and returns (OpDef, wrapper named ``py_name``)."""
    op_def = DEFS.define(op_type, inputs=["x: T"], outputs=[output], attrs=[type_attr],
                         shape_fn=common_shapes.unchanged_shape, grad=grad, is_elementwise=True, doc=doc)

    def wrapper(x, name=None):
        return apply_op(op_type, [x], name=name or op_type)

    wrapper.__name__ = wrapper.__qualname__ = py_name
    wrapper.__doc__ = doc
    return op_def, wrapper


NEG, negative = _unary("Neg", "negative", _SIGNED, "-x.")
ABS, abs = _unary("Abs", "abs", "T: {floating, int8, int16, int32, int64}", "|x| for real x.")  # noqa: A001
SIGN, sign = _unary("Sign", "sign", _SIGNED, "-1, 0 or 1 by the sign of x (x / |x| for complex x).")
EXP, exp = _unary("Exp", "exp", _INEXACT, "e ** x.")
EXPM1, expm1 = _unary("Expm1", "expm1", _INEXACT, "e ** x - 1, accurate near 0.")
LOG, log = _unary("Log", "log", _INEXACT, "The natural logarithm (-inf at 0, nan below).")
LOG1P, log1p = _unary("Log1p", "log1p", _INEXACT, "log(1 + x), accurate near 0.")
SQRT, sqrt = _unary("Sqrt", "sqrt", _INEXACT, "x ** 0.5.")
RSQRT, rsqrt = _unary("Rsqrt", "rsqrt", _INEXACT, "1 / sqrt(x).")
SQUARE, square = _unary("Square", "square", "T: numeric", "x * x.")
RECIPROCAL, reciprocal = _unary("Reciprocal", "reciprocal", _INEXACT, "1 / x.")
TANH, tanh = _unary("Tanh", "tanh", _INEXACT, "The hyperbolic tangent.")
SIGMOID, sigmoid = _unary("Sigmoid", "sigmoid", _INEXACT, "1 / (1 + exp(-x)), computed without overflow.")
SIN, sin = _unary("Sin", "sin", _INEXACT, "The sine.")
COS, cos = _unary("Cos", "cos", _INEXACT, "The cosine.")
FLOOR, floor = _unary("Floor", "floor", "T: floating", "The largest integer not above x.", grad=NOT_DIFFERENTIABLE)
CEIL, ceil = _unary("Ceil", "ceil", "T: floating", "The smallest integer not below x.", grad=NOT_DIFFERENTIABLE)
ROUND, _round = _unary("Round", "round", "T: floating", "x rounded to the nearest integer, half to even.",
                       grad=NOT_DIFFERENTIABLE)
RINT, rint = _unary("Rint", "rint", "T: floating", "x rounded to the nearest integer, half to even.",
                   grad=NOT_DIFFERENTIABLE)
CONJ, _conj = _unary("Conj", "conj", "T: {complex64, complex128}", "The complex conjugate.")
IS_FINITE, is_finite = _unary("IsFinite", "is_finite", "T: floating", "True where x is neither inf nor nan.",
                              grad=NOT_DIFFERENTIABLE, output="y: bool")
IS_NAN, is_nan = _unary("IsNan", "is_nan", "T: floating", "True where x is nan.", grad=NOT_DIFFERENTIABLE,
                        output="y: bool")
IS_INF, is_inf = _unary("IsInf", "is_inf", "T: floating", "True where x is +inf or -inf.", grad=NOT_DIFFERENTIABLE,
                        output="y: bool")
neg = negative


def round(x, name=None):  # noqa: A001 - TF's public name
    """Rounds half to even (banker's rounding), as TF; integer tensors are returned as they are."""
    x = convert_to_tensor(x, name="x")
    return x if x.dtype.is_integer else _round(x, name=name)


def conj(x, name=None):
    """The complex conjugate; real tensors are returned as they are (TF1 does the same)."""
    x = convert_to_tensor(x, name="x")
    return _conj(x, name=name) if x.dtype.is_complex else x


def _c(t):
    """conj(t) for complex tensors (TF's gradients conjugate), t itself otherwise."""
    return _conj(t) if t.dtype.is_complex else t


NEG.set_gradient(lambda op, grad: [negative(grad)])
ABS.set_gradient(lambda op, grad: [grad * sign(op.inputs[0])])
EXP.set_gradient(lambda op, grad: [grad * _c(op.outputs[0])])
EXPM1.set_gradient(lambda op, grad: [grad * _c(exp(op.inputs[0]))])
LOG.set_gradient(lambda op, grad: [grad * reciprocal(_c(op.inputs[0]))])
LOG1P.set_gradient(lambda op, grad: [grad * reciprocal(1 + _c(op.inputs[0]))])
SQUARE.set_gradient(lambda op, grad: [grad * (2 * _c(op.inputs[0]))])
SIN.set_gradient(lambda op, grad: [grad * cos(_c(op.inputs[0]))])
COS.set_gradient(lambda op, grad: [negative(grad) * sin(_c(op.inputs[0]))])
CONJ.set_gradient(lambda op, grad: [_conj(grad)])


@SIGN.set_gradient
def _sign_grad(op, grad):
    return [fill_ops.zeros_like(op.inputs[0])]


# ---- functions differentiated through their output, with fused gradient ops -----------------------------------
def _output_grad_op(forward, doc):
    """Defines ``<forward>Grad(y, dy)`` and makes it the gradient of ``forward`` (fed the forward output)."""
    grad_op = DEFS.define(f"{forward.name}Grad", inputs=["y: T", "dy: T"], outputs=["z: T"], attrs=[_INEXACT],
                          shape_fn=common_shapes.unchanged_shape, is_elementwise=True, doc=doc)
    forward.set_gradient(lambda op, grad: [apply_op(grad_op.name, [op.outputs[0], grad], name=grad_op.name)])
    return grad_op


SQRT_GRAD = _output_grad_op(SQRT, "dy * 0.5 / y for y = sqrt(x).")
RSQRT_GRAD = _output_grad_op(RSQRT, "dy * -0.5 * y ** 3 for y = rsqrt(x).")
RECIPROCAL_GRAD = _output_grad_op(RECIPROCAL, "-dy * y ** 2 for y = 1 / x.")
TANH_GRAD = _output_grad_op(TANH, "dy * (1 - y ** 2) for y = tanh(x).")
SIGMOID_GRAD = _output_grad_op(SIGMOID, "dy * y * (1 - y) for y = sigmoid(x).")


def _grad_op(op_type, y, dy):
    return apply_op(op_type, [y, dy], name=op_type)


@SQRT_GRAD.set_gradient
def _sqrt_grad_grad(op, grad):
    y = op.inputs[0]
    scaled = grad / _c(y)
    return [negative(_c(scaled)) * op.outputs[0], 0.5 * scaled]


@RSQRT_GRAD.set_gradient
def _rsqrt_grad_grad(op, grad):
    y, dy = (_c(t) for t in op.inputs)
    return [-1.5 * _c(grad) * dy * square(y), _grad_op("RsqrtGrad", y, grad)]


@RECIPROCAL_GRAD.set_gradient
def _reciprocal_grad_grad(op, grad):
    y, dy = (_c(t) for t in op.inputs)
    return [-2 * _c(grad) * dy * y, _grad_op("ReciprocalGrad", y, grad)]


@TANH_GRAD.set_gradient
def _tanh_grad_grad(op, grad):
    y, dy = (_c(t) for t in op.inputs)
    return [-2 * grad * dy * y, _grad_op("TanhGrad", y, grad)]


@SIGMOID_GRAD.set_gradient
def _sigmoid_grad_grad(op, grad):
    y, dy = (_c(t) for t in op.inputs)
    return [grad * dy * (1 - 2 * y), _grad_op("SigmoidGrad", y, grad)]


# ---- Cast ------------------------------------------------------------------------------------------------------------
_CASTABLE = "{numeric, bool}"
CAST = DEFS.define("Cast", inputs=["x: SrcT"], outputs=["y: DstT"],
                   attrs=[f"SrcT: {_CASTABLE}", f"DstT: {_CASTABLE}", "Truncate: bool = False"],
                   shape_fn=common_shapes.unchanged_shape, is_elementwise=True,
                   doc="x converted to DstT (floats to integers truncate toward zero; nonzero becomes True).")


@CAST.set_gradient
def _cast_grad(op, grad):
    """The gradient passes between floating (and complex) types, cast back; integer and bool casts stop it."""
    src, dst = op.get_attr("SrcT"), op.get_attr("DstT")
    passes = (src.is_floating or src.is_complex) and (dst.is_floating or dst.is_complex)
    return [cast(grad, src) if passes else None]


@CAST.set_constant_fn
def _cast_value(op, index):
    value = constant_value(op.inputs[0])
    return None if value is None else value.astype(op.get_attr("DstT").as_numpy_dtype)


def cast(x, dtype, name=None):
    """x as ``dtype``; a tensor already of that dtype is returned as it is. IndexedSlices keep their indices."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, IndexedSlices):
        return IndexedSlices(cast(x.values, dtype, name=name), x.indices, x.dense_shape)
    x = convert_to_tensor(x, name="x")
    if x.dtype == dtype:
        return x
    return apply_op("Cast", [x], {"DstT": dtype}, name=name or "Cast")


def saturate_cast(value, dtype, name=None):
    """``value`` clamped to ``dtype``'s range, then cast (TF's saturate_cast: no wrap-around on overflow)."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    with graph_mod.name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        if value.dtype.min < dtype.min:
            value = math_ops.maximum(value, convert_to_tensor(dtype.min, dtype=value.dtype, name="min"))
        if value.dtype.max > dtype.max:
            value = math_ops.minimum(value, convert_to_tensor(dtype.max, dtype=value.dtype, name="max"))
        return cast(value, dtype, name=scope)


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def to_complex64(x, name="ToComplex64"):
    return cast(x, dtypes.complex64, name=name)


def to_complex128(x, name="ToComplex128"):
    return cast(x, dtypes.complex128, name=name)


__all__ += ["to_bfloat16"]


def to_bfloat16(x, name="ToBFloat16"):
    return cast(x, dtypes.bfloat16, name=name)
