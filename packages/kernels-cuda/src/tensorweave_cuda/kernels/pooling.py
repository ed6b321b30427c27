"""GPU kernels for max and average pooling and their gradients (RawKernels, NHWC and NCHW in place).

Forward kernels run a thread per output element over its window; AvgPoolGrad runs a thread per input
element over the windows that cover it (no atomics, deterministic); MaxPoolGrad sends each window's
gradient to the first maximum (the CPU kernel's choice) with ``atomic_add``, as windows may overlap.
Average pooling divides by the number of non-padding elements, as TF does.
"""

from tensorweave.extension import KernelSet, spatial_params

from tensorweave_cuda.kernels import compile as cc
from tensorweave_cuda.kernels.windows import (
    GEOMETRY_PARAMS, Geometry, from_nhwc_shape, nhwc_shape, strides_args, strides_params)

KERNELS = KernelSet("GPU", priority=10)

SOURCE = r"""
#define GEOMETRY %(geometry)s
/* Output element i in NHWC order: its batch, row, column and channel. */
#define SPLIT_OUT(i) long long ch = i %% c; long long ox = (i / c) %% ow; long long oy = (i / (c * ow)) %% oh; \
                     long long b = i / (c * ow * oh);
#define GRID_LOOP(i, total) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (total); \
                                 i += (long long)gridDim.x * blockDim.x)

extern "C" __global__ void max_pool(const scalar_t* x, %(x)s, scalar_t* y, %(y)s, GEOMETRY) {
    GRID_LOOP(i, n * oh * ow * c) {
        SPLIT_OUT(i)
        acc_t best = LOWEST;
        for (long long p = 0; p < kh; ++p) {
            long long row = oy * sh - pt + p;
            if (row < 0 || row >= h) continue;
            for (long long q = 0; q < kw; ++q) {
                long long col = ox * sw - pl + q;
                if (col < 0 || col >= w) continue;
                acc_t v = load(x[b * x0 + row * x1 + col * x2 + ch * x3]);
                if (v > best || v != v) best = v;  /* NaN wins, as numpy's maximum */
            }
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
        for (long long p = 0; p < kh; ++p) {
            long long row = oy * sh - pt + p;
            if (row < 0 || row >= h) continue;
            for (long long q = 0; q < kw; ++q) {
                long long col = ox * sw - pl + q;
                if (col < 0 || col >= w) continue;
                total += load(x[b * x0 + row * x1 + col * x2 + ch * x3]);
            }
        }
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
        for (long long p = 0; p < kh && at < 0; ++p) {
            long long row = oy * sh - pt + p;
            if (row < 0 || row >= h) continue;
            for (long long q = 0; q < kw; ++q) {
                long long col = ox * sw - pl + q;
                if (col < 0 || col >= w) continue;
                if (load(x[b * x0 + row * x1 + col * x2 + ch * x3]) == best) {
                    at = b * dx0 + row * dx1 + col * dx2 + ch * dx3;
                    break;
                }
            }
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


def geometry(in_shape, ksize, strides, padding, data_format):
    """The pooling windows over an NHWC ``in_shape`` (the CPU kernel's attr checks and errors)."""
    return Geometry.from_attrs(in_shape, spatial_params(ksize, data_format, "ksize"), strides, None, padding,
                               data_format)


def check_grad(grad_shape, geo, data_format):
    grad_shape = nhwc_shape(grad_shape, data_format)
    if grad_shape != geo.out_shape:
        raise ValueError(f"grad has shape {list(grad_shape)} (NHWC order), but pooling gives {list(geo.out_shape)}")


def _run(name, dtype, count, arrays_and_formats, geo):
    args = []
    for array, data_format in arrays_and_formats:
        args.append(array)
        args.extend(strides_args(array, data_format))
    cc.launch(cc.function(SOURCE, name, dtype), count, tuple(args) + geo.args())


def _forward(name):
    def pool(x, *, ksize, strides, padding, data_format, xp):
        geo = geometry(nhwc_shape(x.shape, data_format), ksize, strides, padding, data_format)
        y = xp.empty(from_nhwc_shape(geo.out_shape, data_format), dtype=x.dtype)
        _run(name, x.dtype, y.size, [(x, data_format), (y, data_format)], geo)
        return y
    return pool


KERNELS.add("MaxPool", _forward("max_pool"), dtypes=list(cc.FLOATS))
KERNELS.add("AvgPool", _forward("avg_pool"), dtypes=list(cc.FLOATS))


@KERNELS.register("MaxPoolGrad", dtypes=list(cc.FLOATS))
def _max_pool_grad(x, out, grad, *, ksize, strides, padding, data_format, xp):
    geo = geometry(nhwc_shape(x.shape, data_format), ksize, strides, padding, data_format)
    check_grad(grad.shape, geo, data_format)
    dx = xp.zeros(x.shape, dtype=grad.dtype)
    _run("max_pool_grad", x.dtype, grad.size,
         [(x, data_format), (out, data_format), (grad, data_format), (dx, data_format)], geo)
    return dx


@KERNELS.register("AvgPoolGrad", dtypes=list(cc.FLOATS))
def _avg_pool_grad(orig_input_shape, grad, *, ksize, strides, padding, data_format, xp):
    in_shape = nhwc_shape(orig_input_shape, data_format)
    geo = geometry(in_shape, ksize, strides, padding, data_format)
    check_grad(grad.shape, geo, data_format)
    dx = xp.empty(from_nhwc_shape(in_shape, data_format), dtype=grad.dtype)
    _run("avg_pool_grad", grad.dtype, dx.size, [(grad, data_format), (dx, data_format)], geo)
    return dx

