"""Trigonometric and hyperbolic functions beyond sin and cos (Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh,
Atanh), elementwise, with TF's gradients (conjugated for complex inputs, as TF's math_grad does)."""

from tensorweave.framework import common_shapes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.ops import unary_math_ops as um

DEFS = OpDefList()

__all__ = ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"]

_INEXACT = "T: {floating, complex64, complex128}"


def _unary(op_type, py_name, doc, grad):
    op_def = DEFS.define(op_type, inputs=["x: T"], outputs=["y: T"], attrs=[_INEXACT],
                         shape_fn=common_shapes.unchanged_shape, grad=grad, is_elementwise=True, doc=doc)

    def wrapper(x, name=None):
        return apply_op(op_type, [x], name=name or op_type)

    wrapper.__name__ = wrapper.__qualname__ = py_name
    wrapper.__doc__ = doc
    return op_def, wrapper


def _c(t):
    return um.conj(t)


def _x(op):
    return _c(op.inputs[0])


def _y(op):
    return _c(op.outputs[0])


TAN, tan = _unary("Tan", "tan", "The tangent.", lambda op, grad: [grad * um.square(um.reciprocal(um.cos(_x(op))))])
ASIN, asin = _unary("Asin", "asin", "The inverse sine, in [-pi/2, pi/2] (nan outside [-1, 1]).",
                    lambda op, grad: [grad * um.reciprocal(um.sqrt(1 - um.square(_x(op))))])
ACOS, acos = _unary("Acos", "acos", "The inverse cosine, in [0, pi] (nan outside [-1, 1]).",
                    lambda op, grad: [-grad * um.reciprocal(um.sqrt(1 - um.square(_x(op))))])
ATAN, atan = _unary("Atan", "atan", "The inverse tangent, in (-pi/2, pi/2).",
                    lambda op, grad: [grad * um.reciprocal(1 + um.square(_x(op)))])
SINH, sinh = _unary("Sinh", "sinh", "The hyperbolic sine.", lambda op, grad: [grad * cosh(_x(op))])
COSH, cosh = _unary("Cosh", "cosh", "The hyperbolic cosine.", lambda op, grad: [grad * sinh(_x(op))])
ASINH, asinh = _unary("Asinh", "asinh", "The inverse hyperbolic sine.", lambda op, grad: [grad / cosh(_y(op))])
ACOSH, acosh = _unary("Acosh", "acosh", "The inverse hyperbolic cosine (nan below 1).",
                      lambda op, grad: [grad / sinh(_y(op))])
ATANH, atanh = _unary("Atanh", "atanh", "The inverse hyperbolic tangent (+-inf at +-1, nan outside).",
                      lambda op, grad: [grad * um.reciprocal(1 - um.square(_x(op)))])
