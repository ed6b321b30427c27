"""Special functions: Lgamma, Digamma, Polygamma, Erf, Erfc, the scaled Bessel functions BesselI0e/BesselI1e, Xdivy
and Xlogy (elementwise, with TF's gradients), and lbeta, log_sigmoid, bessel_i0/i1, which TF builds from other ops."""

import math

import numpy as np

from tensorweave.framework import common_shapes, graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import broadcast_gradient_ops, comparison_ops, fill_ops, math_ops, nn_ops, reduction_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["lgamma", "digamma", "polygamma", "erf", "erfc", "lbeta", "log_sigmoid", "bessel_i0e", "bessel_i1e",
           "bessel_i0", "bessel_i1", "xdivy", "xlogy", "polyval", "igamma", "igammac",
           "betainc", "zeta", "multiply_no_nan", "reciprocal_no_nan"]

_FLOATING = "T: {float16, float32, float64}"


def _unary(op_type, py_name, doc):
    op_def = DEFS.define(op_type, inputs=["x: T"], outputs=["y: T"], attrs=[_FLOATING],
                         shape_fn=common_shapes.unchanged_shape, is_elementwise=True, doc=doc)

    def wrapper(x, name=None):
        return apply_op(op_type, [x], name=name or op_type)

    wrapper.__name__ = wrapper.__qualname__ = py_name
    wrapper.__doc__ = doc
    return op_def, wrapper


LGAMMA, lgamma = _unary("Lgamma", "lgamma", "log|Gamma(x)|.")
DIGAMMA, digamma = _unary("Digamma", "digamma", "Psi(x) = d/dx log Gamma(x).")
ERF, erf = _unary("Erf", "erf", "The error function 2/sqrt(pi) * integral of exp(-t^2) from 0 to x.")
ERFC, erfc = _unary("Erfc", "erfc", "1 - erf(x), accurate where erf(x) is near 1.")
BESSEL_I0E, bessel_i0e = _unary("BesselI0e", "bessel_i0e", "exp(-|x|) * I0(x), the exponentially scaled Bessel "
                                "function of order 0.")
BESSEL_I1E, bessel_i1e = _unary("BesselI1e", "bessel_i1e", "exp(-|x|) * I1(x), the exponentially scaled Bessel "
                                "function of order 1.")
POLYGAMMA = DEFS.define("Polygamma", inputs=["a: T", "x: T"], outputs=["z: T"], attrs=["T: {float32, float64}"],
                        shape_fn=common_shapes.broadcast_binary_shape, is_elementwise=True,
                        doc="psi^(a)(x), the a-th derivative of digamma (a a non-negative integer value).")

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

LGAMMA.set_gradient(lambda op, grad: [grad * digamma(op.inputs[0])])
DIGAMMA.set_gradient(lambda op, grad: [grad * polygamma(convert_to_tensor(1, op.inputs[0].dtype), op.inputs[0])])
ERF.set_gradient(lambda op, grad: [grad * (_TWO_OVER_SQRT_PI * unary_math_ops.exp(-unary_math_ops.square(
    op.inputs[0])))])
ERFC.set_gradient(lambda op, grad: [grad * (-_TWO_OVER_SQRT_PI * unary_math_ops.exp(-unary_math_ops.square(
    op.inputs[0])))])


@POLYGAMMA.set_gradient
def _polygamma_grad(op, grad):
    """Only x gets a gradient (TF gives a none: the order is an integer)."""
    a, x = op.inputs
    return [None, broadcast_gradient_ops.unbroadcast(grad * polygamma(a + 1, x), x, a)]


def polygamma(a, x, name=None):
    """The a-th derivative of digamma at x (a and x broadcast; a holds non-negative integer values)."""
    return apply_op("Polygamma", [a, x], name=name or "Polygamma")


def lbeta(x, name=None):
    """log(|Beta(x)|) over the last axis: sum(lgamma(x)) - lgamma(sum(x)) (0 for an empty last axis)."""
    with graph_mod.name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x, name="x")
        return reduction_ops.reduce_sum(lgamma(x), -1) - lgamma(reduction_ops.reduce_sum(x, -1))


