"""Activations with their gradient ops (Relu/ReluGrad …), bias_add and the dense helpers built on it, dropout.

Each activation is one fused op whose gradient is a second fused op (as in TF), so a training step runs
one kernel per direction; the gradient ops have gradients too, for second derivatives.
"""

import numbers

from tensorweave import dtypes
from tensorweave.framework import common_shapes, graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    comparison_ops, concat_split_ops, fill_ops, math_ops, matmul_ops, random_ops, reduction_ops, shape_ops,
    unary_math_ops,
)

DEFS = OpDefList()

__all__ = ["relu", "relu6", "elu", "selu", "softplus", "softsign", "leaky_relu", "crelu", "bias_add",
           "xw_plus_b", "relu_layer", "dropout", "zero_fraction"]

_REAL = "T: {float16, float32, float64, int8, int16, int32, int64, uint8}"
_FLOAT = "T: floating"

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _activation(name, type_attr, backprop_from, extra_attrs=(), doc=""):
    """Defines ``name`` and ``name + "Grad"``; the gradient op reads the op's input or its output."""
    attrs = [type_attr, *extra_attrs]
    forward = DEFS.define(name, inputs=["features: T"], outputs=["activations: T"], attrs=attrs,
                          shape_fn=common_shapes.unchanged_shape, is_elementwise=True, doc=doc)
    backward = DEFS.define(f"{name}Grad", inputs=["gradients: T", f"{backprop_from}: T"], outputs=["backprops: T"],
                           attrs=attrs, shape_fn=common_shapes.unchanged_shape, is_elementwise=True,
                           doc=f"The gradient of {name}.")

    @forward.set_gradient
    def _grad(op, grad):
        source = op.inputs[0] if backprop_from == "features" else op.outputs[0]
        return [apply_op(backward.name, [grad, source], _non_type_attrs(op), name=backward.name)]

    return forward, backward


def _non_type_attrs(op):
    """The attrs to copy onto a related op (type attrs are inferred from its inputs)."""
    return {name: op.get_attr(name) for name in op.op_def.attrs if name != "T"}


RELU, RELU_GRAD = _activation("Relu", _REAL, "features", doc="max(features, 0).")
RELU6, RELU6_GRAD = _activation("Relu6", _REAL, "features", doc="min(max(features, 0), 6).")
ELU, ELU_GRAD = _activation("Elu", _FLOAT, "outputs", doc="exp(x) - 1 for x < 0, else x.")
SELU, SELU_GRAD = _activation("Selu", _FLOAT, "outputs", doc="scale * (alpha * (exp(x) - 1) for x < 0, else x).")
SOFTPLUS, SOFTPLUS_GRAD = _activation("Softplus", _FLOAT, "features", doc="log(exp(x) + 1), computed stably.")
SOFTSIGN, SOFTSIGN_GRAD = _activation("Softsign", _FLOAT, "features", doc="x / (|x| + 1).")
LEAKY_RELU, LEAKY_RELU_GRAD = _activation("LeakyRelu", _FLOAT, "features", ["alpha: float = 0.2"],
                                          doc="alpha * x for x < 0, else x.")


# ---- second derivatives: the gradient ops are linear in `gradients` -----------------------------------------
def _linear_in_gradients(backward):
    """For gradient ops whose derivative in their second input is zero almost everywhere (piecewise linear)."""
    @backward.set_gradient
    def _grad(op, grad):
        return [apply_op(op.type, [grad, op.inputs[1]], _non_type_attrs(op), name=op.type), None]


for _backward in (RELU_GRAD, RELU6_GRAD, LEAKY_RELU_GRAD):
    _linear_in_gradients(_backward)


def _output_based_grad_grad(backward):
    """EluGrad/SeluGrad(dy, y) are dy * (y + c) for y < 0 and linear in dy alone otherwise: d/dy is dy or 0."""
    @backward.set_gradient
    def _grad(op, grad):
        dy, y = op.inputs
        negative = unary_math_ops.cast(comparison_ops.less(y, 0), y.dtype)
        return [apply_op(op.type, [grad, y], name=op.type), grad * dy * negative]


