"""Padding and tiling: pad (ops Pad, PadV2, MirrorPad, MirrorPadGrad) and tile (op Tile).

Paddings are an [rank, 2] tensor of (before, after) counts and multiples a [rank] tensor, as in TF;
both are checked while building when constant. Pad's gradient slices the padding off; MirrorPad's folds
the mirrored entries back (MirrorPadGrad); Tile's sums the copies.
"""

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList
from tensorweave.framework.tensor_conversion import convert_to_tensor, is_tensor_like
from tensorweave.framework.tensor_util import constant_value, constant_value_as_shape
from tensorweave.ops import (
    concat_split_ops, range_ops, reduction_ops, shape_ops, slicing_ops, transpose_ops, unary_math_ops,
)

DEFS = OpDefList()

__all__ = ["pad", "tile"]

MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")
_PADDINGS = "Tpaddings: {int32, int64} = int32"
_MIRROR_MODE = "mode: {'REFLECT', 'SYMMETRIC'}"

PAD = DEFS.define("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
                  attrs=["T: any", _PADDINGS], doc="Pads with zeros (empty strings, False).")
PAD_V2 = DEFS.define("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
                     outputs=["output: T"], attrs=["T: any", _PADDINGS], doc="Pads with a given scalar.")
MIRROR_PAD = DEFS.define("MirrorPad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
                         attrs=["T: any", _PADDINGS, _MIRROR_MODE],
                         doc="Pads with the input's mirror image, without (REFLECT) or with (SYMMETRIC) the edge.")
MIRROR_PAD_GRAD = DEFS.define("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
                              attrs=["T: any", _PADDINGS, _MIRROR_MODE],
                              doc="MirrorPad's gradient: adds each mirrored entry back onto its source.")


def _paddings(op):
    """(rank or None, [(before, after)] or None) from the input and the paddings, validated."""
    x, paddings = op.inputs[:2]
    if paddings.shape.ndims is not None and (paddings.shape.ndims != 2 or
                                            not paddings.shape[1].is_compatible_with(2)):
        raise ValueError(f"paddings must have shape [rank, 2], got shape {paddings.shape}")
    rank = x.shape.ndims
    rows = paddings.shape[0].value if paddings.shape.ndims == 2 else None
    if rank is not None and rows is not None and rank != rows:
        raise ValueError(f"paddings must have shape [rank, 2] = [{rank}, 2] for an input of shape {x.shape}, "
                         f"got shape {paddings.shape}")
    value = constant_value(paddings)
    if value is None:
        return (rank if rank is not None else rows), None
    pairs = [(int(b), int(a)) for b, a in np.asarray(value).reshape(-1, 2)]
    if any(b < 0 or a < 0 for b, a in pairs):
        raise ValueError(f"paddings must be non-negative, got {np.asarray(value).tolist()}")
    return len(pairs), pairs


def _padded_shape(op, limit=None):
    rank, pairs = _paddings(op)
    if rank is None:
        return tensor_shape.TensorShape(None)
    if pairs is None:
        return tensor_shape.unknown_shape(rank)
    x = op.inputs[0]
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * rank
    if limit is not None:
        for i, (d, (b, a)) in enumerate(zip(dims, pairs)):
            if d is not None and max(b, a) > d - limit:
                raise ValueError(f"{op.get_attr('mode')} padding of dimension {i} (size {d}) by ({b}, {a}) is too "
                                 f"large: each side may be at most {d - limit}")
    return tensor_shape.TensorShape([None if d is None else d + b + a for d, (b, a) in zip(dims, pairs)])


def _mirror_limit(op):
    return 1 if op.get_attr("mode") == "REFLECT" else 0


PAD.set_shape_fn(_padded_shape)
MIRROR_PAD.set_shape_fn(lambda op: _padded_shape(op, _mirror_limit(op)))


@PAD_V2.set_shape_fn
def _pad_v2_shape(op):
    if op.inputs[2].shape.ndims not in (None, 0):
        raise ValueError(f"constant_values must be a scalar, got shape {op.inputs[2].shape}")
    return _padded_shape(op)


@MIRROR_PAD_GRAD.set_shape_fn
def _mirror_pad_grad_shape(op):
    rank, pairs = _paddings(op)
    if rank is None or pairs is None:
        return tensor_shape.unknown_shape(rank)
    grad = op.inputs[0]
    dims = grad.shape.as_list() if grad.shape.ndims is not None else [None] * rank
    return tensor_shape.TensorShape([None if d is None else d - b - a for d, (b, a) in zip(dims, pairs)])


