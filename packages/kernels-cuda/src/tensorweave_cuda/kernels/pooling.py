"""GPU kernels for max and average pooling and their gradients (RawKernels, NHWC and NCHW in place).

Forward kernels run a thread per output element over its window; AvgPoolGrad runs a thread per input
element over the windows that cover it (no atomics, deterministic); MaxPoolGrad sends each window's
gradient to the first maximum (the CPU kernel's choice) with ``atomic_add``, as windows may overlap.
Average pooling divides by the number of non-padding elements, as TF does.
"""

from tensorweave.extension import KernelSet

from tensorweave_cpu.kernels.pooling import check_grad, pool_windows
from tensorweave_cpu.kernels.sliding_windows import nhwc_shape, to_nhwc
from tensorweave_cuda.kernels import compile as cc
from tensorweave_cuda.kernels.windows import (
    GEOMETRY_PARAMS, from_nhwc_shape, strides_args, strides_params, window_args)

KERNELS = KernelSet("GPU", priority=10)

SOURCE = r"""
#define GEOMETRY %(geometry)s
/* Output element i in NHWC order: its batch, row, column and channel. */
#define SPLIT_OUT(i) long long ch = i %% c; long long ox = (i / c) %% ow; long long oy = (i / (c * ow)) %% oh; \
                     long long b = i / (c * ow * oh);
#define GRID_LOOP(i, total) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (total); \
                                 i += (long long)gridDim.x * blockDim.x)
/* Each in-bounds (row, col) of output (oy, ox)'s window, row by row (padding skipped); X_AT reads x there. */
#define FOR_WINDOW(row, col) \
    for (long long row = oy * sh - pt, row_end = row + kh; row < row_end; ++row) if (row >= 0 && row < h) \
        for (long long col = ox * sw - pl, col_end = col + kw; col < col_end; ++col) if (col >= 0 && col < w)
#define X_AT(row, col) x[b * x0 + (row) * x1 + (col) * x2 + ch * x3]

extern "C" __global__ void max_pool(const scalar_t* x, %(x)s, scalar_t* y, %(y)s, GEOMETRY) {
    GRID_LOOP(i, n * oh * ow * c) {
        SPLIT_OUT(i)
        acc_t best = LOWEST;
        FOR_WINDOW(row, col) {
            acc_t v = load(X_AT(row, col));
            if (v > best || v != v) best = v;  /* NaN wins, as numpy's maximum */
        }
        y[b * y0 + oy * y1 + ox * y2 + ch * y3] = store(best);
    }
}

__device__ __forceinline__ long long valid_count(long long o, long long stride, long long pad, long long k,
                                                 long long size) {
    long long start = o * stride - pad;
    long long end = start + k < size ? start + k : size;
    return end - (start > 0 ? start : 0);
}

extern "C" __global__ void avg_pool(const scalar_t* x, %(x)s, scalar_t* y, %(y)s, GEOMETRY) {
    GRID_LOOP(i, n * oh * ow * c) {
        SPLIT_OUT(i)
        acc_t total = 0;
        FOR_WINDOW(row, col) total += load(X_AT(row, col));
        acc_t count = (acc_t)(valid_count(oy, sh, pt, kh, h) * valid_count(ox, sw, pl, kw, w));
        y[b * y0 + oy * y1 + ox * y2 + ch * y3] = store(total / count);
    }
}

/* dx (zeroed, contiguous in its layout) gets each window's gradient at the window's first maximum. */
extern "C" __global__ void max_pool_grad(const scalar_t* x, %(x)s, const scalar_t* y, %(y)s,
                                         const scalar_t* g, %(g)s, scalar_t* dx, %(dx)s, GEOMETRY) {
    GRID_LOOP(i, n * oh * ow * c) {
        SPLIT_OUT(i)
        acc_t best = load(y[b * y0 + oy * y1 + ox * y2 + ch * y3]);
        long long at = -1;
        FOR_WINDOW(row, col) {
            if (at < 0 && load(X_AT(row, col)) == best) at = b * dx0 + row * dx1 + col * dx2 + ch * dx3;
        }
        if (at >= 0) atomic_add(dx + at, load(g[b * g0 + oy * g1 + ox * g2 + ch * g3]));
    }
}

/* Input element i gets grad / count of every window that covers it. */
extern "C" __global__ void avg_pool_grad(const scalar_t* g, %(g)s, scalar_t* dx, %(dx)s, GEOMETRY) {
    GRID_LOOP(i, n * h * w * c) {
        long long ch = i %% c; long long col = (i / c) %% w; long long row = (i / (c * w)) %% h;
        long long b = i / (c * w * h);
        long long oy_lo = row + pt - kh + 1 > 0 ? (row + pt - kh + 1 + sh - 1) / sh : 0;
        long long oy_hi = (row + pt) / sh < oh - 1 ? (row + pt) / sh : oh - 1;
        long long ox_lo = col + pl - kw + 1 > 0 ? (col + pl - kw + 1 + sw - 1) / sw : 0;
        long long ox_hi = (col + pl) / sw < ow - 1 ? (col + pl) / sw : ow - 1;
        acc_t total = 0;
        for (long long oy = oy_lo; oy <= oy_hi; ++oy)
            for (long long ox = ox_lo; ox <= ox_hi; ++ox)
                total += load(g[b * g0 + oy * g1 + ox * g2 + ch * g3])
                         / (acc_t)(valid_count(oy, sh, pt, kh, h) * valid_count(ox, sw, pl, kw, w));
        dx[b * dx0 + row * dx1 + col * dx2 + ch * dx3] = store(total);
    }
}
""" % {"geometry": GEOMETRY_PARAMS, "x": strides_params("x"), "y": strides_params("y"), "g": strides_params("g"),
       "dx": strides_params("dx")}


