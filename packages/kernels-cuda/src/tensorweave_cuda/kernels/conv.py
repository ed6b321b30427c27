"""GPU kernels for Conv2D and its backward ops: an im2col RawKernel, then one cuBLAS GEMM (``cupy.matmul``).

CuPy 14 exposes no cuDNN binding any more (``cupy.cuda.cudnn`` is gone), so convolution is im2col + GEMM,
as on the CPU: the [N*out_h*out_w, kh*kw*in] patch matrix times the [kh*kw*in, out] filter. The input
gradient is the GEMM's transpose scattered back by col2im, one thread per input element summing the patch
entries that read it (no atomics, so it is deterministic).
"""

from tensorweave.extension import KernelSet

from tensorweave_cpu.kernels.conv import check_out_backprop, conv_windows
from tensorweave_cpu.kernels.sliding_windows import nhwc_shape, to_nhwc
from tensorweave_cuda.kernels import compile as cc
from tensorweave_cuda.kernels.windows import (
    GEOMETRY_PARAMS, from_nhwc_shape, strides_args, strides_params, window_args)

KERNELS = KernelSet("GPU", priority=10)

SOURCE = r"""
#define GRID_LOOP(i, total) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (total); \
                                 i += (long long)gridDim.x * blockDim.x)

/* cols[(b, oy, ox), (p, q, ch)] = x[b, oy*sh - pt + p*dh, ox*sw - pl + q*dw, ch], 0 in the padding. */
extern "C" __global__ void im2col(const scalar_t* x, %(x)s, scalar_t* cols, %(geometry)s) {
    long long width = kh * kw * c;
    GRID_LOOP(i, n * oh * ow * width) {
        long long k = i %% width, r = i / width;
        long long ch = k %% c, q = (k / c) %% kw, p = k / (c * kw);
        long long ox = r %% ow, oy = (r / ow) %% oh, b = r / (ow * oh);
        long long row = oy * sh - pt + p * dh, col = ox * sw - pl + q * dw;
        bool inside = row >= 0 && row < h && col >= 0 && col < w;
        cols[i] = inside ? x[b * x0 + row * x1 + col * x2 + ch * x3] : store((acc_t)0);
    }
}

/* dx[b, row, col, ch] = the sum of every cols entry that im2col read from there. */
extern "C" __global__ void col2im(const scalar_t* cols, scalar_t* dx, %(dx)s, %(geometry)s) {
    long long width = kh * kw * c;
    GRID_LOOP(i, n * h * w * c) {
        long long ch = i %% c, col = (i / c) %% w, row = (i / (c * w)) %% h, b = i / (c * w * h);
        acc_t total = 0;
        for (long long p = 0; p < kh; ++p) {
            long long y = row + pt - p * dh;
            if (y < 0 || y %% sh != 0 || y / sh >= oh) continue;
            for (long long q = 0; q < kw; ++q) {
                long long x = col + pl - q * dw;
                if (x < 0 || x %% sw != 0 || x / sw >= ow) continue;
                long long r = (b * oh + y / sh) * ow + x / sw;
                total += load(cols[r * width + (p * kw + q) * c + ch]);
            }
        }
        dx[b * dx0 + row * dx1 + col * dx2 + ch * dx3] = store(total);
    }
}
""" % {"geometry": GEOMETRY_PARAMS, "x": strides_params("x"), "dx": strides_params("dx")}


def im2col(x, data_format, geo, xp):
    """The [N*out_h*out_w, kh*kw*C] patch matrix of ``x`` (in ``data_format``)."""
    n, _, _, c = geo.in_shape
    cols = xp.empty((n * geo.out_h * geo.out_w, geo.window[0] * geo.window[1] * c), dtype=x.dtype)
    cc.launch(cc.function(SOURCE, "im2col", x.dtype), cols.size, (x,) + strides_args(x, data_format) + (cols,)
              + window_args(geo))
    return cols


def _nhwc_rows(dy, data_format, xp):
    """``dy`` as a contiguous [N*out_h*out_w, out] matrix."""
    if data_format == "NCHW":
        dy = dy.transpose(0, 2, 3, 1)
    return xp.ascontiguousarray(dy).reshape(-1, dy.shape[3])


@KERNELS.register("Conv2D", dtypes=list(cc.FLOATS))
def _conv2d(x, w, *, strides, padding, data_format, dilations, xp, explicit_paddings=()):
    geo = conv_windows(nhwc_shape(x.shape, data_format), w.shape, strides, dilations, padding, data_format,
                       explicit_paddings)
    out_channels = w.shape[3]
    out = xp.matmul(im2col(x, data_format, geo, xp), xp.ascontiguousarray(w).reshape(-1, out_channels))
    out = out.reshape(geo.out_shape[:3] + (out_channels,))
    return out.transpose(0, 3, 1, 2) if data_format == "NCHW" else out


@KERNELS.register("Conv2DBackpropInput", dtypes=list(cc.FLOATS))
def _conv2d_backprop_input(input_sizes, w, dy, *, strides, padding, data_format, dilations, xp,
                           explicit_paddings=()):
    in_shape = nhwc_shape(input_sizes, data_format)
    geo = conv_windows(in_shape, w.shape, strides, dilations, padding, data_format, explicit_paddings)
    out_channels = w.shape[3]
    check_out_backprop(to_nhwc(dy, data_format), geo, out_channels)
    cols = xp.matmul(_nhwc_rows(dy, data_format, xp), xp.ascontiguousarray(w).reshape(-1, out_channels).T)
    dx = xp.empty(from_nhwc_shape(in_shape, data_format), dtype=dy.dtype)
    cc.launch(cc.function(SOURCE, "col2im", dy.dtype), dx.size, (xp.ascontiguousarray(cols), dx)
              + strides_args(dx, data_format) + window_args(geo))
    return dx


@KERNELS.register("Conv2DBackpropFilter", dtypes=list(cc.FLOATS))
def _conv2d_backprop_filter(x, filter_sizes, dy, *, strides, padding, data_format, dilations, xp,
                            explicit_paddings=()):
    filter_shape = tuple(int(d) for d in (filter_sizes.tolist() if hasattr(filter_sizes, "tolist") else filter_sizes))
    geo = conv_windows(nhwc_shape(x.shape, data_format), filter_shape, strides, dilations, padding, data_format,
                       explicit_paddings)
    check_out_backprop(to_nhwc(dy, data_format), geo, filter_shape[3])
    d_filter = xp.matmul(im2col(x, data_format, geo, xp).T, _nhwc_rows(dy, data_format, xp))
    return d_filter.reshape(filter_shape)

