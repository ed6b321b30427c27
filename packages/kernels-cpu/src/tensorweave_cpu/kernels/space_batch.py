"""CPU kernels for SpaceToBatchND and BatchToSpaceND: a pad (or crop), one reshape, transpose and reshape each."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"SpaceToBatchND", "BatchToSpaceND"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


def _check(op, x, block, pairs, what):
    m = block.shape[0] if block.ndim == 1 else -1
    if m < 0 or pairs.shape != (m, 2):
        raise ValueError(f"{op}: block_shape must be a vector of M ints and {what} an [M, 2] matrix, got shapes "
                         f"{list(block.shape)} and {list(pairs.shape)}")
    if x.ndim < m + 1:
        raise ValueError(f"{op}: input of shape {list(x.shape)} has too few dimensions for {m} blocked ones")
    if (block < 1).any() or (pairs < 0).any():
        raise ValueError(f"{op}: block_shape must be positive and {what} non-negative, got {block.tolist()} and "
                         f"{pairs.tolist()}")
    return [int(b) for b in block], [(int(a), int(b)) for a, b in pairs.tolist()]


@KERNELS.register("SpaceToBatchND")
def _space_to_batch_nd(x, block_shape, paddings, *, xp):
    block, pads = _check("SpaceToBatchND", x, block_shape, paddings, "paddings")
    m, rest = len(block), x.shape[len(block) + 1:]
    padded = xp.pad(x, [(0, 0), *pads] + [(0, 0)] * len(rest))
    for i, b in enumerate(block):
        if padded.shape[i + 1] % b:
            raise ValueError(f"SpaceToBatchND: padded dimension {i + 1} (size {padded.shape[i + 1]}) is not "
                             f"divisible by block_shape[{i}] = {b}")
    batch = x.shape[0]
    reduced = [padded.shape[i + 1] // b for i, b in enumerate(block)]
    split = padded.reshape([batch] + [d for r, b in zip(reduced, block) for d in (r, b)] + list(rest))
    # [batch, r1, b1, ..., rM, bM, rest] -> [b1..bM, batch, r1..rM, rest]
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(2 * m + 1, split.ndim))
    out = xp.ascontiguousarray(split.transpose(order))
    total = 1
    for b in block:
        total *= b
    return out.reshape([batch * total] + reduced + list(rest))


@KERNELS.register("BatchToSpaceND")
def _batch_to_space_nd(x, block_shape, crops, *, xp):
    block, crop = _check("BatchToSpaceND", x, block_shape, crops, "crops")
    m, rest = len(block), x.shape[len(block) + 1:]
    total = 1
    for b in block:
        total *= b
    if x.shape[0] % total:
        raise ValueError(f"BatchToSpaceND: the batch {x.shape[0]} is not divisible by the product of block_shape "
                         f"{block} ({total})")
    batch, spatial = x.shape[0] // total, list(x.shape[1:m + 1])
    for i, ((a, b), s, k) in enumerate(zip(crop, spatial, block)):
        if a + b > s * k:
            raise ValueError(f"BatchToSpaceND: crops ({a}, {b}) of dimension {i + 1} exceed its size {s * k}")
    split = x.reshape(block + [batch] + spatial + list(rest))
    # [b1..bM, batch, s1..sM, rest] -> [batch, s1, b1, ..., sM, bM, rest]
    order = [m] + [d for i in range(m) for d in (m + 1 + i, i)] + list(range(2 * m + 1, split.ndim))
    out = xp.ascontiguousarray(split.transpose(order)).reshape([batch] + [s * k for s, k in zip(spatial, block)]
                                                               + list(rest))
    return out[(slice(None),) + tuple(slice(a, s * k - b) for (a, b), s, k in zip(crop, spatial, block))]
