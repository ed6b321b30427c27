"""CPU kernels for DepthToSpace and SpaceToDepth: one reshape, transpose and reshape each (NCHW via NHWC views)."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"DepthToSpace", "SpaceToDepth"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _nhwc(x, data_format):
    return x.transpose(0, 2, 3, 1) if data_format == "NCHW" else x


def _back(x, data_format):
    return x.transpose(0, 3, 1, 2) if data_format == "NCHW" else x


@KERNELS.register("DepthToSpace")
def _depth_to_space(x, *, block_size, data_format, xp):
    x = _nhwc(x, data_format)
    b, h, w, c = x.shape
    if c % (block_size * block_size):
        raise ValueError(f"DepthToSpace: input depth {c} is not divisible by block_size**2 ({block_size ** 2})")
    depth = c // (block_size * block_size)
    out = x.reshape(b, h, w, block_size, block_size, depth).transpose(0, 1, 3, 2, 4, 5)
    return _back(xp.ascontiguousarray(out).reshape(b, h * block_size, w * block_size, depth), data_format)


@KERNELS.register("SpaceToDepth")
def _space_to_depth(x, *, block_size, data_format, xp):
    x = _nhwc(x, data_format)
    b, h, w, c = x.shape
    if h % block_size or w % block_size:
        raise ValueError(f"SpaceToDepth: input height {h} and width {w} must be divisible by block_size {block_size}")
    out = x.reshape(b, h // block_size, block_size, w // block_size, block_size, c).transpose(0, 1, 3, 2, 4, 5)
    return _back(xp.ascontiguousarray(out).reshape(b, h // block_size, w // block_size, c * block_size ** 2),
                 data_format)