def log_sigmoid(x, name=None):
    """log(1 / (1 + exp(-x))) = -softplus(-x), without overflow."""
    with graph_mod.name_scope(name, "LogSigmoid", [x]):
        x = convert_to_tensor(x, name="x")
        return unary_math_ops.negative(nn_ops.softplus(unary_math_ops.negative(x)))


# ---- Bessel functions -----------------------------------------------------------------------------------------
BESSEL_I0E.set_gradient(lambda op, grad: [
    grad * (bessel_i1e(op.inputs[0]) - unary_math_ops.sign(op.inputs[0]) * op.outputs[0])])


@BESSEL_I1E.set_gradient
def _bessel_i1e_grad(op, grad):
    """I0e(x) - y * (sign(x) + 1/x), with its limit 0.5 imputed where |x| is below the dtype's eps (TF's rule)."""
    x, y = op.inputs[0], op.outputs[0]
    eps = np.finfo(x.dtype.as_numpy_dtype).eps
    not_tiny = comparison_ops.greater(unary_math_ops.abs(x), eps)
    safe_x = comparison_ops.where_v2(not_tiny, x, eps)
    dy_dx = bessel_i0e(safe_x) - y * (unary_math_ops.sign(safe_x) + unary_math_ops.reciprocal(safe_x))
    return [grad * comparison_ops.where_v2(not_tiny, dy_dx, 0.5)]


def bessel_i0(x, name=None):
    """I0(x) = exp(|x|) * I0e(x), as TF 1.15 builds it."""
    with graph_mod.name_scope(name, "bessel_i0", [x]):
        x = convert_to_tensor(x, name="x")
        return unary_math_ops.exp(unary_math_ops.abs(x)) * bessel_i0e(x)


def bessel_i1(x, name=None):
    """I1(x) = exp(|x|) * I1e(x), as TF 1.15 builds it."""
    with graph_mod.name_scope(name, "bessel_i1", [x]):
        x = convert_to_tensor(x, name="x")
        return unary_math_ops.exp(unary_math_ops.abs(x)) * bessel_i1e(x)


# ---- x / y and x * log(y), 0 where x is 0 -------------------------------------------------------------------
def _binary(op_type, py_name, doc, types="{float16, float32, float64, complex64, complex128}", args=("x", "y")):
    op_def = DEFS.define(op_type, inputs=[f"{args[0]}: T", f"{args[1]}: T"], outputs=["z: T"], attrs=[f"T: {types}"],
                         shape_fn=common_shapes.broadcast_binary_shape, is_elementwise=True, doc=doc)

    def wrapper(x, y, name=None):
        return apply_op(op_type, [x, y], name=name or op_type)

    wrapper.__name__ = wrapper.__qualname__ = py_name
    wrapper.__doc__ = f"{doc} Broadcasts like numpy."
    return op_def, wrapper


MUL_NO_NAN, multiply_no_nan = _binary("MulNoNan", "multiply_no_nan", "x * y, and 0 wherever y is 0 (even where x is "
                                      "inf or nan).")
IGAMMA, igamma = _binary("Igamma", "igamma", "The regularized lower incomplete gamma function P(a, x).",
                         "{float32, float64}", ("a", "x"))
IGAMMAC, igammac = _binary("Igammac", "igammac", "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).",
                           "{float32, float64}", ("a", "x"))
ZETA, zeta = _binary("Zeta", "zeta", "The Hurwitz zeta function zeta(x, q) = sum over n of (n + q) ** -x.",
                     "{float32, float64}", ("x", "q"))
IGAMMA_GRAD_A, _igamma_grad_a = _binary("IgammaGradA", "igamma_grad_a", "d/da P(a, x).", "{float32, float64}",
                                        ("a", "x"))
XDIVY, xdivy = _binary("Xdivy", "xdivy", "x / y, and 0 wherever x is 0 (even where y is 0).")
XLOGY, xlogy = _binary("Xlogy", "xlogy", "x * log(y), and 0 wherever x is 0 (even where y is 0).")