_output_based_grad_grad(ELU_GRAD)
_output_based_grad_grad(SELU_GRAD)


@SOFTPLUS_GRAD.set_gradient
def _softplus_grad_grad(op, grad):
    dy, x = op.inputs
    # d/dx sigmoid(x) = 1 / (exp(-x) + 2 + exp(x))
    return [apply_op("SoftplusGrad", [grad, x], name="SoftplusGrad"),
            grad * dy / (unary_math_ops.exp(-x) + 2 + unary_math_ops.exp(x))]


@SOFTSIGN_GRAD.set_gradient
def _softsign_grad_grad(op, grad):
    dy, x = op.inputs
    denominator = 1 + unary_math_ops.abs(x)
    return [apply_op("SoftsignGrad", [grad, x], name="SoftsignGrad"),
            -2 * grad * dy * unary_math_ops.sign(x) / (denominator * denominator * denominator)]


def relu(features, name=None):
    return apply_op("Relu", [features], name=name or "Relu")


def relu6(features, name=None):
    return apply_op("Relu6", [features], name=name or "Relu6")


def elu(features, name=None):
    return apply_op("Elu", [features], name=name or "Elu")


def selu(features, name=None):
    return apply_op("Selu", [features], name=name or "Selu")


def softplus(features, name=None):
    return apply_op("Softplus", [features], name=name or "Softplus")


def softsign(features, name=None):
    return apply_op("Softsign", [features], name=name or "Softsign")


def leaky_relu(features, alpha=0.2, name=None):
    return apply_op("LeakyRelu", [features], {"alpha": float(alpha)}, name=name or "LeakyRelu")


def crelu(features, name=None, axis=-1):
    """Concatenated ReLU: relu(x) and relu(-x) side by side along ``axis`` (doubling its size)."""
    with graph_mod.name_scope(name, "CRelu", [features]):
        features = convert_to_tensor(features)
        both = concat_split_ops.concat([features, unary_math_ops.negative(features)], axis)
        return relu(both)


# ---- BiasAdd --------------------------------------------------------------------------------------------------
_NUMERIC = "T: {float16, float32, float64, int8, int16, int32, int64, uint8, complex64, complex128}"
BIAS_ADD = DEFS.define("BiasAdd", inputs=["value: T", "bias: T"], outputs=["output: T"],
                       attrs=[_NUMERIC, "data_format: {'NHWC', 'NCHW'} = 'NHWC'"], is_elementwise=True,
                       broadcast_inputs=(0,), doc="Adds a 1-D bias along the channel axis (last, or 1 for NCHW).")
BIAS_ADD_GRAD = DEFS.define("BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
                            attrs=[_NUMERIC, "data_format: {'NHWC', 'NCHW'} = 'NHWC'"],
                            doc="Sums out_backprop over every axis but the channel axis.")


def bias_channel_axis(rank, data_format):
    return 1 if data_format == "NCHW" and rank >= 3 else rank - 1


@BIAS_ADD.set_shape_fn
def _bias_add_shape(op):
    value, bias = op.inputs[0].shape.with_rank_at_least(2), op.inputs[1].shape.with_rank(1)
    if value.ndims is None:
        return value
    channels = value[bias_channel_axis(value.ndims, op.get_attr("data_format"))]
    if not channels.is_compatible_with(bias[0]):
        raise ValueError(f"bias has {bias[0]} elements but value has {channels} channels "
                         f"(data_format {op.get_attr('data_format')})")
    return value


@BIAS_ADD_GRAD.set_shape_fn
def _bias_add_grad_shape(op):
    shape = op.inputs[0].shape.with_rank_at_least(2)
    if shape.ndims is None:
        return tensor_shape.unknown_shape(1)
    return tensor_shape.TensorShape([shape[bias_channel_axis(shape.ndims, op.get_attr("data_format"))]])


