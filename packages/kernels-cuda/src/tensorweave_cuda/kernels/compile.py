"""Compiling the hand-written CUDA kernels once per dtype, and their launch grids.

A kernel source is written once against ``scalar_t`` (how a value is stored), ``acc_t`` (what it is computed
in: float for float16), ``load``/``store`` between the two, ``atomic_add`` and ``LOWEST``; ``prelude(dtype)``
defines them for one dtype. float16 is handled with PTX conversions, so the sources need no CUDA header and
NVRTC can check them on a machine without a GPU (``ptx``).
"""

import functools

import numpy as np

THREADS = 256
MAX_BLOCKS = 65535 * 4  # grid-stride loops cover the rest

_HALF = r"""
typedef unsigned short scalar_t;
typedef float acc_t;
__device__ __forceinline__ float load(unsigned short h) {
    float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short store(float f) {
    unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ void atomic_add(unsigned short* at, float value) {
    unsigned short v = store(value);
#if __CUDA_ARCH__ >= 700
    unsigned short old;
    asm volatile("atom.global.add.noftz.f16 %0, [%1], %2;" : "=h"(old) : "l"(at), "h"(v) : "memory");
#else  /* no native half atomics: compare-and-swap the aligned 32-bit word holding it */
    unsigned int* word = (unsigned int*)((size_t)at & ~(size_t)3);
    bool high = ((size_t)at & 2) != 0;
    unsigned int old = *word, assumed;
    do {
        assumed = old;
        unsigned short mine = high ? (unsigned short)(assumed >> 16) : (unsigned short)(assumed & 0xffffu);
        unsigned int sum = store(load(mine) + load(v));
        unsigned int next = high ? ((assumed & 0x0000ffffu) | (sum << 16)) : ((assumed & 0xffff0000u) | sum);
        old = atomicCAS(word, assumed, next);
    } while (assumed != old);
#endif
}
#define LOWEST (-__int_as_float(0x7f800000))
"""


def _plain(c_type, lowest, atomic_add="atomicAdd(at, value);"):
    """The prelude of a type stored and computed as itself: load/store are the identity."""
    return f"""
typedef {c_type} scalar_t;
typedef {c_type} acc_t;
__device__ __forceinline__ {c_type} load({c_type} v) {{ return v; }}
__device__ __forceinline__ {c_type} store({c_type} v) {{ return v; }}
__device__ __forceinline__ void atomic_add({c_type}* at, {c_type} value) {{
{atomic_add}
}}
#define LOWEST ({lowest})
"""


_DOUBLE_ATOMIC_ADD = r"""
#if __CUDA_ARCH__ >= 600
    atomicAdd(at, value);
#else  /* no native double atomics before Pascal */
    unsigned long long* word = (unsigned long long*)at;
    unsigned long long old = *word, assumed;
    do {
        assumed = old;
        old = atomicCAS(word, assumed, __double_as_longlong(__longlong_as_double(assumed) + value));
    } while (assumed != old);
#endif"""

PRELUDES = {"float16": _HALF, "float32": _plain("float", "-__int_as_float(0x7f800000)"),
            "float64": _plain("double", "-__longlong_as_double(0x7ff0000000000000LL)", _DOUBLE_ATOMIC_ADD),
            "int32": _plain("int", "-2147483647 - 1"),
            "int64": _plain("long long", "-9223372036854775807LL - 1",
                            "atomicAdd((unsigned long long*)at, (unsigned long long)value);")}
INDEX_TYPES = {"int32": "int", "int64": "long long"}
FLOATS = ("float16", "float32", "float64")


def dtype_name(dtype):
    """The numpy name of ``dtype`` (a tensorweave DType, numpy dtype or string)."""
    return np.dtype(getattr(dtype, "as_numpy_dtype", dtype)).name


def acc_dtype(dtype):
    """The numpy dtype a kernel computes ``dtype`` in (float32 for float16), for scalar arguments."""
    name = dtype_name(dtype)
    return np.dtype(np.float32 if name == "float16" else name)


def prelude(dtype, index_dtype="int64"):
    name, index = dtype_name(dtype), dtype_name(index_dtype)
    if name not in PRELUDES:
        raise TypeError(f"no CUDA kernel source for dtype {name}; hand-written GPU kernels take "
                        f"{', '.join(PRELUDES)}")
    if index not in INDEX_TYPES:
        raise TypeError(f"indices must be int32 or int64, got {index}")
    return PRELUDES[name] + f"typedef {INDEX_TYPES[index]} index_t;\n"


def source(body, dtype, index_dtype="int64"):
    """The full CUDA C of ``body`` for one dtype (and index dtype)."""
    return prelude(dtype, index_dtype) + body


def ptx(body, dtype, index_dtype="int64", arch="compute_80"):
    """Compiles ``body`` for ``dtype`` with NVRTC alone (no GPU needed) and returns the PTX; raises with NVRTC's
    log on an error. For tests and checks: kernels that run are compiled by CuPy (``function``)."""
    from cupy.cuda import nvrtc
    program = nvrtc.createProgram(source(body, dtype, index_dtype), "tensorweave_kernel.cu", [], [])
    try:
        try:
            nvrtc.compileProgram(program, [f"-arch={arch}", "--std=c++14"])
        except nvrtc.NVRTCError as e:
            raise RuntimeError(f"NVRTC could not compile the kernel for {dtype_name(dtype)} ({arch}): {e}\n"
                               f"{nvrtc.getProgramLog(program)}") from None
        code = nvrtc.getPTX(program)
        return code.decode() if isinstance(code, bytes) else code
    finally:
        nvrtc.destroyProgram(program)


@functools.lru_cache(maxsize=None)
def _module(body, dtype, index_dtype):
    import cupy
    return cupy.RawModule(code=source(body, dtype, index_dtype), options=("--std=c++14",))


def function(body, name, dtype, index_dtype="int64"):
    """The compiled ``extern "C"`` kernel ``name`` of ``body`` for ``dtype``; compiled once per (dtype, device)."""
    return _module(body, dtype_name(dtype), dtype_name(index_dtype)).get_function(name)


def blocks(count, threads=THREADS):
    """Blocks for a grid-stride loop over ``count`` items: enough to fill the GPU, never more than needed."""
    return max(1, min(-(-int(count) // threads), MAX_BLOCKS))


def row_threads(row_length):
    """Threads of a one-block-per-row kernel: a power of two from 32 to 256, no more than the row needs."""
    threads = 32
    while threads < min(int(row_length), THREADS):
        threads *= 2
    return threads


def launch(kernel, count, args, threads=THREADS):
    """Runs ``kernel`` over ``count`` items (grid-stride), on the device of the first array argument."""
    if count == 0:
        return
    import cupy
    device = next((a.device for a in args if isinstance(a, cupy.ndarray)), None)
    with device if device is not None else cupy.cuda.Device():
        kernel((blocks(count, threads),), (threads,), args)


def launch_rows(kernel, rows, row_length, args):
    """Runs a one-block-per-row ``kernel`` (grid-stride over rows beyond the grid)."""
    if rows == 0:
        return
    with args[0].device:
        kernel((max(1, min(int(rows), MAX_BLOCKS)),), (row_threads(row_length),), args)
