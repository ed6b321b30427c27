"""CPU kernels for DynamicPartition and DynamicStitch: one stable sort or one scatter, no per-row loop."""

from tensorweave.extension import KernelSet

KERNELS = KernelSet("CPU")
ARRAY_NAMESPACE_GENERIC = frozenset({"DynamicPartition", "DynamicStitch"})
"""Ops whose kernels here use only the device's array module (numpy or cupy), so a GPU package registers them too."""


@KERNELS.register("DynamicPartition")
def _dynamic_partition(data, partitions, *, num_partitions, xp):
    if data.shape[:partitions.ndim] != partitions.shape:
        raise ValueError(f"partitions of shape {list(partitions.shape)} must be a prefix of data's shape "
                         f"{list(data.shape)}")
    flat = partitions.reshape(-1)
    bad = (flat < 0) | (flat >= num_partitions)
    if bad.any():
        raise ValueError(f"partitions[{int(xp.flatnonzero(bad)[0])}] = {int(flat[bad][0])} is not in "
                         f"[0, {num_partitions})")
    rows = data.reshape((flat.shape[0],) + data.shape[partitions.ndim:])
    order = xp.argsort(flat, kind="stable")
    ends = xp.cumsum(xp.bincount(flat, minlength=num_partitions)).tolist()
    starts = [0] + ends[:-1]
    ordered = rows[order]
    return [ordered[start:end] for start, end in zip(starts, ends)]


@KERNELS.register("DynamicStitch")
def _dynamic_stitch(*args, N, xp):
    indices, data = args[:N], args[N:]
    inner = data[0].shape[indices[0].ndim:]
    for index, values in zip(indices, data):
        if values.shape != index.shape + inner:
            raise ValueError(f"data of shape {list(values.shape)} must be its indices' shape {list(index.shape)} "
                             f"followed by {list(inner)}")
    flat_indices = xp.concatenate([i.reshape(-1) for i in indices])
    flat_data = xp.concatenate([d.reshape((-1,) + inner) for d in data])
    if flat_indices.size and int(flat_indices.min()) < 0:
        raise ValueError(f"dynamic_stitch indices must be non-negative, got {int(flat_indices.min())}")
    rows = int(flat_indices.max()) + 1 if flat_indices.size else 0
    merged = xp.zeros((rows,) + inner, dtype=data[0].dtype)
    # Where an index repeats, the last occurrence wins (TF's rule): keep each index's last position.
    _, last_reversed = xp.unique(flat_indices[::-1], return_index=True)
    keep = flat_indices.shape[0] - 1 - last_reversed
    merged[flat_indices[keep]] = flat_data[keep]
    return merged
