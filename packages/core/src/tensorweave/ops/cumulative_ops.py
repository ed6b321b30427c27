"""Running sums and products along an axis: cumsum and cumprod (exclusive and reverse variants)."""

from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import math_ops

DEFS = OpDefList()

__all__ = ["cumsum", "cumprod"]


def _cumulative_shape(op):
    x, axis = op.inputs
    axis.shape.with_rank(0)
    value, rank = constant_value(axis), x.shape.ndims
    if value is not None and rank is not None and not -rank <= int(value) < rank:
        raise ValueError(f"axis {int(value)} is out of range for a tensor of rank {rank} "
                         f"(expected [-{rank}, {rank}))")
    return x.shape


def _cumulative(op_type, doc):
    return DEFS.define(op_type, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                       attrs=["T: numeric", "Tidx: {int32, int64} = int32", "exclusive: bool = False",
                              "reverse: bool = False"], shape_fn=_cumulative_shape, doc=doc)


CUMSUM = _cumulative("Cumsum", "Running sums along an axis; exclusive starts from 0, reverse runs from the end.")
CUMPROD = _cumulative("Cumprod", "Running products along an axis; exclusive starts from 1, reverse from the end.")


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

