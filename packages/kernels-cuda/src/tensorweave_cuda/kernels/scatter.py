"""GPU kernels that add rows into rows by index: UnsortedSegmentSum and ResourceScatterAdd, with atomics.

One thread per element adds its value into the row its id names (``atomic_add``: native for float32/64
and int32/64; float16 natively from sm_70 and by compare-and-swap of the enclosing 32-bit word before).
Ids are checked first, as on the CPU, so a bad id changes nothing. UnsortedSegmentSum of float16 adds into
a float32 buffer and rounds once at the end, as the CPU kernel accumulates float16 in float32.
"""

import numpy as np

from tensorweave.extension import KernelSet

from tensorweave_cuda.kernels import compile as cc
from tensorweave_cpu.kernels.state import check_scatter, owned_value, variable_of
from tensorweave_cuda.kernels.checks import check_rows, first_out_of_range

KERNELS = KernelSet("GPU", priority=10)

_DTYPES = list(cc.FLOATS) + ["int32", "int64"]

SOURCE = r"""
/* out[ids[r], c] += values[r, c] for r < rows, c < inner; rows whose id is negative are skipped.
   values_step 0 adds one scalar everywhere. */
extern "C" __global__ void scatter_add(const scalar_t* values, long long values_step, const index_t* ids,
                                       long long rows, long long inner, acc_out_t* out) {
    long long total = rows * inner;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long r = i / inner;
        long long id = (long long)ids[r];
        if (id < 0) continue;
        add_out(out + id * inner + (i - r * inner), load(values[i * values_step]));
    }
}
"""

_SAME_OUT = "typedef scalar_t acc_out_t;\n__device__ __forceinline__ void add_out(acc_out_t* at, acc_t v) { atomic_add(at, v); }\n"
_FLOAT_OUT = "typedef float acc_out_t;\n__device__ __forceinline__ void add_out(float* at, float v) { atomicAdd(at, v); }\n"


def body(accumulate_in_float32=False):
    """The scatter source: adding into the values' own dtype, or into a float32 buffer (for float16 sums)."""
    return (_FLOAT_OUT if accumulate_in_float32 else _SAME_OUT) + SOURCE


def segment_layout(data_shape, ids_shape, num_segments):
    """(rows, inner, out_shape) of an unsorted segment sum, with the CPU kernel's checks and messages."""
    data_shape, ids_shape = tuple(data_shape), tuple(ids_shape)
    if data_shape[:len(ids_shape)] != ids_shape:
        raise ValueError(f"segment_ids of shape {ids_shape} must be a prefix of data's shape {data_shape}")
    count = int(num_segments)
    if count < 0:
        raise ValueError(f"num_segments must be non-negative, got {count}")
    rows = int(np.prod(ids_shape, dtype=np.int64))
    inner = int(np.prod(data_shape[len(ids_shape):], dtype=np.int64))
    return rows, inner, (count,) + data_shape[len(ids_shape):]


def scatter_add_into(out, values, ids, rows, inner, scalar_values=False):
    """Adds ``values`` ([rows, inner], or one scalar) into rows ``ids`` of ``out`` (contiguous), atomically."""
    import cupy
    values = cupy.ascontiguousarray(values)
    ids = cupy.ascontiguousarray(ids)
    wide = out.dtype == np.float32 and values.dtype == np.float16
    kernel = cc.function(body(wide), "scatter_add", values.dtype, ids.dtype)
    cc.launch(kernel, rows * inner, (values, np.int64(0 if scalar_values else 1), ids, np.int64(rows),
                                     np.int64(inner), out))


@KERNELS.register("UnsortedSegmentSum", dtypes=_DTYPES)
def _unsorted_segment_sum(data, segment_ids, num_segments, *, xp):
    rows, inner, out_shape = segment_layout(data.shape, segment_ids.shape, int(num_segments))
    at = first_out_of_range(segment_ids, None, out_shape[0])
    if at is not None:
        raise ValueError(f"segment_ids[{at}] = {int(segment_ids.reshape(-1)[at])} is out of range "
                         f"[0, {out_shape[0]})")
    accumulate = np.float32 if data.dtype == np.float16 else data.dtype
    out = xp.zeros(out_shape, dtype=accumulate)
    scatter_add_into(out, data, segment_ids, rows, inner)
    return out.astype(data.dtype, copy=False)


@KERNELS.register("ResourceScatterAdd", dtypes={"dtype": _DTYPES})
def _resource_scatter_add(handle, indices, updates, *, dtype, xp):
    var = variable_of(handle, dtype)
    with var.lock:
        current = owned_value(var)
        scalar = check_scatter(var, current.shape, indices, updates.shape, check_rows)
        if not current.flags.c_contiguous:
            var.value = current = xp.ascontiguousarray(current)
        rows = int(indices.size)
        inner = int(np.prod(current.shape[1:], dtype=np.int64))
        scatter_add_into(current, xp.asarray(updates, dtype=current.dtype), indices, rows, inner, scalar)
