"""Linear-algebra ops: the QR decomposition (used by the orthogonal initializer)."""

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList

DEFS = OpDefList()

__all__ = ["qr"]

QR = DEFS.define("Qr", inputs=["input: T"], outputs=["q: T", "r: T"],
                 attrs=["full_matrices: bool = False", "T: {float32, float64, complex64, complex128}"],
                 grad=NOT_DIFFERENTIABLE,
                 doc="input = q @ r for each inner matrix: q with orthonormal columns, r upper triangular.")


@QR.set_shape_fn
def _qr_shape(op):
    shape = op.inputs[0].shape.with_rank_at_least(2)
    if shape.ndims is None:
        return [tensor_shape.TensorShape(None)] * 2
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    if op.get_attr("full_matrices"):
        k = m
    else:
        k = None if m.value is None or n.value is None else min(m.value, n.value)
    return [batch.concatenate([m, k]), batch.concatenate([k, n])]


def qr(input, full_matrices=False, name=None):  # noqa: A002 - TF's argument name
    """(q, r) with input = q @ r over the last two dimensions (reduced unless ``full_matrices``)."""
    return apply_op("Qr", [input], {"full_matrices": full_matrices}, name=name or "Qr")
