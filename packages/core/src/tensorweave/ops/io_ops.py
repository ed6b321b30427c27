"""Checkpoint ops (SaveV2, RestoreV2, MergeV2Checkpoints), the file-name ops a sharded save needs, and
whole-file reads and writes. The on-disk format is runtime/checkpoint_format.py."""

from tensorweave import dtypes
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value

DEFS = OpDefList()

__all__ = ["read_file", "write_file", "string_join"]

DEFS.define("SaveV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string", "tensors: dtypes"],
            attrs=["dtypes: list(type) >= 1"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Writes the tensors (or slices of them, per shape_and_slices) as a checkpoint at prefix.")
RESTORE = DEFS.define(
    "RestoreV2", inputs=["prefix: string", "tensor_names: string", "shape_and_slices: string"],
    outputs=["tensors: dtypes"], attrs=["dtypes: list(type) >= 1", "shapes: list(shape) >= 0 = []"],
    is_stateful=True, grad=NOT_DIFFERENTIABLE,
    doc="Reads the named tensors (or slices) of the checkpoint at prefix, all verified before any is returned. "
        "With shapes, each value's shape is checked too.")
DEFS.define("MergeV2Checkpoints", inputs=["checkpoint_prefixes: N * string", "destination_prefix: string"],
            attrs=["N: int >= 1", "delete_old_dirs: bool = True"], is_stateful=True, grad=NOT_DIFFERENTIABLE,
            doc="Makes one checkpoint at destination_prefix of the per-shard checkpoints of a sharded save.")
DEFS.define("ShardedFilename", inputs=["basename: string", "shard: int32", "num_shards: int32"],
            outputs=["filename: string"], grad=NOT_DIFFERENTIABLE, shape_fn=common_shapes.scalar_shape,
            doc="basename-00001-of-00004: the name of one shard.")
STRING_JOIN = DEFS.define("StringJoin", inputs=["inputs: N * string"], outputs=["output: string"],
                          attrs=["N: int >= 1", "separator: string = ''"], grad=NOT_DIFFERENTIABLE,
                          doc="Joins strings elementwise (scalars broadcast).")
DEFS.define("ReadFile", inputs=["filename: string"], outputs=["contents: string"], grad=NOT_DIFFERENTIABLE,
            shape_fn=common_shapes.scalar_shape, doc="The bytes of a file.")
DEFS.define("WriteFile", inputs=["filename: string", "contents: string"], is_stateful=True,
            grad=NOT_DIFFERENTIABLE, doc="Writes bytes to a file (atomically), creating its directory.")


@RESTORE.set_shape_fn
def _restore_shape(op):
    shapes = op.get_attr("shapes")
    if shapes:
        return list(shapes)
    specs = constant_value(op.inputs[2])
    out = []
    for i in range(len(op.outputs)):
        spec = specs.reshape(-1)[i] if specs is not None and specs.size == len(op.outputs) else None
        out.append(_slice_shape(spec))


def _slice_shape(spec):
    if spec is None:
        return tensor_shape.TensorShape(None)
    from tensorweave.runtime.checkpoint_format import parse_shape_and_slice
    _, extents = parse_shape_and_slice(spec)
    return tensor_shape.TensorShape(None) if extents is None else tensor_shape.TensorShape([n for _, n in extents])


@STRING_JOIN.set_shape_fn
def _string_join_shape(op):
    result = tensor_shape.TensorShape([])
    for t in op.inputs:
        if t.shape.ndims != 0:
            result = t.shape if result.ndims == 0 else result.merge_with(t.shape)
    return result


def save_v2(prefix, tensor_names, shape_and_slices, tensors, name=None):
    """Saves ``tensors`` under ``tensor_names`` as the checkpoint ``prefix``."""
    return apply_op("SaveV2", [prefix, _strings(tensor_names), _strings(shape_and_slices), list(tensors)],
                    name=name or "SaveV2")


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes, shapes=None, name=None):  # noqa: A002
    """Reads ``tensor_names`` from the checkpoint ``prefix``; returns one tensor per name."""
    return apply_op("RestoreV2", [prefix, _strings(tensor_names), _strings(shape_and_slices)],
                   {"dtypes": list(dtypes), "shapes": list(shapes or [])}, name=name or "RestoreV2")


def merge_v2_checkpoints(checkpoint_prefixes, destination_prefix, delete_old_dirs=True, name=None):
    return apply_op("MergeV2Checkpoints", [list(checkpoint_prefixes), destination_prefix],
                    {"delete_old_dirs": delete_old_dirs}, name=name or "MergeV2Checkpoints")


def sharded_filename(basename, shard, num_shards, name=None):
    return apply_op("ShardedFilename", [basename, shard, num_shards], name=name or "ShardedFilename")


def string_join(inputs, separator="", name=None):
    """Joins string tensors elementwise: ``tf.string_join(['a', t], '/')``."""
    return apply_op("StringJoin", [[convert_to_tensor(i, dtype=dtypes.string) for i in inputs]],
                    {"separator": separator}, name=name or "StringJoin")


def read_file(filename, name=None):
    return apply_op("ReadFile", [convert_to_tensor(filename, dtype=dtypes.string)], name=name or "ReadFile")


def write_file(filename, contents, name=None):
    return apply_op("WriteFile", [convert_to_tensor(filename, dtype=dtypes.string),
                                  convert_to_tensor(contents, dtype=dtypes.string)], name=name or "WriteFile")


def _strings(values):
    return convert_to_tensor(values, dtype=dtypes.string)
