"""GPU forms of the CPU kernels that hand out host values or call numpy functions on tensors: Const (uploaded
once per node), Range (cupy's arange takes host scalars), the segment sums and ScatterNd (``scatter_rows``: atomic adds
where CUDA has them) and Unique/UniqueWithCounts (``cupy.unique``). Same checks and messages as the CPU kernels."""

from tensorweave.extension import KernelSet, errors, range_size

from tensorweave_cpu.kernels.gather import index_tuple
from tensorweave_cuda.scatter_rows import scatter_rows

KERNELS = KernelSet("GPU")


@KERNELS.register_build("Const")
def _const(node):
    value = node.device.from_host(node.attrs["value"])  # once, when the node's kernel is built
    return lambda: value


@KERNELS.register_build("Range")
def _range(node):
    xp = node.device.array_module
    dtype = node.output_dtypes[0].as_numpy_dtype

    def compute(start, limit, delta):
        start, limit, delta = start.item(), limit.item(), delta.item()
        range_size(start, limit, delta)
        return xp.arange(start, limit, delta, dtype=dtype)

    return compute


def _sum_rows(xp, data, ids, count):
    """Rows of ``data`` (flattened over ids' shape) added into ``count`` rows by id; negative ids dropped."""
    flat_ids = ids.reshape(-1)
    rows = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
    too_big = flat_ids >= count
    if too_big.any():
        at = int(too_big.argmax())
        raise ValueError(f"segment_ids[{at}] = {int(flat_ids[at])} is out of range [0, {count})")
    kept = flat_ids >= 0
    if not kept.all():
        flat_ids, rows = flat_ids[kept], rows[kept]
    accumulate = "float32" if data.dtype == "float16" else data.dtype
    out = xp.zeros((count,) + rows.shape[1:], dtype=accumulate)
    scatter_rows(xp, "add", out, flat_ids, rows.astype(accumulate, copy=False))
    return out.astype(data.dtype, copy=False)


@KERNELS.register("UnsortedSegmentSum")
def _unsorted_segment_sum(data, segment_ids, num_segments, *, xp):
    if data.shape[:segment_ids.ndim] != segment_ids.shape:
        raise ValueError(f"segment_ids of shape {segment_ids.shape} must be a prefix of data's shape {data.shape}")
    count = int(num_segments)
    if count < 0:
        raise ValueError(f"num_segments must be non-negative, got {count}")
    return _sum_rows(xp, data, segment_ids, count)


@KERNELS.register("SegmentSum")
def _segment_sum(data, segment_ids, *, xp):
    if segment_ids.ndim != 1 or data.ndim < 1 or segment_ids.shape[0] != data.shape[0]:
        raise ValueError(f"segment_ids must be a vector with one entry per row of data: shapes "
                         f"{segment_ids.shape} and {data.shape}")
    if segment_ids.size and bool((segment_ids[0] < 0) | (segment_ids[1:] < segment_ids[:-1]).any()):
        raise ValueError("segment ids must be non-negative and sorted (non-decreasing); use "
                         "tf.unsorted_segment_sum for unsorted ids")
    count = int(segment_ids[-1]) + 1 if segment_ids.size else 0
    return _sum_rows(xp, data, segment_ids, count)


@KERNELS.register("ScatterNd")
def _scatter_nd(indices, updates, shape, *, xp):
    shape = tuple(int(d) for d in shape.tolist())
    out = xp.zeros(shape, dtype=updates.dtype)
    columns = index_tuple(out, indices, "scatter_nd")  # the CPU kernel's checks and messages
    expected = indices.shape[:-1] + shape[len(columns):]
    if updates.shape != expected:
        raise errors.InvalidArgumentError(None, None, (
            f"scatter_nd: updates must have shape indices.shape[:-1] + shape[{len(columns)}:] = {list(expected)}, "
            f"got {list(updates.shape)}"))
    if not columns:
        if updates.size:
            out += updates.reshape((-1,) + shape).sum(axis=0, dtype=out.dtype)
        return out
    depth = len(columns)
    rows = xp.ravel_multi_index(columns, shape[:depth]).reshape(-1)
    flat = out.reshape((-1,) + shape[depth:])
    scatter_rows(xp, "add", flat, rows, updates.reshape((-1,) + shape[depth:]))
    return out


def _unique(x, out_idx, xp):
    """(values in order of first appearance, idx, counts) of a vector, as the CPU kernel gives them."""
    if x.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"unique takes a 1-D tensor, got shape {list(x.shape)}")
    _, first, inverse, counts = xp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = xp.argsort(first)
    position = xp.empty_like(order)
    position[order] = xp.arange(order.size)
    dtype = out_idx.as_numpy_dtype
    return x[first[order]], position[inverse.reshape(-1)].astype(dtype), counts[order].astype(dtype)


@KERNELS.register("Unique")
def _unique_kernel(x, *, out_idx, xp):
    return list(_unique(x, out_idx, xp)[:2])


@KERNELS.register("UniqueWithCounts")
def _unique_with_counts(x, *, out_idx, xp):
    return list(_unique(x, out_idx, xp))
