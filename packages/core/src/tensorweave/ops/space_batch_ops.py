"""SpaceToBatchND and BatchToSpaceND (each the other's gradient): zero-pad the spatial dimensions and move
``block_shape`` blocks of them into the batch, and back, cropping. TF1 builds dilated convolutions and pools on
them (``with_space_to_batch`` in convolution_ops); ``tf.space_to_batch``/``batch_to_space`` are their 2-D forms."""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import graph as graph_mod, tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import concat_split_ops, math_ops

DEFS = OpDefList()

__all__ = ["batch_to_space", "batch_to_space_nd", "required_space_to_batch_paddings", "space_to_batch",
           "space_to_batch_nd"]

_INDEX_ATTRS = ["Tblock_shape: {int32, int64} = int32", "Tpaddings: {int32, int64} = int32"]
_INDEX_ATTRS_CROPS = ["Tblock_shape: {int32, int64} = int32", "Tcrops: {int32, int64} = int32"]

SPACE_TO_BATCH_ND = DEFS.define(
    "SpaceToBatchND", inputs=["input: T", "block_shape: Tblock_shape", "paddings: Tpaddings"],
    outputs=["output: T"], attrs=["T: type", *_INDEX_ATTRS],
    doc="Zero-pads dims 1..M and moves block_shape blocks of them into the batch (block-major).")
BATCH_TO_SPACE_ND = DEFS.define(
    "BatchToSpaceND", inputs=["input: T", "block_shape: Tblock_shape", "crops: Tcrops"], outputs=["output: T"],
    attrs=["T: type", *_INDEX_ATTRS_CROPS],
    doc="Moves block_shape blocks of the batch back into dims 1..M and crops them: SpaceToBatchND's inverse.")


def _static(op, index, what):
    """The constant value of ``op``'s input ``index`` (block_shape, paddings or crops), or None."""
    value = constant_value(op.inputs[index])
    if value is None:
        return None
    value = np.asarray(value)
    if what == "block_shape":
        if value.ndim != 1 or np.any(value < 1):
            raise ValueError(f"{op.type} {op.name!r}: block_shape must be a vector of positive ints, got "
                             f"{value.tolist()}")
    elif value.ndim != 2 or value.shape[1] != 2 or np.any(value < 0):
        raise ValueError(f"{op.type} {op.name!r}: {what} must be an [M, 2] matrix of non-negative ints, got "
                         f"{value.tolist()}")
    return value


def _block_count(op):
    """M, the number of blocked dimensions, from whichever of block_shape and paddings/crops tells it."""
    for t, dim in ((op.inputs[1], 0), (op.inputs[2], 0)):
        n = t.shape.with_rank(1 if t is op.inputs[1] else 2)[dim].value
        if n is not None:
            return n
    return None


def _shape_fn(op, forward):
    x = op.inputs[0].shape
    m = _block_count(op)
    if x.ndims is None or m is None:
        return tensor_shape.TensorShape(None) if x.ndims is None else tensor_shape.unknown_shape(x.ndims)
    if x.ndims < m + 1:
        raise ValueError(f"{op.type} {op.name!r}: input of shape {x} has too few dimensions for {m} blocked "
                         f"dimensions after the batch")
    block = _static(op, 1, "block_shape")
    pads = _static(op, 2, "paddings" if forward else "crops")
    dims = x.as_list()
    if block is None:
        return tensor_shape.TensorShape([None] * (m + 1) + dims[m + 1:])
    if block.shape[0] != m or (pads is not None and pads.shape[0] != m):
        raise ValueError(f"{op.type} {op.name!r}: block_shape has {block.shape[0]} entries but "
                         f"{'paddings' if forward else 'crops'} has {m} rows")
    total = int(np.prod(block))
    out = [None] * (m + 1) + dims[m + 1:]
    if dims[0] is not None:
        if not forward and dims[0] % total:
            raise ValueError(f"BatchToSpaceND {op.name!r}: the batch {dims[0]} is not divisible by the product of "
                             f"block_shape {block.tolist()} ({total})")
        out[0] = dims[0] * total if forward else dims[0] // total
    for i in range(m):
        d = dims[i + 1]
        if d is None or pads is None:
            continue
        if forward:
            padded = d + int(pads[i].sum())
            if padded % block[i]:
                raise ValueError(f"SpaceToBatchND {op.name!r}: padded dimension {i + 1} ({d} + {pads[i].tolist()} "
                                 f"= {padded}) is not divisible by block_shape[{i}] = {block[i]}")
            out[i + 1] = padded // int(block[i])
        else:
            size = d * int(block[i]) - int(pads[i].sum())
            if size < 0:
                raise ValueError(f"BatchToSpaceND {op.name!r}: crops {pads[i].tolist()} of dimension {i + 1} are "
                                 f"larger than its size {d * int(block[i])}")
            out[i + 1] = size
    return tensor_shape.TensorShape(out)