def _unpadded(op, grad):
    """The part of ``grad`` over the unpadded input: a slice from the paddings' before-counts."""
    x, paddings = op.inputs[:2]
    value = constant_value(paddings)
    if value is not None:
        begin = [int(b) for b in np.asarray(value).reshape(-1, 2)[:, 0]]
    else:
        begin = concat_split_ops.unstack(paddings, num=2, axis=1)[0]
        if begin.dtype != dtypes.int32:
            begin = unary_math_ops.cast(begin, dtypes.int32)
    size = x.shape.as_list() if x.shape.is_fully_defined() else shape_ops.shape(x)
    return slicing_ops.slice(convert_to_tensor(grad), begin, size)


PAD.set_gradient(lambda op, grad: [_unpadded(op, grad), None])
PAD_V2.set_gradient(lambda op, grad: [_unpadded(op, grad), None, None])
MIRROR_PAD.set_gradient(lambda op, grad: [
    apply_op("MirrorPadGrad", [convert_to_tensor(grad), op.inputs[1]], {"mode": op.get_attr("mode")}), None])
MIRROR_PAD_GRAD.set_gradient(lambda op, grad: [
    apply_op("MirrorPad", [grad, op.inputs[1]], {"mode": op.get_attr("mode")}), None])


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):  # noqa: A002
    """Pads ``tensor`` by ``paddings`` ([rank, 2] of before/after counts). ``mode`` (any case): CONSTANT
    fills with ``constant_values``; REFLECT mirrors without the edge; SYMMETRIC mirrors with it."""
    upper = mode.upper() if isinstance(mode, str) else mode
    if upper == "CONSTANT":
        if not is_tensor_like(constant_values) and np.ndim(constant_values) == 0 and _is_zero(constant_values):
            return apply_op("Pad", [tensor, paddings], name=name or "Pad")
        return apply_op("PadV2", [tensor, paddings, constant_values], name=name or "PadV2")
    if upper in ("REFLECT", "SYMMETRIC"):
        return apply_op("MirrorPad", [tensor, paddings], {"mode": upper}, name=name or "MirrorPad")
    raise ValueError(f"pad: mode must be one of {', '.join(repr(m) for m in MODES)} (any case), got {mode!r}")


def _is_zero(value):
    return not isinstance(value, (str, bytes)) and value == 0


# ---- Tile -----------------------------------------------------------------------------------------------------------
TILE = DEFS.define("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
                   attrs=["T: any", "Tmultiples: {int32, int64} = int32"],
                   doc="Repeats the input multiples[i] times along each dimension i.")


@TILE.set_shape_fn
def _tile_shape(op):
    x, multiples = op.inputs
    if multiples.shape.ndims not in (None, 1):
        raise ValueError(f"multiples must be a vector, got shape {multiples.shape}")
    rank = x.shape.ndims
    n = multiples.shape[0].value if multiples.shape.ndims == 1 else None
    if rank is not None and n is not None and rank != n:
        raise ValueError(f"multiples has {n} entries, but the input has rank {rank}; give one multiple per "
                         f"dimension")
    rank = rank if rank is not None else n
    if rank is None:
        return tensor_shape.TensorShape(None)
    known = constant_value(multiples)
    if known is not None and (np.asarray(known) < 0).any():
        raise ValueError(f"multiples must be non-negative, got {np.asarray(known).tolist()}")
    times = constant_value_as_shape(multiples)
    times = times.as_list() if times.ndims == rank else [None] * rank
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * rank
    return tensor_shape.TensorShape([None if d is None or m is None else d * m for d, m in zip(dims, times)])


@TILE.set_gradient
def _tile_grad(op, grad):
    """Reshape the gradient to [m0, d0, m1, d1, ...] and sum over the multiples' axes."""
    x, multiples = op.inputs
    grad = convert_to_tensor(grad)
    known = constant_value(multiples)
    if known is not None and x.shape.is_fully_defined():
        split_shape = [int(v) for pair in zip(np.asarray(known).reshape(-1), x.shape.as_list()) for v in pair]
    else:
        split_shape = shape_ops.reshape(
            transpose_ops.transpose(concat_split_ops.stack([multiples, shape_ops.shape(x, out_type=multiples.dtype)])),
            [-1])
    rank = x.shape.ndims if x.shape.ndims is not None else (
        multiples.shape[0].value if multiples.shape.ndims == 1 else None)
    axes = list(range(0, 2 * rank, 2)) if rank is not None else range_ops.range(0, shape_ops.size(split_shape), 2)
    return [reduction_ops.reduce_sum(shape_ops.reshape(grad, split_shape), axes), None]


def tile(input, multiples, name=None):  # noqa: A002 - TF's argument name
    """``input`` repeated ``multiples[i]`` times along each dimension i (one multiple per dimension)."""
    return apply_op("Tile", [input, multiples], name=name or "Tile")
