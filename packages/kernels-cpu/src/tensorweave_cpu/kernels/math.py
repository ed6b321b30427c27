"""CPU kernels for elementwise math: arithmetic, unary functions and their gradient ops, comparisons,
logical ops, Select/SelectV2, ClipByValue, Cast, AddN and BroadcastGradientArgs.

Ops that map to a ufunc register the device's array-module ufunc itself (chosen when the node's kernel is
built), so running one costs exactly the ufunc call and a GPU package serves the same registrations with
cupy. Ops whose domain includes IEEE inf/nan results (division, log, sqrt, pow …) run with numpy's
floating-point warnings silenced, as TF returns those values without complaint. Integer division or
modulo by zero raises InvalidArgumentError instead of returning numpy's arbitrary 0.
"""

import functools

import numpy as np

from tensorweave.extension import KernelSet, broadcast_reduction_axes

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"Abs", "Add", "AddN", "Atan2", "BroadcastGradientArgs", "Cast", "Ceil", "ClipByValue",
    "Conj", "Cos", "DivNoNan", "Equal", "Exp", "Expm1", "Floor", "FloorDiv", "FloorMod", "Greater", "GreaterEqual",
    "IsFinite", "IsInf", "IsNan", "Less", "LessEqual", "Log", "Log1p", "LogicalAnd", "LogicalNot", "LogicalOr",
    "Maximum", "Minimum", "Mul", "Neg", "NotEqual", "Pow", "RealDiv", "Reciprocal", "ReciprocalGrad", "Rint", "Round",
    "Rsqrt", "RsqrtGrad", "Select", "SelectV2", "Sigmoid", "SigmoidGrad", "Sign", "Sin", "Sqrt", "SqrtGrad", "Square",
    "SquaredDifference", "Sub", "Tanh", "TanhGrad", "TruncateDiv", "TruncateMod",
    "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too:
