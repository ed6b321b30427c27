"""Sparse segment reductions as TF1: ``sparse_segment_sum``/``mean``/``sqrt_n`` reduce the rows ``data[indices]``
grouped by sorted ``segment_ids`` (up to the last id, or ``num_segments`` rows), without gathering them first.
Their gradients scatter the output gradient back to the rows of data that were read (TF's formulas)."""

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import fill_ops, gather_ops, segment_ops, shape_ops, unary_math_ops
from tensorweave.ops.segment_ops import _per_row

DEFS = OpDefList()

__all__ = ["sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"]

_KINDS = {"Sum": "sums", "Mean": "means", "SqrtN": "sums over the square root of the count of"}


def _define(kind, with_count):
    inputs = ["data: T", "indices: Tidx", "segment_ids: Tsegmentids"]
    attrs = [f"T: {'real' if kind == 'Sum' else '{float16, float32, float64}'}", "Tidx: {int32, int64} = int32",
             "Tsegmentids: {int32, int64} = int32"]
    if with_count:
        inputs.append("num_segments: Tnumsegments")
        attrs.append("Tnumsegments: {int32, int64} = int32")
    return DEFS.define(f"SparseSegment{kind}{'WithNumSegments' if with_count else ''}", inputs=inputs,
                       outputs=["output: T"], attrs=attrs,
                       doc=f"The {_KINDS[kind]} the rows data[indices] of each sorted segment id (0 where empty).")


OPS = {(kind, with_count): _define(kind, with_count) for kind in _KINDS for with_count in (False, True)}


def _shape(op):
    data, indices, ids = op.inputs[:3]
    indices.shape.with_rank(1).assert_is_compatible_with(ids.shape.with_rank(1))
    rows = None
    if len(op.inputs) == 4:
        count = constant_value(op.inputs[3])
        rows = None if count is None else int(count)
    return tensor_shape.TensorShape([rows]).concatenate(data.shape.with_rank_at_least(1)[1:])


def _grad(kind):
    def grad_fn(op, grad):
        data, indices, ids = op.inputs[:3]
        rows = gather_ops.gather(grad, ids)
        if kind != "Sum":
            segments = shape_ops.shape(grad)[0]
            counts = unary_math_ops.cast(segment_ops.unsorted_segment_sum(
                fill_ops.ones_like(ids, dtype=dtypes.int32), ids, segments), grad.dtype)
            counts = gather_ops.gather(counts, ids)
            rows = rows / _per_row(counts if kind == "Mean" else unary_math_ops.sqrt(counts), grad, ids)
        dense = segment_ops.unsorted_segment_sum(rows, indices, shape_ops.shape(data)[0])
        return [dense, None, None] + ([None] if len(op.inputs) == 4 else [])
    return grad_fn


for (_kind, _with_count), _op in OPS.items():
    _op.set_shape_fn(_shape)
    _op.set_gradient(_grad(_kind))


def _wrapper(kind, name):
    def fn(data, indices, segment_ids, name=None, num_segments=None):
        inputs = [convert_to_tensor(data, name="data"), convert_to_tensor(indices, name="indices"),
                  convert_to_tensor(segment_ids, name="segment_ids")]
        if num_segments is not None:
            inputs.append(convert_to_tensor(num_segments, name="num_segments"))
        op_type = f"SparseSegment{kind}{'' if num_segments is None else 'WithNumSegments'}"
        return apply_op(op_type, inputs, name=name or op_type)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {_KINDS[kind]} the rows ``data[indices]`` of each segment (``segment_ids`` sorted, one per "
                  f"index); ``num_segments`` rows if given, else up to the last id.")
    return fn


sparse_segment_sum = _wrapper("Sum", "sparse_segment_sum")
sparse_segment_mean = _wrapper("Mean", "sparse_segment_mean")
sparse_segment_sqrt_n = _wrapper("SqrtN", "sparse_segment_sqrt_n")