SPACE_TO_BATCH_ND.set_shape_fn(lambda op: _shape_fn(op, True))
BATCH_TO_SPACE_ND.set_shape_fn(lambda op: _shape_fn(op, False))


@SPACE_TO_BATCH_ND.set_gradient
def _space_to_batch_nd_grad(op, grad):
    return [batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@BATCH_TO_SPACE_ND.set_gradient
def _batch_to_space_nd_grad(op, grad):
    return [space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]


def _index(value, name):
    return value if hasattr(value, "op") else convert_to_tensor(value, dtype=dtypes.int32, name=name)


def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002
    """[b, d1..dM, rest] → [b * prod(block_shape), (d_i + pad_i) / block_i ..., rest] (TF's order: the block
    offset is the major part of the new batch index)."""
    with graph_mod.name_scope(name, "SpaceToBatchND", [input, block_shape, paddings]) as scope:
        return apply_op("SpaceToBatchND", [input, _index(block_shape, "block_shape"), _index(paddings, "paddings")],
                        name=scope)


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002
    """The inverse of ``space_to_batch_nd``: [b * prod(block), s_i ..., rest] → [b, s_i * block_i - crop_i, rest]."""
    with graph_mod.name_scope(name, "BatchToSpaceND", [input, block_shape, crops]) as scope:
        return apply_op("BatchToSpaceND", [input, _index(block_shape, "block_shape"), _index(crops, "crops")],
                        name=scope)


def _block_size(block_size, block_shape, who):
    if block_size is not None and block_shape is not None:
        raise ValueError(f"{who}: pass only one of block_size= and block_shape=")
    size = block_size if block_size is not None else block_shape
    if size is None:
        raise TypeError(f"{who} needs block_size")
    if isinstance(size, (list, tuple)):
        return [int(s) for s in size]
    return [int(size), int(size)]


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None):  # noqa: A002
    """TF1's ``tf.space_to_batch``: ``space_to_batch_nd`` over height and width with a square block."""
    return space_to_batch_nd(input, _block_size(block_size, block_shape, "space_to_batch"), paddings, name=name)


def batch_to_space(input, crops, block_size=None, name=None, block_shape=None):  # noqa: A002
    """TF1's ``tf.batch_to_space``: ``batch_to_space_nd`` over height and width with a square block."""
    return batch_to_space_nd(input, _block_size(block_size, block_shape, "batch_to_space"), crops, name=name)


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """(paddings, crops) that make ``input_shape`` (plus ``base_paddings``) divisible by ``block_shape``: the
    extra padding goes at the end and is cropped away again. Constants where the arguments are."""
    with graph_mod.name_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        shape, block = (convert_to_tensor(v, dtype=dtypes.int32, name=n)
                        for v, n in ((input_shape, "input_shape"), (block_shape, "block_shape")))
        m = block.shape.with_rank(1)[0].value
        if base_paddings is None:
            base_paddings = np.zeros([m, 2], np.int32)
        base = convert_to_tensor(base_paddings, dtype=dtypes.int32, name="base_paddings")
        known = [constant_value(t) for t in (shape, block, base)]
        if all(v is not None for v in known):
            shape_v, block_v, base_v = (np.asarray(v, np.int32) for v in known)
            extra = (block_v - (shape_v + base_v[:, 0] + base_v[:, 1]) % block_v) % block_v
            paddings = np.stack([base_v[:, 0], base_v[:, 1] + extra], axis=1)
            crops = np.stack([np.zeros_like(extra), extra], axis=1)
            return (convert_to_tensor(paddings, dtype=dtypes.int32, name="paddings"),
                    convert_to_tensor(crops, dtype=dtypes.int32, name="crops"))
        start, end = base[:, 0], base[:, 1]
        full = shape + start + end
        extra = math_ops.floormod(block - math_ops.floormod(full, block), block)
        paddings = concat_split_ops.stack([start, end + extra], axis=1, name="paddings")
        crops = concat_split_ops.stack([math_ops.multiply(extra, 0), extra], axis=1, name="crops")
        return paddings, crops
