"""Running sums, products and log-sum-exps along an axis: cumsum, cumprod and cumulative_logsumexp (exclusive and
reverse variants)."""

from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import comparison_ops, math_ops, unary_math_ops

DEFS = OpDefList()

__all__ = ["cumsum", "cumprod"]  # cumulative_logsumexp is tf.math's only


def _cumulative_shape(op):
    x, axis = op.inputs
    axis.shape.with_rank(0)
    value, rank = constant_value(axis), x.shape.ndims
    if value is not None and rank is not None and not -rank <= int(value) < rank:
        raise ValueError(f"axis {int(value)} is out of range for a tensor of rank {rank} "
                         f"(expected [-{rank}, {rank}))")
    return x.shape


def _cumulative(op_type, doc, type_attr="T: numeric"):
    return DEFS.define(op_type, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                       attrs=[type_attr, "Tidx: {int32, int64} = int32", "exclusive: bool = False",
                              "reverse: bool = False"], shape_fn=_cumulative_shape, doc=doc)


CUMSUM = _cumulative("Cumsum", "Running sums along an axis; exclusive starts from 0, reverse runs from the end.")
CUMPROD = _cumulative("Cumprod", "Running products along an axis; exclusive starts from 1, reverse from the end.")
CUMULATIVE_LOGSUMEXP = _cumulative(
    "CumulativeLogsumexp", "Running log(sum(exp(x))) along an axis; exclusive starts from -inf, reverse from the end.",
    "T: {float16, float32, float64}")


def _attrs(op, **changes):
    attrs = {"exclusive": op.get_attr("exclusive"), "reverse": op.get_attr("reverse")}
    attrs.update(changes)
    return attrs


@CUMSUM.set_gradient
def _cumsum_grad(op, grad):
    attrs = _attrs(op, reverse=not op.get_attr("reverse"))
    return [cumsum(grad, op.inputs[1], **attrs), None]


@CUMPROD.set_gradient
def _cumprod_grad(op, grad):
    """TF's formula: the reversed running sum of grad * prod, divided by x; 0 where x is 0 (TF's div_no_nan,
    which is exact everywhere but at the first zero of a run, where the true value is not 0)."""
    x, axis = op.inputs
    products = cumprod(x, axis, **_attrs(op))
    summed = cumsum(products * grad, axis, **_attrs(op, reverse=not op.get_attr("reverse")))
    return [math_ops.div_no_nan(summed, x), None]


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along ``axis``: [a, b, c] → [a, a + b, a + b + c] (exclusive: [0, a, a + b])."""
    return apply_op("Cumsum", [x, axis], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                    name=name or "Cumsum")


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along ``axis``: [a, b, c] → [a, a * b, a * b * c] (exclusive: [1, a, a * b])."""
    return apply_op("Cumprod", [x, axis], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                    name=name or "Cumprod")



@CUMULATIVE_LOGSUMEXP.set_gradient
def _cumulative_logsumexp_grad(op, grad):
    """TF's rule: the positive and negative parts of grad, each taken to log space, run back through a reversed
    cumulative_logsumexp against the output, and exponentiated (so nothing overflows)."""
    x, axis = op.inputs
    out = op.outputs[0]
    lowest = grad.dtype.min
    log_positive = comparison_ops.where_v2(comparison_ops.greater(grad, 0), unary_math_ops.log(grad), lowest)
    log_negative = comparison_ops.where_v2(comparison_ops.less(grad, 0), unary_math_ops.log(-grad), lowest)
    attrs = _attrs(op, reverse=not op.get_attr("reverse"))
    positive = unary_math_ops.exp(cumulative_logsumexp(log_positive - out, axis, **attrs) + x)
    negative = unary_math_ops.exp(cumulative_logsumexp(log_negative - out, axis, **attrs) + x)
    return [positive - negative, None]


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running log(sum(exp(x))) along ``axis``, without overflow (tf.math.cumulative_logsumexp)."""
    return apply_op("CumulativeLogsumexp", [x, axis], {"exclusive": bool(exclusive), "reverse": bool(reverse)},
                    name=name or "CumulativeLogsumexp")