def _run(name, dtype, count, arrays_and_formats, geo):
    args = []
    for array, data_format in arrays_and_formats:
        args.append(array)
        args.extend(strides_args(array, data_format))
    cc.launch(cc.function(SOURCE, name, dtype), count, tuple(args) + window_args(geo))


def _forward(name):
    def pool(x, *, ksize, strides, padding, data_format, xp, explicit_paddings=()):
        geo = pool_windows(nhwc_shape(x.shape, data_format), ksize, strides, padding, data_format, explicit_paddings)
        y = xp.empty(from_nhwc_shape(geo.out_shape, data_format), dtype=x.dtype)
        _run(name, x.dtype, y.size, [(x, data_format), (y, data_format)], geo)
        return y
    return pool


KERNELS.add("MaxPool", _forward("max_pool"), dtypes=list(cc.FLOATS))
KERNELS.add("AvgPool", _forward("avg_pool"), dtypes=list(cc.FLOATS))


@KERNELS.register("MaxPoolGrad", dtypes=list(cc.FLOATS))
def _max_pool_grad(x, out, grad, *, ksize, strides, padding, data_format, xp, explicit_paddings=()):
    geo = pool_windows(nhwc_shape(x.shape, data_format), ksize, strides, padding, data_format, explicit_paddings)
    check_grad(to_nhwc(grad, data_format), geo)
    dx = xp.zeros(x.shape, dtype=grad.dtype)
    _run("max_pool_grad", x.dtype, grad.size,
         [(x, data_format), (out, data_format), (grad, data_format), (dx, data_format)], geo)
    return dx


@KERNELS.register("AvgPoolGrad", dtypes=list(cc.FLOATS))
def _avg_pool_grad(orig_input_shape, grad, *, ksize, strides, padding, data_format, xp):
    in_shape = nhwc_shape(orig_input_shape, data_format)
    geo = pool_windows(in_shape, ksize, strides, padding, data_format)
    check_grad(to_nhwc(grad, data_format), geo)
    dx = xp.empty(from_nhwc_shape(in_shape, data_format), dtype=grad.dtype)
    _run("avg_pool_grad", grad.dtype, dx.size, [(grad, data_format), (dx, data_format)], geo)
    return dx

