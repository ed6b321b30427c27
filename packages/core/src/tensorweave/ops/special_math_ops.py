"""Special functions: Lgamma, Digamma, Polygamma, Erf and Erfc (elementwise, with TF's gradients), and lbeta and
log_sigmoid, which TF builds from other ops."""

import math

from tensorweave.framework import common_shapes, graph as graph_mod
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import broadcast_gradient_ops, nn_ops, reduction_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["lgamma", "digamma", "polygamma", "erf", "erfc", "lbeta", "log_sigmoid"]

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
