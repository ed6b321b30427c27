"""DepthToSpace and SpaceToDepth: move ``block_size x block_size`` blocks of pixels between the spatial axes and
the channels (each the other's gradient), as TF's ``tf.depth_to_space`` and ``tf.space_to_depth``."""

from tensorweave.framework import tensor_shape
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import OpDefList

DEFS = OpDefList()

__all__ = ["depth_to_space", "space_to_depth"]

_ATTRS = ["T: type", "block_size: int >= 2", "data_format: {'NHWC', 'NCHW'} = 'NHWC'"]

DEPTH_TO_SPACE = DEFS.define("DepthToSpace", inputs=["input: T"], outputs=["output: T"], attrs=_ATTRS,
                             doc="Moves channel blocks into block_size x block_size spatial blocks.")
SPACE_TO_DEPTH = DEFS.define("SpaceToDepth", inputs=["input: T"], outputs=["output: T"], attrs=_ATTRS,
                             doc="Moves block_size x block_size spatial blocks into the channels.")


def _axes(data_format):
    return (1, 2, 3) if data_format == "NHWC" else (2, 3, 1)


@DEPTH_TO_SPACE.set_shape_fn
def _depth_to_space_shape(op):
    dims = op.inputs[0].shape.with_rank(4).as_list()
    block = op.get_attr("block_size")
    h, w, c = _axes(op.get_attr("data_format"))
    if dims[c] is not None and dims[c] % (block * block):
        raise ValueError(f"{op.name}: input depth {dims[c]} is not divisible by block_size * block_size "
                         f"({block * block})")
    out = list(dims)
    out[h] = None if dims[h] is None else dims[h] * block
    out[w] = None if dims[w] is None else dims[w] * block
    out[c] = None if dims[c] is None else dims[c] // (block * block)
    return tensor_shape.TensorShape(out)


@SPACE_TO_DEPTH.set_shape_fn
def _space_to_depth_shape(op):
    dims = op.inputs[0].shape.with_rank(4).as_list()
    block = op.get_attr("block_size")
    h, w, c = _axes(op.get_attr("data_format"))
    for axis, what in ((h, "height"), (w, "width")):
        if dims[axis] is not None and dims[axis] % block:
            raise ValueError(f"{op.name}: input {what} {dims[axis]} is not divisible by block_size {block}")
    out = list(dims)
    out[h] = None if dims[h] is None else dims[h] // block
    out[w] = None if dims[w] is None else dims[w] // block
    out[c] = None if dims[c] is None else dims[c] * block * block
    return tensor_shape.TensorShape(out)


def _attrs(op):
    return {"block_size": op.get_attr("block_size"), "data_format": op.get_attr("data_format")}


@DEPTH_TO_SPACE.set_gradient
def _depth_to_space_grad(op, grad):
    return [apply_op("SpaceToDepth", [grad], _attrs(op), name="SpaceToDepth")]


@SPACE_TO_DEPTH.set_gradient
def _space_to_depth_grad(op, grad):
    return [apply_op("DepthToSpace", [grad], _attrs(op), name="DepthToSpace")]


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """[b, h, w, c] -> [b, h * block_size, w * block_size, c / block_size**2] (TF's element order)."""
    return apply_op("DepthToSpace", [input], {"block_size": int(block_size), "data_format": data_format},
                    name=name or "DepthToSpace")


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """[b, h, w, c] -> [b, h / block_size, w / block_size, c * block_size**2]."""
    return apply_op("SpaceToDepth", [input], {"block_size": int(block_size), "data_format": data_format},
                    name=name or "SpaceToDepth")