every one (``quietly`` silences numpy's warnings only when the module is numpy)."""


def quietly(fn, xp):
    """``fn`` with floating-point warnings silenced (numpy only: cupy has none to silence)."""
    if xp is not np:
        return fn

    def compute(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return compute


def _ufunc(op_type, ufunc_name, quiet=False):
    """Registers ``op_type`` as the device array module's ufunc ``ufunc_name``."""
    def build(node):
        xp = node.device.array_module
        fn = getattr(xp, ufunc_name)
        return quietly(fn, xp) if quiet else fn
    KERNELS.add(op_type, build=build)


for _op_type, _ufunc_name in [
        ("Add", "add"), ("Sub", "subtract"), ("Mul", "multiply"), ("Maximum", "maximum"), ("Minimum", "minimum"),
        ("Neg", "negative"), ("Abs", "absolute"), ("Sign", "sign"), ("Square", "square"), ("Tanh", "tanh"),
        ("Floor", "floor"), ("Ceil", "ceil"), ("Round", "rint"), ("Rint", "rint"), ("Atan2", "arctan2"), ("Conj", "conjugate"),
        ("IsFinite", "isfinite"), ("IsNan", "isnan"), ("IsInf", "isinf"),
        ("Less", "less"), ("LessEqual", "less_equal"), ("Greater", "greater"), ("GreaterEqual", "greater_equal"),
        ("Equal", "equal"), ("NotEqual", "not_equal"),
        ("LogicalAnd", "logical_and"), ("LogicalOr", "logical_or"), ("LogicalNot", "logical_not")]:
    _ufunc(_op_type, _ufunc_name)

for _op_type, _ufunc_name in [
        ("RealDiv", "true_divide"), ("Pow", "power"), ("Exp", "exp"), ("Expm1", "expm1"), ("Log", "log"),
        ("Log1p", "log1p"), ("Sqrt", "sqrt"), ("Reciprocal", "reciprocal"), ("Sin", "sin"), ("Cos", "cos"),
        ("Tan", "tan"), ("Asin", "arcsin"), ("Acos", "arccos"), ("Atan", "arctan"), ("Sinh", "sinh"), ("Cosh", "cosh"),
        ("Asinh", "arcsinh"), ("Acosh", "arccosh"), ("Atanh", "arctanh")]:
    _ufunc(_op_type, _ufunc_name, quiet=True)


# ---- integer-safe division ------------------------------------------------------------------------------------------
def _no_zero_divisor(fn, op_type):
    """A zero divisor is an error only where it divides something: an empty result has none (as TF)."""
    def compute(x, y):
        if x.size and not y.all():
            raise ZeroDivisionError(f"Integer division by zero in {op_type}: the divisor has a zero entry. "
                                    f"Guard it (e.g. tf.maximum(y, 1) or tf.where) or divide in floating point.")
        return fn(x, y)
    return compute


def _division(op_type, integer_fn, float_fn):
    """Integer dtypes refuse a zero divisor; floating dtypes give inf/nan quietly."""
    def build(node):
        xp = node.device.array_module
        if node.input_dtypes[0].is_integer:
            return _no_zero_divisor(integer_fn(xp), op_type)
        return quietly(float_fn(xp), xp)
    KERNELS.add(op_type, build=build)


def _truncate_div_int(xp):
    return lambda x, y: (x - xp.fmod(x, y)) // y


_division("FloorDiv", lambda xp: xp.floor_divide, lambda xp: xp.floor_divide)
_division("FloorMod", lambda xp: xp.remainder, lambda xp: xp.remainder)
_division("TruncateDiv", _truncate_div_int, lambda xp: lambda x, y: xp.trunc(x / y))
_division("TruncateMod", lambda xp: xp.fmod, lambda xp: xp.fmod)


@KERNELS.register_build("DivNoNan")
def _div_no_nan(node):
    xp = node.device.array_module
    return quietly(lambda x, y: xp.where(y == 0, 0, x / y), xp)


@KERNELS.register("SquaredDifference")
def _squared_difference(x, y, *, xp):
    difference = x - y
    return difference * xp.conj(difference) if difference.dtype.kind == "c" else difference * difference


# ---- unary functions with formulas, and the fused gradient ops --------------------------------------------------------
@KERNELS.register_build("Rsqrt")
def _rsqrt(node):
    xp = node.device.array_module
    return quietly(lambda x: xp.reciprocal(xp.sqrt(x)), xp)


@KERNELS.register("Sigmoid")
def _sigmoid(x, *, xp):
    if x.dtype.kind == "c":
        return 1 / (1 + xp.exp(-x))
    return xp.exp(-xp.logaddexp(0, -x))


def _output_grad(op_type, formula):
    """``formula(y, dy)`` for a gradient op fed the forward output y; complex y is conjugated, as in TF."""
    def build(node):
        xp = node.device.array_module
        if node.input_dtypes[0].is_complex:
            return quietly(lambda y, dy: formula(xp.conj(y), dy), xp)
        return quietly(formula, xp)
    KERNELS.add(op_type, build=build)


_output_grad("SqrtGrad", lambda y, dy: dy * 0.5 / y)
_output_grad("RsqrtGrad", lambda y, dy: dy * -0.5 * (y * y * y))
_output_grad("ReciprocalGrad", lambda y, dy: -dy * (y * y))
_output_grad("TanhGrad", lambda y, dy: dy * (1 - y * y))
_output_grad("SigmoidGrad", lambda y, dy: dy * (y * (1 - y)))


# ---- selection --------------------------------------------------------------------------------------------------------
@KERNELS.register("Select")
def _select(condition, t, e, *, xp):
    if t.shape != e.shape:
        raise ValueError(f"the two value inputs of Select must have one shape, got {t.shape} and {e.shape}")
    if condition.ndim == 1 and t.ndim > 1:
        if condition.shape[0] != t.shape[0]:
            raise ValueError(f"a vector condition of Select must have one entry per row: {condition.shape[0]} "
                             f"entries for values of shape {t.shape}")
        condition = condition.reshape((-1,) + (1,) * (t.ndim - 1))
    elif condition.ndim and condition.shape != t.shape:
        raise ValueError(f"the condition of Select must be a scalar, a vector over the rows, or of the values' "
                         f"shape: {condition.shape} vs {t.shape}")
    return xp.where(condition, t, e)


@KERNELS.register_build("SelectV2")
def _select_v2(node):
    return node.device.array_module.where


@KERNELS.register("ClipByValue")
def _clip_by_value(t, low, high, *, xp):
    clipped = xp.maximum(xp.minimum(t, high), low)
    if clipped.shape != t.shape:
        raise ValueError(f"clip bounds of shapes {low.shape} and {high.shape} do not broadcast to the clipped "
                         f"tensor's shape {t.shape}")
    return clipped


# ---- Cast, AddN, BroadcastGradientArgs --------------------------------------------------------------------------------
@KERNELS.register_build("Cast")
def _cast(node):
    xp = node.device.array_module
    src, dst = node.attrs["SrcT"], node.attrs["DstT"]
    target = dst.as_numpy_dtype
    if src.is_complex and not dst.is_complex:
        return quietly(lambda x: xp.real(x).astype(target), xp)
    if src.is_floating and not dst.is_floating:
        return quietly(lambda x: x.astype(target), xp)
    return lambda x: x.astype(target)


@KERNELS.register("AddN")
def _add_n(*inputs):
    shape = inputs[0].shape
    for x in inputs[1:]:
        if x.shape != shape:
            raise ValueError(f"AddN inputs must all have one shape, got {shape} and {x.shape}")
    total = inputs[0] + inputs[1]
    for x in inputs[2:]:
        total += x
    return total


@functools.lru_cache(maxsize=4096)
def broadcast_axes_of_shapes(s0, s1):
    """Cached: the backward pass of a loop asks the same few shape pairs every iteration."""
    return broadcast_reduction_axes(s0, s1)


@KERNELS.register("BroadcastGradientArgs")
def _broadcast_gradient_args(s0, s1, *, xp):
    r0, r1 = broadcast_axes_of_shapes(tuple(s0.tolist()), tuple(s1.tolist()))
    return xp.asarray(r0, dtype=s0.dtype), xp.asarray(r1, dtype=s1.dtype)
