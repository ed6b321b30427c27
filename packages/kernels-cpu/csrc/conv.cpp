// im2col and col2im: the layout halves of a GEMM convolution (the GEMM itself is numpy's BLAS).
//
// A row of the column matrix is one output position (n, i, j); its kh*kw*C entries are the window laid
// out as [kh, kw, C], which multiplies a [kh, kw, in, out] filter reshaped to [kh*kw*in, out].
#include "common.hpp"

namespace tw {
namespace {

// The window offsets dj in [lo, hi) whose column j * sw - pad_left + dj * dw lies inside the image.
struct Run {
    int64_t lo, hi, col0;
};

inline Run valid_columns(const Window& g, int64_t j) {
    const int64_t col0 = j * g.sw - g.pad_left;
    int64_t lo = 0, hi = g.kw;
    while (lo < hi && col0 + lo * g.dw < 0) ++lo;
    while (hi > lo && col0 + (hi - 1) * g.dw >= g.w) --hi;
    return {lo, hi, col0};
}

template <typename T>
py::array im2col_t(const py::array& x, const Window& g) {
    const Strides4 s = element_strides(x);
    const T* src = static_cast<const T*>(x.data());
    const int64_t k = g.kh * g.kw * g.c, rows = g.n * g.out_h * g.out_w, row_len = g.kw * g.c;
    // Rows of the image are runs of contiguous channels: a window row is then one copy.
    const bool runs = s.c == 1 && s.w == g.c && g.dw == 1;
    py::array_t<T> cols({rows, k});
    T* dst = cols.mutable_data();
    py::gil_scoped_release nogil;
    parallel_range(g.n * g.out_h, g.out_w * k, [&](int64_t begin, int64_t end) {
        for (int64_t ni = begin; ni < end; ++ni) {
            const int64_t n = ni / g.out_h, i = ni % g.out_h;
            T* out = dst + ni * g.out_w * k;
            for (int64_t j = 0; j < g.out_w; ++j) {
                const Run run = valid_columns(g, j);
                for (int64_t di = 0; di < g.kh; ++di, out += row_len) {
                    const int64_t r = i * g.sh - g.pad_top + di * g.dh;
                    if (r < 0 || r >= g.h || run.lo >= run.hi) {
                        std::fill_n(out, row_len, T(0));
                        continue;
                    }
                    std::fill_n(out, run.lo * g.c, T(0));
                    std::fill_n(out + run.hi * g.c, (g.kw - run.hi) * g.c, T(0));
                    const T* line = src + n * s.n + r * s.h;
                    if (runs) {
                        const T* p = line + (run.col0 + run.lo) * g.c;
                        T* q = out + run.lo * g.c;
                        for (int64_t e = 0, count = (run.hi - run.lo) * g.c; e < count; ++e) q[e] = p[e];
                        continue;
                    }
                    for (int64_t dj = run.lo; dj < run.hi; ++dj) {
                        const T* p = line + (run.col0 + dj * g.dw) * s.w;
                        T* q = out + dj * g.c;
                        for (int64_t c = 0; c < g.c; ++c) q[c] = p[c * s.c];
                    }
                }
            }
        }
    });
    return std::move(cols);
}

template <typename T>
py::array col2im_t(const py::array& cols, const Window& g) {
    const int64_t k = g.kh * g.kw * g.c, row_len = g.kw * g.c;
    if (cols.ndim() != 2 || cols.shape(0) != g.n * g.out_h * g.out_w || cols.shape(1) != k)
        throw py::value_error("col2im: the column matrix does not match the window geometry");
    const T* src = in_ptr<T>(cols, "col2im", "cols");
    py::array_t<T> image({g.n, g.h, g.w, g.c});
    T* dst = image.mutable_data();
    py::gil_scoped_release nogil;
    parallel_range(g.n, g.h * g.w * g.c + g.out_h * g.out_w * k, [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
            T* img = dst + n * g.h * g.w * g.c;
            std::fill_n(img, g.h * g.w * g.c, T(0));
            const T* in = src + n * g.out_h * g.out_w * k;
            for (int64_t i = 0; i < g.out_h; ++i) {
                for (int64_t j = 0; j < g.out_w; ++j) {
                    const Run run = valid_columns(g, j);
                    for (int64_t di = 0; di < g.kh; ++di, in += row_len) {
                        const int64_t r = i * g.sh - g.pad_top + di * g.dh;
                        if (r < 0 || r >= g.h) continue;
                        T* line = img + r * g.w * g.c;
                        if (g.dw == 1) {
                            T* __restrict q = line + (run.col0 + run.lo) * g.c;
                            const T* __restrict p = in + run.lo * g.c;
                            for (int64_t e = 0, count = (run.hi - run.lo) * g.c; e < count; ++e) q[e] += p[e];
                            continue;
                        }
                        for (int64_t dj = run.lo; dj < run.hi; ++dj) {
                            T* __restrict q = line + (run.col0 + dj * g.dw) * g.c;
                            const T* __restrict p = in + dj * g.c;
                            for (int64_t c = 0; c < g.c; ++c) q[c] += p[c];
                        }
                    }
                }
            }
        }
    });
    return std::move(image);
}

}  // namespace

void register_conv(py::module_& m) {
    m.def("im2col", [](const py::array& x, const py::tuple& geometry) {
        if (x.ndim() != 4) throw py::value_error("im2col: the input must be 4-D (NHWC)");
        const Window g = window_from(geometry);
        return dispatch_float(x, "im2col", [&](auto t) { return im2col_t<decltype(t)>(x, g); });
    }, py::arg("x"), py::arg("geometry"),
       "The [N*out_h*out_w, kh*kw*C] window matrix of an NHWC array (any strides, e.g. a transposed NCHW view).");
    m.def("col2im", [](const py::array& cols, const py::tuple& geometry) {
        const Window g = window_from(geometry);
        return dispatch_float(cols, "col2im", [&](auto t) { return col2im_t<decltype(t)>(cols, g); });
    }, py::arg("cols"), py::arg("geometry"),
       "Sums each row of a window matrix back into the NHWC image it was read from (im2col's adjoint).");
}

}  // namespace tw