def _nonzero(x):
    return unary_math_ops.cast(comparison_ops.not_equal(x, 0), x.dtype)


def _to_inputs(op, grad_x, grad_y):
    x, y = op.inputs
    return [broadcast_gradient_ops.unbroadcast(grad_x, x, y), broadcast_gradient_ops.unbroadcast(grad_y, y, x)]


XDIVY.set_gradient(lambda op, grad: _to_inputs(
    op, xdivy(_nonzero(op.inputs[0]), op.inputs[1]) * grad,
    xdivy(unary_math_ops.negative(op.inputs[0]), unary_math_ops.square(op.inputs[1])) * grad))
XLOGY.set_gradient(lambda op, grad: _to_inputs(
    op, xlogy(_nonzero(op.inputs[0]), op.inputs[1]) * grad, xdivy(op.inputs[0], op.inputs[1]) * grad))


def polyval(coeffs, x, name=None):
    """coeffs[0] * x ** (n-1) + ... + coeffs[n-1], by Horner's rule (each coefficient broadcasts with x); an
    empty list gives zeros like x, as TF."""
    if not isinstance(coeffs, list):
        raise ValueError(f"polyval: coeffs must be a list of coefficients (highest power first), got {coeffs!r}")
    with graph_mod.name_scope(name, "polyval", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return fill_ops.zeros_like(x, name=scope)
        coeffs = [convert_to_tensor(c, name=f"coeff_{i}") for i, c in enumerate(coeffs)]
        p = coeffs[0]
        for c in coeffs[1:]:
            p = c + p * x
        return p


MUL_NO_NAN.set_gradient(lambda op, grad: _to_inputs(op, multiply_no_nan(grad, op.inputs[1]),
                                                    multiply_no_nan(op.inputs[0], grad)))


def _igamma_x(a, x):
    """d/dx P(a, x) = exp(-x + (a - 1) log x - lgamma(a))."""
    return unary_math_ops.exp(-x + (a - 1) * unary_math_ops.log(x) - lgamma(a))


def _igamma_grad(sign):
    def grad_fn(op, grad):
        a, x = op.inputs
        return [broadcast_gradient_ops.unbroadcast(sign * grad * _igamma_grad_a(a, x), a, x),
                broadcast_gradient_ops.unbroadcast(sign * grad * _igamma_x(a, x), x, a)]
    return grad_fn


IGAMMA.set_gradient(_igamma_grad(1))
IGAMMAC.set_gradient(_igamma_grad(-1))
IGAMMA_GRAD_A.set_gradient(NOT_DIFFERENTIABLE)
ZETA.set_gradient(lambda op, grad: [None, broadcast_gradient_ops.unbroadcast(
    grad * -op.inputs[0] * zeta(op.inputs[0] + 1, op.inputs[1]), op.inputs[1], op.inputs[0])])

BETAINC = DEFS.define("Betainc", inputs=["a: T", "b: T", "x: T"], outputs=["z: T"], attrs=["T: {float32, float64}"],
                      shape_fn=lambda op: common_shapes.broadcast_shapes(common_shapes.broadcast_shapes(
                          op.inputs[0].shape, op.inputs[1].shape), op.inputs[2].shape), is_elementwise=True,
                      doc="The regularized incomplete beta function I_x(a, b).")


@BETAINC.set_gradient
def _betainc_grad(op, grad):
    """Only x gets a gradient, as in TF: x^(a-1) (1-x)^(b-1) / B(a, b)."""
    a, b, x = op.inputs
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    dx = unary_math_ops.exp((b - 1) * unary_math_ops.log1p(-x) + xlogy(a - 1, x) - log_beta)
    return [None, None, broadcast_gradient_ops.unbroadcast(grad * dx, x, a)]


def betainc(a, b, x, name=None):
    """I_x(a, b), the regularized incomplete beta function (a, b, x broadcast)."""
    return apply_op("Betainc", [a, b, x], name=name or "Betainc")


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 wherever x is 0."""
    with graph_mod.name_scope(name, "reciprocal_no_nan", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return math_ops.div_no_nan(convert_to_tensor(1, dtype=x.dtype, name="one"), x, name=scope)
