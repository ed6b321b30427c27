"""dynamic_partition and dynamic_stitch: split rows by a partition index, and merge them back by position.

The white paper's sharded embedding lookup (Fig. 3) is built from these; each is the other's gradient.
"""

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import gather_ops, range_ops, reduction_ops, segment_ops, shape_ops

DEFS = OpDefList()

__all__ = ["dynamic_partition", "dynamic_stitch"]

DYNAMIC_PARTITION = DEFS.define(
    "DynamicPartition", inputs=["data: T", "partitions: int32"], outputs=["outputs: num_partitions * T"],
    attrs=["T: any", "num_partitions: int >= 1"],
    doc="outputs[p] holds, in order, the slices data[i] with partitions[i] == p.")
DYNAMIC_STITCH = DEFS.define(
    "DynamicStitch", inputs=["indices: N * int32", "data: N * T"], outputs=["merged: T"],
    attrs=["N: int >= 1", "T: any"], doc="merged[indices[m][i]] = data[m][i]; later entries win on duplicates.")


@DYNAMIC_PARTITION.set_shape_fn
def _dynamic_partition_shape(op):
    data, partitions = op.inputs[0].shape, op.inputs[1].shape
    count = op.get_attr("num_partitions")
    if data.ndims is None or partitions.ndims is None:
        return [tensor_shape.TensorShape(None)] * count
    if not data[:partitions.ndims].is_compatible_with(partitions):
        raise ValueError(f"partitions of shape {partitions} must be a prefix of data's shape {data}")
    return [tensor_shape.TensorShape([None]).concatenate(data[partitions.ndims:])] * count


@DYNAMIC_STITCH.set_shape_fn
def _dynamic_stitch_shape(op):
    n = op.get_attr("N")
    indices, data = op.inputs[:n], op.inputs[n:]
    inner = tensor_shape.TensorShape(None)
    for index, values in zip(indices, data):
        if index.shape.ndims is not None and values.shape.ndims is not None:
            if not values.shape[:index.shape.ndims].is_compatible_with(index.shape):
                raise ValueError(f"data {values.name} of shape {values.shape} does not start with the shape "
                                 f"{index.shape} of its indices {index.name}")
            here = values.shape[index.shape.ndims:]
            if not inner.is_compatible_with(here):
                raise ValueError(f"all data must have the same shape after their indices' dimensions: "
                                 f"{inner} vs {here}")
            inner = inner.merge_with(here)
    known = [constant_value(i) for i in indices]
    rows = None if any(v is None for v in known) else max((int(v.max()) + 1 for v in known if v.size), default=0)
    return tensor_shape.TensorShape([rows]).concatenate(inner)


@DYNAMIC_PARTITION.set_gradient
def _dynamic_partition_grad(op, *grads):
    """Partitions the positions of data's rows the same way, then stitches the gradients back by position."""
    data, partitions = op.inputs
    prefix_shape = shape_ops.shape(partitions)
    positions = shape_ops.reshape(range_ops.range(reduction_ops.reduce_prod(prefix_shape)), prefix_shape)
    partitioned = dynamic_partition(positions, partitions, op.get_attr("num_partitions"))
    stitched = dynamic_stitch(partitioned, list(grads))
    return [shape_ops.reshape(stitched, shape_ops.shape(data)), None]


@DYNAMIC_STITCH.set_gradient
def _dynamic_stitch_grad(op, grad):
    n = op.get_attr("N")
    if isinstance(grad, IndexedSlices):
        grad = segment_ops.unsorted_segment_sum(grad.values, grad.indices, shape_ops.shape(op.outputs[0])[0])
    return [None] * n + [gather_ops.gather(grad, index) for index in op.inputs[:n]]


def dynamic_partition(data, partitions, num_partitions, name=None):
    """Splits ``data`` into ``num_partitions`` tensors by the index in ``partitions`` (a prefix of its shape)."""
    return apply_op("DynamicPartition", [data, partitions], {"num_partitions": int(num_partitions)},
                    name=name or "DynamicPartition")


def dynamic_stitch(indices, data, name=None):
    """Interleaves ``data`` into one tensor: ``merged[indices[m][i]] = data[m][i]``."""
    if len(indices) != len(data):
        raise ValueError(f"dynamic_stitch needs as many index tensors as data tensors, got {len(indices)} and "
                         f"{len(data)}")
    return apply_op("DynamicStitch", [list(indices), list(data)], name=name or "DynamicStitch")