@BIAS_ADD.set_gradient
def _bias_add_grad(op, grad):
    fmt = {"data_format": op.get_attr("data_format")}
    return [grad, apply_op("BiasAddGrad", [grad], fmt, name="BiasAddGrad")]


@BIAS_ADD_GRAD.set_gradient
def _bias_add_grad_grad(op, grad):
    # Broadcasting the channel gradient back over out_backprop's shape is a BiasAdd onto zeros.
    zeros = fill_ops.zeros_like(op.inputs[0])
    return [apply_op("BiasAdd", [zeros, grad], {"data_format": op.get_attr("data_format")}, name="BiasAdd")]


def bias_add(value, bias, data_format=None, name=None):
    """value + bias, with the 1-D ``bias`` added along the channel axis of ``data_format``."""
    return apply_op("BiasAdd", [value, bias], {"data_format": data_format or "NHWC"}, name=name or "BiasAdd")


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases: a dense layer's pre-activation (TF1's ``tf.nn.xw_plus_b``)."""
    with graph_mod.name_scope(name, "xw_plus_b", [x, weights, biases]):
        return bias_add(matmul_ops.matmul(x, weights), biases)


def relu_layer(x, weights, biases, name=None):
    """relu(matmul(x, weights) + biases)."""
    with graph_mod.name_scope(name, "relu_layer", [x, weights, biases]):
        return relu(xw_plus_b(x, weights, biases))


def zero_fraction(value, name=None):
    """The fraction of zeros in ``value`` (float32), e.g. to summarize how sparse ReLU outputs are."""
    with graph_mod.name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        return reduction_ops.reduce_mean(unary_math_ops.cast(comparison_ops.equal(value, 0), dtypes.float32))


# ---- dropout ------------------------------------------------------------------------------------------------
def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Keeps each element with probability ``keep_prob``, scaled by 1/keep_prob; zeroes the rest.

    Built from random_uniform and floor, so its gradient flows through the kept elements. ``keep_prob``
    may be a tensor (a placeholder fed 1.0 at evaluation time); ``rate`` is 1 - keep_prob.
    """
    with graph_mod.name_scope(name, "dropout", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"dropout: x has to be a floating point tensor since it is scaled, got {x.dtype.name}")
        if (keep_prob is None) == (rate is None):
            raise ValueError("dropout: pass exactly one of keep_prob and rate")
        given = keep_prob if keep_prob is not None else rate
        if isinstance(given, numbers.Real) and not (0 < given <= 1 if keep_prob is not None else 0 <= given < 1):
            what = "keep_prob must be in (0, 1]" if keep_prob is not None else "rate must be in [0, 1)"
            raise ValueError(f"dropout: {what}, got {given}")
        if keep_prob is None:
            keep_prob = math_ops.subtract(1.0, convert_to_tensor(rate, dtype=x.dtype, name="rate"))
        keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        if not keep_prob.shape.is_compatible_with([]):
            raise ValueError(f"dropout: keep_prob must be a scalar, got shape {keep_prob.shape}")
        if constant_value(keep_prob) == 1:
            return x
        if noise_shape is None:
            noise_shape = shape_ops.shape(x)
        uniform = random_ops.random_uniform(noise_shape, seed=seed, dtype=x.dtype)
        kept = unary_math_ops.floor(keep_prob + uniform)  # 1 with probability keep_prob, else 0
        result = x / keep_prob * kept
        result.set_shape(x.shape)
        return result



# ---- swish ----------------------------------------------------------------------------------------------------
__all__ += ["swish"]


def swish(features, name=None):
    """features * sigmoid(features) (Ramachandran et al., 2017), TF's ``tf.nn.swish``."""
    with graph_mod.name_scope(name, "swish", [features]):
        features = convert_to_tensor(features, name="features")
        return math_ops.multiply(features, unary_math_ops.sigmoid(features))
